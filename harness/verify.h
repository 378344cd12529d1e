/* verify.h - is a rung's C right?  Host-side comparisons against cuBLAS. */
#ifndef HARNESS_VERIFY_H
#define HARNESS_VERIFY_H

#include <stddef.h>

struct verify_result {
    int pass;
    long long bad;        /* elements outside the bound (or not equal, in exact mode) */
    int first_i, first_j; /* the first failing element in row-major order, -1 if none */
    float got, want;      /* its values */
    double max_abs_err;   /* max |c - ref| over all elements (inf when any c is NaN) */
    double max_ratio;     /* max |c - ref| / bound (bound mode), how close to failing */
    double rel_fro;       /* ||c - ref||_F / ||ref||_F */
};

/*
 * The elementwise bound on |c - ref| when both c and ref compute
 * alpha * (A B)_ij + beta * C0_ij in float with any summation order.
 * Each dot product of length K carries at most gamma_K ~ K*u of relative
 * error in |A||B| (Higham, Accuracy and Stability, 3.1), the alpha scaling,
 * the beta term and the final add three more roundings; two such results
 * differ by at most twice that.  |A||B| itself comes from cuBLAS, with the
 * same gamma_K relative error, hence the (1 + 2Ku) factor.
 *     ab    = |alpha| (|A||B|)_ij (1 + 2 K u)
 *     bound = tol (2 (K + 3) u (ab + |beta| |C0_ij|) + product_rel ab)
 * with u = 2^-24, plus the smallest normal float, so that exact zeros compare. product_rel is
 * what a rung loses before it sums: 0 for a float product (a rung of STEP_FP32, struct step),
 * VERIFY_TF32_PRODUCT where every operand is rounded to TF32 first (STEP_TF32): an operand
 * moves by at most 2^-11 of itself, so a product by at most 2^-10 + 2^-22 of |a||b|.
 */
#define VERIFY_TF32_PRODUCT (0x1p-10 + 0x1p-22)
double error_bound(int k, float alpha, float beta, float abs_ab, float c0, double tol,
                   double product_rel);

/* product_rel for a rung of precision class `precision` (enum step_precision, common/step.h). */
double verify_product_rel(int precision);

/* Bound mode: c (ldc) against ref (ldr), with |A||B| (ldab) and C0 (ld0, NULL if beta == 0). */
void verify_bound(int m, int n, int k, float alpha, float beta, const float *c, int ldc,
                  const float *ref, int ldr, const float *abs_ab, int ldab, const float *c0,
                  int ld0, double tol, double product_rel, struct verify_result *r);

/* Exact mode: integer inputs make every product and sum exact, so c must equal ref (a NaN
 * anywhere fails). */
void verify_exact(int m, int n, const float *c, int ldc, const float *ref, int ldr,
                  struct verify_result *r);

/* Exact mode with Inf and NaN among the inputs: the same number, the same infinity, or a NaN
 * where ref has a NaN. */
void verify_exact_classes(int m, int n, const float *c, int ldc, const float *ref, int ldr,
                          struct verify_result *r);

/*
 * Writes outside the matrix: buf holds `total` floats, the matrix starts at
 * `offset` with m rows of n columns, ld apart; every other float must still
 * hold the bit pattern of `sentinel`.  Returns how many do not, and the index
 * of the first in *first_bad (-1 if none).
 */
long long count_touched_outside(const float *buf, size_t total, size_t offset, int m, int n,
                                int ld, float sentinel, long long *first_bad);

#endif
