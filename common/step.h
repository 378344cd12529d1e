/*
 * step.h - the one contract every rung of the ladder implements.
 *
 * A rung is a file steps/NN_<slug>.cu that exports exactly one symbol,
 *     extern "C" const struct step step_NN;
 * so any set of rungs links into one program beside the C11 harness.
 *
 * Semantics (BLAS-like, but row-major):  C := alpha * A * B + beta * C
 *   A is M x K, element (i, k) at A[i * lda + k], lda >= max(1, K)
 *   B is K x N, element (k, j) at B[k * ldb + j], ldb >= max(1, N)
 *   C is M x N, element (i, j) at C[i * ldc + j], ldc >= max(1, N)
 *
 *   - M == 0 or N == 0: nothing is touched, cudaSuccess.
 *   - K == 0 or alpha == 0: C := beta * C, A and B are never read.
 *   - beta == 0: C is only written, never read (NaN already in C vanishes).
 *   - invalid arguments: cudaErrorInvalidValue, nothing is launched.
 *   - the launch is asynchronous on `stream` and never synchronizes.
 *   - every rung is correct for every valid input; fast paths that need
 *     more (tile multiples, 16-byte alignment) are chosen at launch.
 */
#ifndef SGEMM_LADDER_STEP_H
#define SGEMM_LADDER_STEP_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The accuracy a rung promises, which the harness holds it to (harness/verify.h, precision.h):
 *   STEP_FP32  as accurate as a float sum in any order: the error bound of an SGEMM;
 *   STEP_TF32  every operand rounded to TF32 (10 fraction bits) before its product: the
 *              SGEMM bound plus 2^-10 of |A||B| (the Part II lesson rung that shows why). */
enum step_precision { STEP_FP32 = 0, STEP_TF32 = 1 };

typedef cudaError_t (*sgemm_launch_fn)(int M, int N, int K, float alpha,
                                       const float *A, int lda, const float *B, int ldb,
                                       float beta, float *C, int ldc, cudaStream_t stream);

struct step {
    int number;            /* 1, 2, ... */
    const char *slug;      /* "naive", "coalesced", ... */
    const char *title;     /* one line, for tables and plots */
    int min_cc;            /* lowest compute capability as 10*major+minor, 0 for any */
    sgemm_launch_fn launch;
    /* The paths a launch may take, space-separated ("whole-large whole-small stream-k ..."),
     * each the name sgemm_trace() prints (common/sgemm_common.h) when it is taken; NULL (left
     * out of the initializer) for a rung with one path. In C++ (the rungs) it has a default,
     * so that g++ -Wextra does not warn about the initializers that leave it out. */
#ifdef __cplusplus
    const char *paths = nullptr;
#else
    const char *paths;
#endif
    /* enum step_precision; left out of the initializer: STEP_FP32. */
#ifdef __cplusplus
    int precision = STEP_FP32;
#else
    int precision;
#endif
};

#ifdef __cplusplus
}
#endif

#endif /* SGEMM_LADDER_STEP_H */
