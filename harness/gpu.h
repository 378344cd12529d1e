/* gpu.h - the device: opening it, checked CUDA and cuBLAS calls, buffers. */
#ifndef HARNESS_GPU_H
#define HARNESS_GPU_H

#include <stddef.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "gpu_startup.h" /* the exit codes, the start-up messages */

/* Every CUDA and cuBLAS call goes through these: on error, one line on stderr and exit 3. */
#define CUDA_CHECK(call) gpu_check_cuda((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) gpu_check_cublas((call), #call, __FILE__, __LINE__)
void gpu_check_cuda(cudaError_t e, const char *what, const char *file, int line);
void gpu_check_cublas(cublasStatus_t s, const char *what, const char *file, int line);

struct gpu_info {
    char name[256];
    int cc;           /* 10*major + minor */
    int sms;          /* multiprocessors */
    size_t l2_bytes;  /* L2 cache size */
    size_t free_bytes;
};

/* Selects `device` and fills *info.  Returns 0, or an exit code with one line in err:
 * EXIT_UNSUPPORTED only when there is no CUDA device, EXIT_CUDA when CUDA does not start
 * (a driver older than the runtime among others), EXIT_USAGE for a device number past the
 * last device. */
int gpu_open(int device, struct gpu_info *info, char *err, size_t errlen);

/* cudaMalloc, checked. */
float *gpu_alloc_floats(size_t count);
void gpu_free(void *p);

#endif
