/*
 * anchors.h - the tensor-core references Part II is read against (--anchors FILE), timed at
 * each point beside the rung and cuBLAS SGEMM, in the same process:
 *   cuBLAS TF32   cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32: one TF32 product per term,
 *                 the speed of the tensor cores and the error that makes it no SGEMM;
 *   cuBLAS 3xTF32 the error-compensated product composed from three such calls on operands
 *                 split on the host (big = x rounded to TF32, small = x - big):
 *                 C = A_big B_small, C += A_small B_big, C += A_big B_big (the split not
 *                 timed: done once, as a caller that keeps split operands would).
 */
#ifndef HARNESS_ANCHORS_H
#define HARNESS_ANCHORS_H

#include <stddef.h>

#include <cublas_v2.h>

#include "precision.h"
#include "stats.h"
#include "timing.h"

struct anchor {
    struct stats t; /* the timed replays */
    float *c;       /* the product on the host, m x ldc (the caller frees it) */
};

/* Device bytes anchors_run needs at this shape, beside nothing else (the point's buffers are
 * freed before it runs). */
size_t anchors_bytes(int m, int n, int k, int lda, int ldb, int ldc);

/* Times cuBLAS TF32 and the composed 3xTF32 on ha (m x k, lda) and hb (k x n, ldb), alpha 1,
 * beta 0, `reps` replays each after a warm-up, on the timer's stream; fills *tf32 and *x3. */
void anchors_run(struct timer *t, int m, int n, int k, int lda, int ldb, int ldc,
                 const float *ha, const float *hb, int reps, struct anchor *tf32,
                 struct anchor *x3);

#endif
