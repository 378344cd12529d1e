/*
 * sgemm_common.cu - argument checks and the beta-only path shared by every rung, and the
 * launch trace of the rungs with several paths.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sgemm_common.h"

/* Elements an operand of `rows` x `cols` with leading dimension `ld` spans. */
static long long span(int rows, int cols, int ld) { return (long long)(rows - 1) * ld + cols; }

static int misaligned(const void *p) { return ((uintptr_t)p & 3u) != 0; }

/* C := beta * C over an M x N window; beta == 0 writes zeros without reading C. */
static __global__ void scale_c_kernel(int M, int N, float beta, float *C, int ldc)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= N)
        return;
    for (int row = blockIdx.y; row < M; row += gridDim.y) {
        float *c = &C[(long long)row * ldc + col];
        *c = (beta == 0.0f) ? 0.0f : beta * *c;
    }
}

extern "C" cudaError_t sgemm_prologue(int M, int N, int K, float alpha, const float *A, int lda,
                                      const float *B, int ldb, float beta, float *C, int ldc,
                                      cudaStream_t stream, int *done)
{
    *done = 1;
    if (M < 0 || N < 0 || K < 0 || M > SGEMM_MAX_DIM || N > SGEMM_MAX_DIM || K > SGEMM_MAX_DIM)
        return cudaErrorInvalidValue;
    if (lda < (K > 1 ? K : 1) || ldb < (N > 1 ? N : 1) || ldc < (N > 1 ? N : 1))
        return cudaErrorInvalidValue;
    if (M == 0 || N == 0)
        return cudaSuccess;

    const int need_ab = (K > 0 && alpha != 0.0f);
    if (C == NULL || misaligned(C) || span(M, N, ldc) > INT_MAX)
        return cudaErrorInvalidValue;
    if (need_ab) {
        if (A == NULL || B == NULL || misaligned(A) || misaligned(B))
            return cudaErrorInvalidValue;
        if (span(M, K, lda) > INT_MAX || span(K, N, ldb) > INT_MAX)
            return cudaErrorInvalidValue;
    }
    if (!need_ab) {
        if (beta == 1.0f)
            return cudaSuccess; /* C := 1 * C: nothing to write */
        const int threads = 128;
        dim3 grid((unsigned)((N + threads - 1) / threads),
                  (unsigned)(M < SGEMM_MAX_GRID_Y ? M : SGEMM_MAX_GRID_Y));
        scale_c_kernel<<<grid, threads, 0, stream>>>(M, N, beta, C, ldc);
        return cudaGetLastError();
    }
    *done = 0;
    return cudaSuccess;
}

extern "C" int sgemm_current_cc(void)
{
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
        return -1;
    return 10 * major + minor;
}

/* SGEMM_TRACE, read once: pthread_once makes the first callers, on any threads, wait for
 * the one read, and every later call sees its result. */
static pthread_once_t trace_once = PTHREAD_ONCE_INIT;
static int trace_on;

static void trace_read_env(void)
{
    const char *v = getenv("SGEMM_TRACE");
    trace_on = (v != NULL && v[0] != '\0' && strcmp(v, "0") != 0);
}

extern "C" void sgemm_trace(int step, const char *path, int M, int N, int K, long long blocks,
                            int slices)
{
    if (pthread_once(&trace_once, trace_read_env) != 0 || !trace_on)
        return;
    /* One line, formatted first and written by one call: lines from several threads never mix. */
    char line[192];
    snprintf(line, sizeof line,
             "sgemm_trace step=%d path=%s M=%d N=%d K=%d blocks=%lld slices=%d\n", step, path, M,
             N, K, blocks, slices);
    fputs(line, stderr);
}
