/* precision.h - how far a float result is from the exact product, measured against FP64. */
#ifndef HARNESS_PRECISION_H
#define HARNESS_PRECISION_H

#define PRECISION_U 5.9604644775390625e-8 /* u = 2^-24, the unit roundoff of float */

/*
 * Two figures of the error of c against c64, the same product computed in FP64 from the same
 * float inputs (exact to ~2^-53 relative, so it stands for the exact product):
 *   max_u  max over (i, j) of |c - c64| / (|A||B|)_ij, in units of u: the error per unit of
 *          the sum's magnitude, which is what the summation order moves (a sequential sum of
 *          K terms is bounded by K u, and typically sits near sqrt(K) u);
 *   rms    ||c - c64||_F / ||c64||_F over the same elements.
 * A NaN in c, or an error where (|A||B|)_ij is 0, is infinite.
 */
struct precision {
    double max_u, rms;
    int worst_i, worst_j; /* where max_u is (precision_measure; -1 when no element errs) */
};

/* c (ldc) against c64 and abs_ab (both m x n, tightly packed). */
void precision_measure(int m, int n, const float *c, int ldc, const double *c64,
                       const double *abs_ab, struct precision *out);

/*
 * The same figures for a plain sequential float loop, acc = fmaf(A[i][k], B[k][j], acc) for
 * k = 0..K-1, on `samples` elements spread evenly over C in row-major order (the first and the
 * last included), plus the element (extra_i, extra_j) when extra_i >= 0: the rung's worst, so
 * that an error confined to a few elements is always among the compared ones. The error of
 * the simplest correct SGEMM, at a cost of (samples + 1) x K FMAs on the host. alpha 1, beta 0.
 */
void precision_sequential(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                          const double *c64, const double *abs_ab, int samples, int extra_i,
                          int extra_j, struct precision *out);

/* The same figures for c on the elements precision_sequential samples (the same `samples` and
 * extra element): the rung measured where the loop was, so that the two compare like with
 * like. */
void precision_sampled(int m, int n, const float *c, int ldc, const double *c64,
                       const double *abs_ab, int samples, int extra_i, int extra_j,
                       struct precision *out);

/* The FP64 product (c64) and |A||B| (abs_ab), both m x n, at the `samples` elements the
 * functions above visit (no extra element), by dot products in double on the host: what the
 * check matrix compares with where no FP64 GEMM ran. Other elements are left as they were. */
void precision_fp64_samples(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                            int samples, double *c64, double *abs_ab);

/* How many elements precision_sequential samples for a K: 1024, fewer when K is so long that
 * 1024 x K would pass 2^26 FMAs, never fewer than 64 (nor more than m x n). */
int precision_samples(int m, int n, int k);

/*
 * The precision gate: a rung fails when its error exceeds twice the worse of cuBLAS's and
 * the sequential loop's, plus 2 u, in either figure. The max is compared on the same
 * elements: the rung over all of C against cuBLAS over all of C, and the rung on the sampled
 * elements (rung_sampled) against the loop on them (the largest of 1024 errors sits well
 * below the largest of millions); the rms over the samples estimates the loop's rms over C:
 *   max_u:  rung <= 2 cublas + 2   or   rung_sampled <= 2 seq + 2
 *   rms:    rung <= 2 max(cublas, seq) + 2u
 * The samples include the rung's worst element, so its largest error is always compared with
 * the loop's at the same place. A rung figure that is not finite (a NaN or Inf in C) fails.
 * Returns 1 when both pass. product_rel (harness/verify.h: 0 for a rung of STEP_FP32,
 * VERIFY_TF32_PRODUCT for STEP_TF32) is added to both allowances: a TF32 rung may err by up
 * to 2^-10 of |A||B| more, and that is all it may add.
 */
int precision_gate(double product_rel, const struct precision *rung,
                   const struct precision *rung_sampled, const struct precision *cublas,
                   const struct precision *seq);

#endif
