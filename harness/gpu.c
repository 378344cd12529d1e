/* gpu.c - opening the device and checked CUDA calls. */
#include "gpu.h"

#include <stdio.h>
#include <stdlib.h>

void gpu_check_cuda(cudaError_t e, const char *what, const char *file, int line)
{
    if (e == cudaSuccess)
        return;
    fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, what, cudaGetErrorString(e),
            cudaGetErrorName(e));
    exit(EXIT_CUDA);
}

void gpu_check_cublas(cublasStatus_t s, const char *what, const char *file, int line)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return;
    fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, what, cublasGetStatusString(s));
    exit(EXIT_CUDA);
}

int gpu_open(int device, struct gpu_info *info, char *err, size_t errlen)
{
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    const int rc = gpu_startup_exit(e, count);
    if (rc != 0) {
        /* Both versions, for a driver older than the runtime; -1 where even that fails. */
        int driver = -1, runtime = -1;
        if (cudaDriverGetVersion(&driver) != cudaSuccess)
            driver = -1;
        if (cudaRuntimeGetVersion(&runtime) != cudaSuccess)
            runtime = -1;
        gpu_startup_message(e, count, driver, runtime, err, errlen);
        return rc;
    }
    if (device >= count) {
        snprintf(err, errlen, "--device %d: only %d CUDA device%s (0..%d)", device, count,
                 count == 1 ? "" : "s", count - 1);
        return EXIT_USAGE;
    }
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    info->cc = 10 * prop.major + prop.minor;
    info->sms = prop.multiProcessorCount;
    info->l2_bytes = (size_t)prop.l2CacheSize;
    size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&info->free_bytes, &total));
    return 0;
}

float *gpu_alloc_floats(size_t count)
{
    void *p = NULL;
    CUDA_CHECK(cudaMalloc(&p, count * sizeof(float)));
    return p;
}

void gpu_free(void *p) { CUDA_CHECK(cudaFree(p)); }
