/* test_verify.c - the verification bound: catches wrong, NaN and unwritten elements,
 * and passes the differences that two correct summation orders produce. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../harness/fill.h"
#include "../harness/verify.h"
#include "../common/step.h"

#define M 37
#define N 29
#define K 513

struct problem {
    float a[M * K], b[K * N], c0[M * N];
    float fwd[M * N], rev[M * N], abs_ab[M * N];
};

/* Two correct float results that differ only by rounding: one sums k upwards, the other
 * downwards (cuBLAS and a rung may order the sum any way they like). */
static void make_problem(struct problem *p, float alpha, float beta, uint64_t seed)
{
    struct rng r;
    rng_seed(&r, seed);
    fill_matrix(p->a, M, K, K, 0, &r);
    fill_matrix(p->b, K, N, N, 0, &r);
    fill_matrix(p->c0, M, N, N, 0, &r);
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            float up = 0.0f, down = 0.0f, mag = 0.0f;
            for (int k = 0; k < K; k++) {
                up += p->a[i * K + k] * p->b[k * N + j];
                down += p->a[i * K + (K - 1 - k)] * p->b[(K - 1 - k) * N + j];
                mag += fabsf(p->a[i * K + k]) * fabsf(p->b[k * N + j]);
            }
            p->fwd[i * N + j] = alpha * up + beta * p->c0[i * N + j];
            p->rev[i * N + j] = alpha * down + beta * p->c0[i * N + j];
            p->abs_ab[i * N + j] = mag;
        }
    }
}

static struct problem prob;

static void check(const float *c, float alpha, float beta, struct verify_result *r)
{
    verify_bound(M, N, K, alpha, beta, c, N, prob.rev, N, prob.abs_ab, N, prob.c0, N, 1.0, 0.0,
                 r);
}

static void rounding_differences_pass(void **state)
{
    (void)state;
    static const float scalars[][2] = {{1.0f, 0.0f}, {0.5f, 2.0f}, {-1.25f, 0.0f}, {0.0f, 1.5f}};
    for (int s = 0; s < 4; s++) {
        for (uint64_t seed = 1; seed <= 5; seed++) {
            struct verify_result r;
            make_problem(&prob, scalars[s][0], scalars[s][1], seed);
            check(prob.fwd, scalars[s][0], scalars[s][1], &r);
            assert_true(r.pass);
            assert_int_equal(r.bad, 0);
            assert_int_equal(r.first_i, -1);
            assert_true(r.max_ratio < 1.0);
            assert_true(r.rel_fro < 1e-5);
            /* The two orders really do differ, so the test is not comparing equal arrays. */
            if (scalars[s][0] != 0.0f)
                assert_memory_not_equal(prob.fwd, prob.rev, sizeof prob.fwd);
        }
    }
}

static void one_wrong_element_is_flagged(void **state)
{
    (void)state;
    struct verify_result r;
    make_problem(&prob, 1.0f, 0.0f, 7);
    float c[M * N];
    memcpy(c, prob.fwd, sizeof c);
    /* Off by a few times what rounding can explain: a missing term of the dot product
     * looks like this. */
    c[11 * N + 5] +=
        (float)(4.0 * error_bound(K, 1.0f, 0.0f, prob.abs_ab[11 * N + 5], 0.0f, 1.0, 0.0));
    check(c, 1.0f, 0.0f, &r);
    assert_false(r.pass);
    assert_int_equal(r.bad, 1);
    assert_int_equal(r.first_i, 11);
    assert_int_equal(r.first_j, 5);
}

static void nan_and_unwritten_elements_are_flagged(void **state)
{
    (void)state;
    struct verify_result r;
    make_problem(&prob, 0.5f, 2.0f, 9);
    float c[M * N];
    memcpy(c, prob.fwd, sizeof c);
    c[(M - 1) * N + (N - 1)] = nanf(""); /* the harness poisons C with NaN: unwritten = NaN */
    check(c, 0.5f, 2.0f, &r);
    assert_false(r.pass);
    assert_int_equal(r.first_i, M - 1);
    assert_int_equal(r.first_j, N - 1);
    assert_true(isinf(r.max_abs_err));
    c[(M - 1) * N + (N - 1)] = INFINITY;
    check(c, 0.5f, 2.0f, &r);
    assert_false(r.pass);
}

static void beta_term_must_be_there(void **state)
{
    (void)state;
    struct verify_result r;
    make_problem(&prob, 0.5f, 2.0f, 11);
    float c[M * N];
    for (int i = 0; i < M * N; i++)
        c[i] = prob.fwd[i] - 2.0f * prob.c0[i]; /* forgot beta * C */
    check(c, 0.5f, 2.0f, &r);
    assert_false(r.pass);
    assert_true(r.bad > M * N / 2);
}

static void bound_scales_with_k_and_magnitude(void **state)
{
    (void)state;
    const double small = error_bound(8, 1.0f, 0.0f, 1.0f, 0.0f, 1.0, 0.0);
    const double large = error_bound(8000, 1.0f, 0.0f, 1.0f, 0.0f, 1.0, 0.0);
    assert_true(large > 100 * small);
    assert_true(error_bound(8, 1.0f, 0.0f, 1000.0f, 0.0f, 1.0, 0.0) > 999 * small);
    /* beta's term counts; alpha 0 leaves only it */
    assert_true(error_bound(8, 0.0f, 2.0f, 1.0f, 3.0f, 1.0, 0.0) >
                error_bound(8, 0.0f, 0.0f, 1.0f, 3.0f, 1.0, 0.0));
    /* an exact zero compares equal to zero, nothing more */
    assert_true(error_bound(8, 1.0f, 0.0f, 0.0f, 0.0f, 1.0, 0.0) < 1e-37);
}

/* The TF32 class adds 2^-10 + 2^-22 of |alpha| |A||B|: an error of 2^-11 |A||B| at K = 64 is far
 * outside an SGEMM's bound and inside a TF32 rung's; 2^-9 is outside both. */
static void tf32_bound_adds_a_rounded_product(void **state)
{
    (void)state;
    const double tf32 = verify_product_rel(STEP_TF32);
    assert_true(tf32 == 0x1p-10 + 0x1p-22);
    assert_true(verify_product_rel(STEP_FP32) == 0.0);
    assert_true(error_bound(64, 2.0f, 0.0f, 1.0f, 0.0f, 1.0, 0.0) < 2.0 * 0x1p-11);
    assert_true(error_bound(64, 2.0f, 0.0f, 1.0f, 0.0f, 1.0, tf32) > 2.0 * 0x1p-11);
    assert_true(error_bound(64, 2.0f, 0.0f, 1.0f, 0.0f, 1.0, tf32) < 2.0 * 0x1p-9);
    /* beta's term gains nothing: C0 is not rounded to TF32 */
    assert_true(error_bound(64, 0.0f, 1.0f, 1.0f, 1.0f, 1.0, tf32) ==
                error_bound(64, 0.0f, 1.0f, 1.0f, 1.0f, 1.0, 0.0));
}

static void exact_mode_needs_equality(void **state)
{
    (void)state;
    float ref[6] = {1, -2, 3, 0, 4, -4}, c[6];
    struct verify_result r;
    memcpy(c, ref, sizeof c);
    verify_exact(2, 3, c, 3, ref, 3, &r);
    assert_true(r.pass);
    c[4] = nextafterf(4.0f, 5.0f); /* one ulp off */
    verify_exact(2, 3, c, 3, ref, 3, &r);
    assert_false(r.pass);
    assert_int_equal(r.first_i, 1);
    assert_int_equal(r.first_j, 1);
    c[4] = nanf("");
    verify_exact(2, 3, c, 3, ref, 3, &r);
    assert_false(r.pass);
}

/* With Inf and NaN among the inputs, the class-for-class mode asks for NaN where the
 * reference has NaN, the same infinity, equal finite values; plain exact mode fails any NaN. */
static void exact_mode_matches_inf_and_nan_class_for_class(void **state)
{
    (void)state;
    float ref[4] = {INFINITY, -INFINITY, NAN, 3.0f}, c[4];
    struct verify_result r;
    memcpy(c, ref, sizeof c);
    c[2] = -NAN; /* any NaN */
    verify_exact_classes(1, 4, c, 4, ref, 4, &r);
    assert_true(r.pass);
    c[0] = -INFINITY; /* the wrong infinity */
    verify_exact_classes(1, 4, c, 4, ref, 4, &r);
    assert_false(r.pass);
    c[0] = NAN; /* NaN where the reference is infinite */
    verify_exact_classes(1, 4, c, 4, ref, 4, &r);
    assert_false(r.pass);
    c[0] = INFINITY;
    c[2] = 0.0f; /* a number where the reference is NaN */
    verify_exact_classes(1, 4, c, 4, ref, 4, &r);
    assert_false(r.pass);
    assert_int_equal(r.first_j, 2);
    c[2] = NAN; /* plain exact mode still fails any NaN */
    verify_exact(1, 4, c, 4, ref, 4, &r);
    assert_false(r.pass);
}

/* The planted values make C hold +Inf, -Inf, NaN and finite elements, the same classes
 * whichever order the sum takes (here forward with FMA, and backward with separate roundings). */
static void planted_values_give_every_class(void **state)
{
    (void)state;
    enum { PM = 9, PN = 7, PK = 5 };
    float a[PM * PK], b[PK * PN];
    struct rng r;
    rng_seed(&r, 7);
    fill_matrix(a, PM, PK, PK, 1, &r);
    fill_matrix(b, PK, PN, PN, 1, &r);
    plant_not_finite(a, PM, PK, PK, 0);
    plant_not_finite(b, PK, PN, PN, 1);
    uint32_t payload; /* B's NaN with every payload bit set, at (2 PK / 3, PN / 3) */
    memcpy(&payload, &b[(2 * PK / 3) * PN + PN / 3], sizeof payload);
    assert_int_equal(payload, 0x7fffffffu);
    int pos_inf = 0, neg_inf = 0, nan = 0, finite = 0;
    for (int i = 0; i < PM; i++) {
        for (int j = 0; j < PN; j++) {
            float s = 0.0f, back = 0.0f;
            for (int k = 0; k < PK; k++)
                s = fmaf(a[i * PK + k], b[k * PN + j], s);
            for (int k = PK - 1; k >= 0; k--) {
                const volatile float p = a[i * PK + k] * b[k * PN + j];
                back = back + p;
            }
            assert_true((isnan(s) && isnan(back)) || s == back);
            pos_inf += isinf(s) && s > 0;
            neg_inf += isinf(s) && s < 0;
            nan += isnan(s);
            finite += isfinite(s);
        }
    }
    assert_true(pos_inf > 0 && neg_inf > 0 && nan > 0 && finite > 0);
}

static void strided_comparison_ignores_padding(void **state)
{
    (void)state;
    /* 2 x 2 matrices with ld 3: the third column is padding and may differ. */
    float ref[6] = {1, 2, 99, 3, 4, 99}, c[6] = {1, 2, -7, 3, 4, -7};
    struct verify_result r;
    verify_exact(2, 2, c, 3, ref, 3, &r);
    assert_true(r.pass);
}

static void writes_outside_the_window_are_found(void **state)
{
    (void)state;
    const float s = -1234.5f;
    float buf[4 + 3 * 5 + 4]; /* 4 guard, 3 rows of ld 5 with 4 columns, 4 guard */
    const size_t total = sizeof buf / sizeof buf[0];
    long long first = 0;
    for (size_t i = 0; i < total; i++)
        buf[i] = s;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            buf[4 + i * 5 + j] = (float)(i + j);
    assert_int_equal(count_touched_outside(buf, total, 4, 3, 4, 5, s, &first), 0);
    assert_int_equal(first, -1);
    buf[4 + 1 * 5 + 4] = 0.0f; /* the padding column of row 1 */
    assert_int_equal(count_touched_outside(buf, total, 4, 3, 4, 5, s, &first), 1);
    assert_int_equal(first, 4 + 1 * 5 + 4);
    buf[3] = 1.0f; /* just before the matrix */
    buf[total - 1] = 1.0f; /* the end of the tail guard */
    assert_int_equal(count_touched_outside(buf, total, 4, 3, 4, 5, s, &first), 3);
    assert_int_equal(first, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rounding_differences_pass),
        cmocka_unit_test(one_wrong_element_is_flagged),
        cmocka_unit_test(nan_and_unwritten_elements_are_flagged),
        cmocka_unit_test(beta_term_must_be_there),
        cmocka_unit_test(bound_scales_with_k_and_magnitude),
        cmocka_unit_test(tf32_bound_adds_a_rounded_product),
        cmocka_unit_test(exact_mode_needs_equality),
        cmocka_unit_test(exact_mode_matches_inf_and_nan_class_for_class),
        cmocka_unit_test(planted_values_give_every_class),
        cmocka_unit_test(strided_comparison_ignores_padding),
        cmocka_unit_test(writes_outside_the_window_are_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
