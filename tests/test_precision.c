/* test_precision.c - the error figures against FP64 and the precision gate: a correct float
 * sum lands within a few u, a dropped term or a doubled one far outside, NaN is infinite. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../harness/fill.h"
#include "../harness/precision.h"

/* A figure pair without a worst element. */
#define P(x, r) ((struct precision){.max_u = (x), .rms = (r), .worst_i = -1, .worst_j = -1})

#define M 19
#define N 23
#define K 4096

struct problem {
    float a[M * K], b[K * N];
    double c64[M * N], abs_ab[M * N];
    float fwd[M * N]; /* a sequential float loop, k upwards */
};

static struct problem *make_problem(uint64_t seed)
{
    struct problem *p = calloc(1, sizeof *p);
    assert_non_null(p);
    struct rng r;
    rng_seed(&r, seed);
    fill_matrix(p->a, M, K, K, 0, &r);
    fill_matrix(p->b, K, N, N, 0, &r);
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double exact = 0.0, mag = 0.0;
            float acc = 0.0f;
            for (int k = 0; k < K; k++) {
                exact += (double)p->a[i * K + k] * p->b[k * N + j];
                mag += fabs((double)p->a[i * K + k] * p->b[k * N + j]);
                acc = fmaf(p->a[i * K + k], p->b[k * N + j], acc);
            }
            p->c64[i * N + j] = exact;
            p->abs_ab[i * N + j] = mag;
            p->fwd[i * N + j] = acc;
        }
    }
    return p;
}

/* A float loop over K = 4096 is within K u of the exact sum per element, and in practice
 * within a few u; its error is not zero (the figures see rounding). */
static void sequential_loop_is_a_few_u(void **state)
{
    (void)state;
    struct problem *p = make_problem(11);
    struct precision e;
    precision_measure(M, N, p->fwd, N, p->c64, p->abs_ab, &e);
    assert_true(e.max_u > 0.0);
    assert_true(e.max_u < 64.0);
    assert_true(e.rms > 0.0);
    assert_true(e.rms < 1e-5);
    free(p);
}

/* The sampled loop of precision_sequential computes what the loop above does, element for
 * element: sampling every element gives the same figures. */
static void sampled_loop_matches_the_full_loop(void **state)
{
    (void)state;
    struct problem *p = make_problem(12);
    struct precision full, sampled;
    precision_measure(M, N, p->fwd, N, p->c64, p->abs_ab, &full);
    precision_sequential(M, N, K, p->a, K, p->b, N, p->c64, p->abs_ab, M * N, -1, -1, &sampled);
    /* every element once: the same figures as the full pass */
    assert_true(sampled.max_u == full.max_u);
    assert_true(fabs(sampled.rms - full.rms) <= 1e-12 * full.rms);
    free(p);
}

/* A K tile of 8 dropped from one element moves it by ~|8 terms|, thousands of u. */
static void dropped_terms_fail_the_gate(void **state)
{
    (void)state;
    struct problem *p = make_problem(13);
    float *bad = malloc(sizeof p->fwd);
    assert_non_null(bad);
    memcpy(bad, p->fwd, sizeof p->fwd);
    for (int k = K - 8; k < K; k++)
        bad[5 * N + 7] -= p->a[5 * K + k] * p->b[k * N + 7];
    struct precision ok, wrong;
    precision_measure(M, N, p->fwd, N, p->c64, p->abs_ab, &ok);
    precision_measure(M, N, bad, N, p->c64, p->abs_ab, &wrong);
    assert_true(wrong.max_u > 100.0);
    assert_int_equal(wrong.worst_i, 5);
    assert_int_equal(wrong.worst_j, 7);
    /* the gate as the harness runs it: the loop and the rung on the samples plus the worst */
    struct precision seq, seq_w, ok_sampled, wrong_sampled;
    precision_sequential(M, N, K, p->a, K, p->b, N, p->c64, p->abs_ab, 64, ok.worst_i,
                         ok.worst_j, &seq);
    precision_sampled(M, N, p->fwd, N, p->c64, p->abs_ab, 64, ok.worst_i, ok.worst_j,
                      &ok_sampled);
    assert_true(precision_gate(0.0, &ok, &ok_sampled, &ok, &seq));
    precision_sequential(M, N, K, p->a, K, p->b, N, p->c64, p->abs_ab, 64, wrong.worst_i,
                         wrong.worst_j, &seq_w);
    precision_sampled(M, N, bad, N, p->c64, p->abs_ab, 64, wrong.worst_i, wrong.worst_j,
                      &wrong_sampled);
    assert_true(wrong_sampled.max_u == wrong.max_u); /* the bad element was compared */
    assert_false(precision_gate(0.0, &wrong, &wrong_sampled, &ok, &seq_w));
    free(bad);
    free(p);
}

/* The gate: 2x the worse reference plus 2 u, in the max and in the rms, each reference on its
 * own elements: cuBLAS against the rung over all of C, the loop against the rung's samples. */
static void gate_is_twice_the_worse_plus_two_u(void **state)
{
    (void)state;
    const struct precision cublas = P(4.0, 1e-6), seq = P(6.0, 2e-6);
    const struct precision at_limit = P(14.0, 4e-6 + 2 * PRECISION_U);
    const struct precision over_max = P(14.01, 1e-6), over_rms = P(1.0, 4.2e-6);
    assert_true(precision_gate(0.0, &at_limit, &at_limit, &cublas, &seq));
    assert_false(precision_gate(0.0, &over_max, &over_max, &cublas, &seq));
    assert_false(precision_gate(0.0, &over_rms, &over_rms, &cublas, &seq));
    /* within twice cuBLAS over C, though the samples are far off the loop: passes */
    const struct precision all = P(7.9, 1e-6), far = P(20.0, 1e-6);
    assert_true(precision_gate(0.0, &all, &far, &cublas, &seq));
    /* over twice cuBLAS over C, but the samples are within twice the loop: passes */
    const struct precision big = P(20.0, 3e-6), near = P(13.0, 3e-6);
    assert_true(precision_gate(0.0, &big, &near, &cublas, &seq));
    assert_false(precision_gate(0.0, &big, &far, &cublas, &seq));
    /* exact references (0 error) still allow 2 u of rounding */
    const struct precision zero = P(0.0, 0.0), small = P(1.5, 1e-7);
    assert_true(precision_gate(0.0, &small, &small, &zero, &zero));
}

/* A TF32 rung (product_rel 2^-10) may err by 2^-10 |A||B| = 16384 u more in the max, and 2^-10
 * more in the rms, and no further: 475 u (plain TF32 at 4096) passes it and fails FP32. */
static void tf32_class_allows_a_rounded_product(void **state)
{
    (void)state;
    const double tf32 = 0x1p-10;
    const struct precision cublas = P(4.0, 1e-6), seq = P(6.0, 2e-6);
    const struct precision lesson = P(475.0, 3e-4);
    assert_true(precision_gate(tf32, &lesson, &lesson, &cublas, &seq));
    assert_false(precision_gate(0.0, &lesson, &lesson, &cublas, &seq));
    const struct precision at_limit = P(14.0 + 16384.0, 4e-6 + 2 * PRECISION_U + tf32);
    const struct precision over_max = P(14.01 + 16384.0, 1e-6), over_rms = P(1.0, 4.2e-6 + tf32);
    assert_true(precision_gate(tf32, &at_limit, &at_limit, &cublas, &seq));
    assert_false(precision_gate(tf32, &over_max, &over_max, &cublas, &seq));
    assert_false(precision_gate(tf32, &over_rms, &over_rms, &cublas, &seq));
}

/* NaN in the result is infinitely wrong; so is any error where |A||B| is 0. */
static void nan_and_error_on_zero_magnitude_are_infinite(void **state)
{
    (void)state;
    const float c[2] = {NAN, 0.0f};
    const double c64[2] = {1.0, 0.0}, abs_ab[2] = {1.0, 0.0};
    struct precision e;
    precision_measure(1, 2, c, 2, c64, abs_ab, &e);
    assert_true(isinf(e.max_u));
    const float c2[2] = {1.0f, 1e-30f};
    precision_measure(1, 2, c2, 2, c64, abs_ab, &e);
    assert_true(isinf(e.max_u));
    const float c3[2] = {1.0f, 0.0f};
    precision_measure(1, 2, c3, 2, c64, abs_ab, &e);
    assert_true(e.max_u == 0.0 && e.rms == 0.0);
    const struct precision ref = {3.0, 1e-7, -1, -1};
    precision_measure(1, 2, c, 2, c64, abs_ab, &e);
    assert_false(precision_gate(0.0, &e, &e, &ref, &ref));
    /* a NaN in C fails even when cuBLAS's figures are infinite too */
    const struct precision inf = {INFINITY, INFINITY, 0, 0};
    assert_false(precision_gate(0.0, &e, &e, &inf, &inf));
}

/* The spread samples stay in range and include the first and the last element, for shapes
 * that defeat a fixed column stride (n a multiple of 7919) and for one-row and one-column C;
 * all of them when there are no more elements than samples (the rms over all is then exact). */
static void samples_reach_both_ends(void **state)
{
    (void)state;
    static const int shapes[][2] = {{1, 1}, {2, 64}, {7919, 7919}, {3, 15838}, {4096, 4096},
                                    {65536, 3}, {1, 65536}, {30, 30}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int m = shapes[s][0], n = shapes[s][1];
        const size_t cells = (size_t)m * n;
        const int samples = cells < 1024 ? (int)cells : 1024;
        float *c = calloc(cells, sizeof(float));
        double *c64 = calloc(cells, sizeof(double)), *abs_ab = malloc(cells * sizeof(double));
        assert_true(c && c64 && abs_ab);
        for (size_t e = 0; e < cells; e++)
            abs_ab[e] = 1.0;
        struct precision got;
        c[0] = 1.0f;
        precision_sampled(m, n, c, n, c64, abs_ab, samples, -1, -1, &got);
        assert_true(got.max_u > 0.0);
        c[0] = 0.0f;
        c[cells - 1] = 1.0f;
        precision_sampled(m, n, c, n, c64, abs_ab, samples, -1, -1, &got);
        assert_true(got.max_u > 0.0);
        if ((size_t)samples == cells) { /* every element, each once: sum of squares exact */
            for (size_t e = 0; e < cells; e++)
                c[e] = 1.0f;
            precision_sampled(m, n, c, n, c64, abs_ab, samples, -1, -1, &got);
            assert_true(fabs(got.rms * got.rms - (double)cells) < 1e-6 * (double)cells);
        }
        free(c);
        free(c64);
        free(abs_ab);
    }
}

/* 1024 samples, fewer for a long K (at most 2^26 FMAs), never fewer than 64 or than C has. */
/* --inputs spread: every exponent of the range drawn, both signs, nothing outside it. */
static void spread_inputs_cover_the_exponent_range(void **state)
{
    (void)state;
    enum { COUNT = 100000 };
    float *v = malloc(COUNT * sizeof *v);
    assert_non_null(v);
    struct rng r;
    rng_seed(&r, 7);
    fill_matrix(v, 1, COUNT, COUNT, FILL_SPREAD, &r);
    int lo = 1000, hi = -1000, negative = 0;
    for (int i = 0; i < COUNT; i++) {
        int e;
        const float f = frexpf(v[i], &e); /* |f| in [0.5, 1): v = f 2^e, exponent e - 1 */
        assert_true(fabsf(f) >= 0.5f && fabsf(f) < 1.0f);
        lo = e - 1 < lo ? e - 1 : lo;
        hi = e - 1 > hi ? e - 1 : hi;
        negative += v[i] < 0.0f;
    }
    assert_int_equal(lo, FILL_SPREAD_EXP_MIN);
    assert_int_equal(hi, FILL_SPREAD_EXP_MAX);
    assert_in_range(negative, COUNT / 2 - COUNT / 50, COUNT / 2 + COUNT / 50);
    free(v);
}

static void samples_bound_the_host_work(void **state)
{
    (void)state;
    assert_int_equal(precision_samples(4096, 4096, 4096), 1024);
    assert_int_equal(precision_samples(256, 256, 65536), 1024);
    assert_int_equal(precision_samples(256, 256, 262144), 256);
    assert_int_equal(precision_samples(3, 5, 1000003), 15);
    assert_int_equal(precision_samples(4096, 4096, 1 << 24), 64);
}

/* The FP64 reference on the samples: at each visited element the double dot product and the
 * sum of |a b|, the elements not visited left alone. */
static void fp64_samples_are_double_dot_products(void **state)
{
    (void)state;
    enum { m = 9, n = 7, k = 33, lda = 35, ldb = 8 };
    static float a[m * lda], b[k * ldb];
    for (int i = 0; i < m * lda; i++)
        a[i] = (float)((i * 37) % 19 - 9) / 7.0f;
    for (int i = 0; i < k * ldb; i++)
        b[i] = (float)((i * 53) % 23 - 11) / 5.0f;
    double c64[m * n], abs_ab[m * n];
    for (int e = 0; e < m * n; e++)
        c64[e] = abs_ab[e] = -1.0;
    const int samples = 10;
    precision_fp64_samples(m, n, k, a, lda, b, ldb, samples, c64, abs_ab);
    int visited = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            if (c64[i * n + j] == -1.0) {
                assert_true(abs_ab[i * n + j] == -1.0);
                continue;
            }
            double want = 0.0, want_abs = 0.0;
            for (int p = 0; p < k; p++) {
                want += (double)a[i * lda + p] * b[p * ldb + j];
                want_abs += fabs((double)a[i * lda + p] * b[p * ldb + j]);
            }
            assert_true(fabs(c64[i * n + j] - want) <= 1e-12 * want_abs);
            assert_true(fabs(abs_ab[i * n + j] - want_abs) <= 1e-12 * want_abs);
            visited++;
        }
    assert_int_equal(visited, samples);
    assert_true(c64[0] != -1.0 && c64[m * n - 1] != -1.0); /* the first and the last */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sequential_loop_is_a_few_u),
        cmocka_unit_test(sampled_loop_matches_the_full_loop),
        cmocka_unit_test(dropped_terms_fail_the_gate),
        cmocka_unit_test(gate_is_twice_the_worse_plus_two_u),
        cmocka_unit_test(tf32_class_allows_a_rounded_product),
        cmocka_unit_test(fp64_samples_are_double_dot_products),
        cmocka_unit_test(nan_and_error_on_zero_magnitude_are_infinite),
        cmocka_unit_test(samples_bound_the_host_work),
        cmocka_unit_test(samples_reach_both_ends),
        cmocka_unit_test(spread_inputs_cover_the_exponent_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
