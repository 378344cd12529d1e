/*
 * sgemm_common.h - the few helpers every rung's launcher shares.
 *
 * Each launcher starts with sgemm_prologue(): it rejects invalid arguments
 * and settles the calls that need no product (M == 0, N == 0, K == 0,
 * alpha == 0), so that a rung's kernel only ever sees M, N, K >= 1 and
 * alpha != 0.  Usable from C and CUDA C.
 */
#ifndef SGEMM_LADDER_COMMON_H
#define SGEMM_LADDER_COMMON_H

#include <limits.h>
#include <stdint.h>
#include <cuda_runtime.h>

/* gridDim.y and gridDim.z are at most 65535: launchers put row tiles on y
 * and run taller matrices in slabs of at most this many row tiles. */
#define SGEMM_MAX_GRID_Y 65535

/* The largest M, N or K: a tile index plus a tile width, or a K offset plus a few K
 * steps, must still fit in an int. */
#define SGEMM_MAX_DIM (INT_MAX - 4096)

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Checks the arguments of C := alpha*A*B + beta*C (row-major, see step.h).
 * Returns cudaErrorInvalidValue, launching nothing, when a size is negative or
 * above SGEMM_MAX_DIM, a leading dimension is too small, a pointer needed for
 * the work is NULL or not 4-byte aligned, or an operand spans more than INT_MAX
 * floats (so the kernels may index with int).
 * Otherwise sets *done: 1 when the call is complete (nothing to do, or C was
 * scaled by beta on `stream`; the return value is then that launch's error),
 * 0 when the rung must compute the product, with M, N, K >= 1, alpha != 0.
 */
cudaError_t sgemm_prologue(int M, int N, int K, float alpha, const float *A, int lda,
                           const float *B, int ldb, float beta, float *C, int ldc,
                           cudaStream_t stream, int *done);

/* The compute capability of the current device as 10*major+minor, or -1. */
int sgemm_current_cc(void);

/* 1 when p is aligned to 16 bytes, so float4 loads and stores may use it. */
static inline int sgemm_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/*
 * Names the path a launch took, for the rungs with several (struct step's `paths`): when the
 * environment variable SGEMM_TRACE is set, not empty and not "0" (read once per process, at
 * the first call), prints one line on stderr,
 *     sgemm_trace step=13 path=split-k M=256 N=256 K=4096 blocks=64 slices=8
 * and nothing otherwise. blocks: the thread blocks computing the product (large-split: not its
 * sum kernel); slices: K slices per tile (1: none). Host code, any thread: it never waits for
 * the GPU and allocates nothing. A rung calls it once per launch that computes a product, with
 * the path actually launched (after any fallback); the calls the prologue settles print nothing.
 */
void sgemm_trace(int step, const char *path, int M, int N, int K, long long blocks, int slices);

#ifdef __cplusplus
}
#endif

#endif /* SGEMM_LADDER_COMMON_H */
