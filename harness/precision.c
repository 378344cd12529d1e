/* precision.c - errors against an FP64 product, and the gate a rung must pass. */
#include "precision.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* Adds one element: its error relative to |A||B| and its share of the Frobenius norms. */
static int accumulate(double got, int got_nan, double want, double abs_ab, double *max_u,
                      double *sum_d2, double *sum_w2)
{
    const double before = *max_u;
    const double d = got_nan ? INFINITY : fabs(got - want);
    double rel;
    if (d == 0.0)
        rel = 0.0;
    else if (abs_ab > 0.0)
        rel = d / abs_ab / PRECISION_U;
    else
        rel = INFINITY;
    if (!(rel <= *max_u)) /* a NaN ratio counts as the worst */
        *max_u = isnan(rel) ? INFINITY : rel;
    *sum_d2 += d * d;
    *sum_w2 += want * want;
    return *max_u > before; /* a new worst element */
}

static double rms_of(double sum_d2, double sum_w2)
{
    return sum_w2 > 0.0 ? sqrt(sum_d2 / sum_w2) : sqrt(sum_d2);
}

void precision_measure(int m, int n, const float *c, int ldc, const double *c64,
                       const double *abs_ab, struct precision *out)
{
    double max_u = 0.0, sum_d2 = 0.0, sum_w2 = 0.0;
    out->worst_i = out->worst_j = -1;
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
            const float got = c[(size_t)i * ldc + j];
            const size_t e = (size_t)i * n + j;
            if (accumulate(got, isnan(got), c64[e], abs_ab[e], &max_u, &sum_d2, &sum_w2)) {
                out->worst_i = i;
                out->worst_j = j;
            }
        }
    }
    out->max_u = max_u;
    out->rms = rms_of(sum_d2, sum_w2);
}

int precision_samples(int m, int n, int k)
{
    const long long cells = (long long)m * n;
    long long s = 1024;
    if (k > 0 && s * k > (1LL << 26))
        s = (1LL << 26) / k;
    if (s < 64)
        s = 64;
    if (s > cells)
        s = cells;
    return (int)s;
}

/* Sample t of `samples` (+ 1 extra): evenly spread over C in row-major order, the first and the
 * last element included, no element twice (samples <= m x n); t == samples is the extra one. */
static void sample_at(int t, int samples, int m, int n, int extra_i, int extra_j, int *i, int *j)
{
    if (t == samples) {
        *i = extra_i;
        *j = extra_j;
        return;
    }
    const long long cells = (long long)m * n;
    const long long e = samples > 1 ? (long long)t * (cells - 1) / (samples - 1) : 0;
    *i = (int)(e / n);
    *j = (int)(e % n);
}

/* How many elements a sampled pass visits: the spread ones and, when given, the extra one. */
static int visits(int samples, int extra_i) { return samples + (extra_i >= 0 ? 1 : 0); }

/* The operands of a sampled pass: C's element as computed (c), or, with c NULL, the element a
 * sequential float loop over A and B computes. */
struct sample_source {
    const float *c;
    int ldc;
    const float *a, *b;
    int k, lda, ldb;
};

static float sample_value(const struct sample_source *src, int i, int j)
{
    if (src->c != NULL)
        return src->c[(size_t)i * src->ldc + j];
    float acc = 0.0f;
    for (int p = 0; p < src->k; p++)
        acc = fmaf(src->a[(size_t)i * src->lda + p], src->b[(size_t)p * src->ldb + j], acc);
    return acc;
}

static void sampled_figures(const struct sample_source *src, int m, int n, const double *c64,
                            const double *abs_ab, int samples, int extra_i, int extra_j,
                            struct precision *out)
{
    double max_u = 0.0, sum_d2 = 0.0, sum_w2 = 0.0;
    out->worst_i = out->worst_j = -1;
    for (int t = 0; t < visits(samples, extra_i); t++) {
        int i, j;
        sample_at(t, samples, m, n, extra_i, extra_j, &i, &j);
        const float got = sample_value(src, i, j);
        const size_t e = (size_t)i * n + j;
        accumulate(got, isnan(got), c64[e], abs_ab[e], &max_u, &sum_d2, &sum_w2);
    }
    out->max_u = max_u;
    out->rms = rms_of(sum_d2, sum_w2);
}

void precision_sampled(int m, int n, const float *c, int ldc, const double *c64,
                       const double *abs_ab, int samples, int extra_i, int extra_j,
                       struct precision *out)
{
    const struct sample_source src = {c, ldc, NULL, NULL, 0, 0, 0};
    sampled_figures(&src, m, n, c64, abs_ab, samples, extra_i, extra_j, out);
}

void precision_sequential(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                          const double *c64, const double *abs_ab, int samples, int extra_i,
                          int extra_j, struct precision *out)
{
    const struct sample_source src = {NULL, 0, a, b, k, lda, ldb};
    sampled_figures(&src, m, n, c64, abs_ab, samples, extra_i, extra_j, out);
}

/* The max: within twice cuBLAS's plus `slack` over C, or twice the loop's on the samples. */
static int within(double rung, double rung_sampled, double cublas, double seq, double slack)
{
    return rung <= 2.0 * cublas + slack || rung_sampled <= 2.0 * seq + slack;
}

int precision_gate(double product_rel, const struct precision *rung,
                   const struct precision *rung_sampled, const struct precision *cublas,
                   const struct precision *seq)
{
    if (!isfinite(rung->max_u) || !isfinite(rung->rms) || !isfinite(rung_sampled->max_u))
        return 0;
    /* The rms over a sample estimates the rms over C: that figure compares across the sets. */
    const double worse_rms = fmax(cublas->rms, seq->rms);
    return within(rung->max_u, rung_sampled->max_u, cublas->max_u, seq->max_u,
                  2.0 + product_rel / PRECISION_U) &&
           rung->rms <= 2.0 * worse_rms + 2.0 * PRECISION_U + product_rel;
}

void precision_fp64_samples(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                            int samples, double *c64, double *abs_ab)
{
    for (int t = 0; t < samples; t++) {
        int i, j;
        sample_at(t, samples, m, n, -1, -1, &i, &j);
        double sum = 0.0, abs_sum = 0.0;
        for (int p = 0; p < k; p++) {
            const double x = (double)a[(size_t)i * lda + p] * (double)b[(size_t)p * ldb + j];
            sum += x; /* float x float is exact in double; the sum errs by ~k 2^-53 */
            abs_sum += fabs(x);
        }
        c64[(size_t)i * n + j] = sum;
        abs_ab[(size_t)i * n + j] = abs_sum;
    }
}
