/* check_cases.h - the correctness check matrix every rung must pass. */
#ifndef HARNESS_CHECK_CASES_H
#define HARNESS_CHECK_CASES_H

enum case_kind {
    CASE_PRODUCT,  /* compare with cuBLAS */
    CASE_NOOP,     /* M or N is 0: C must not change */
    CASE_INVALID,  /* bad arguments: cudaErrorInvalidValue and C must not change */
};

struct check_case {
    enum case_kind kind;
    const char *group;           /* what the case is for, printed on failure */
    int m, n, k;
    int lda_pad, ldb_pad, ldc_pad; /* ld = minimal ld + pad (ld may be made invalid below) */
    int a_off, b_off, c_off;     /* pointer offsets in floats (1 = 4-byte aligned only) */
    float alpha, beta;
    int exact;                   /* small-integer inputs, the result must equal cuBLAS bit for bit */
    int not_finite;              /* exact inputs with +Inf, -Inf and NaN planted in A and B */
    int precision;               /* random inputs, alpha 1, beta 0: the error against an FP64
                                  * product on sampled elements must pass the precision gate
                                  * (harness/precision.h), not only the elementwise bound */
    int bad_lda;                 /* CASE_INVALID: lda one below the minimum */
    int null_a;                  /* CASE_INVALID: A is NULL */
};

/* Fills cases[0..max) and returns how many there are (the matrix is fixed; max must be enough). */
int check_matrix(struct check_case *cases, int max);

/* 1 when a rung must run a kernel for the case: a product with M, N, K > 0 and alpha != 0.
 * The others (K == 0 or alpha == 0: C := beta*C) are settled by the shared prologue
 * (common/sgemm_common.h), so they cover no kernel path. */
int case_reaches_kernel(const struct check_case *c);

#define CHECK_MATRIX_MAX 512

#endif
