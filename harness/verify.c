/* verify.c - elementwise comparisons of a rung's output with cuBLAS's. */
#include "verify.h"

#include "../common/step.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define UNIT_ROUNDOFF 5.9604644775390625e-8 /* 2^-24, float */

double error_bound(int k, float alpha, float beta, float abs_ab, float c0, double tol,
                   double product_rel)
{
    const double u = UNIT_ROUNDOFF;
    const double ab = fabs((double)alpha) * abs_ab * (1.0 + 2.0 * k * u);
    const double scale = ab + fabs((double)beta) * fabs((double)c0);
    return tol * (2.0 * (k + 3.0) * u * scale + product_rel * ab) + FLT_MIN;
}

static void start(struct verify_result *r)
{
    memset(r, 0, sizeof *r);
    r->first_i = r->first_j = -1;
}

/* Records one element's comparison; `ok` decides pass or fail. */
static void record(struct verify_result *r, int i, int j, float got, float want, int ok,
                   double *sum_d2, double *sum_r2)
{
    const double d = (double)got - want;
    const double ad = isnan(got) ? INFINITY : fabs(d);
    if (ad > r->max_abs_err)
        r->max_abs_err = ad;
    *sum_d2 += isnan(got) ? INFINITY : d * d;
    *sum_r2 += (double)want * want;
    if (!ok) {
        if (r->bad == 0) {
            r->first_i = i;
            r->first_j = j;
            r->got = got;
            r->want = want;
        }
        r->bad++;
    }
}

static void finish(struct verify_result *r, double sum_d2, double sum_r2)
{
    r->rel_fro = sum_r2 > 0.0 ? sqrt(sum_d2 / sum_r2) : sqrt(sum_d2);
    r->pass = (r->bad == 0);
}

/* How compare() judges an element: within the bound, equal, or equal with NaN matching NaN. */
enum mode { BOUND, EXACT, EXACT_CLASSES };

/* One pass over the M x N window; exact mode asks for equality, bound mode for the bound. */
static void compare(int m, int n, int k, float alpha, float beta, const float *c, int ldc,
                    const float *ref, int ldr, const float *abs_ab, int ldab, const float *c0,
                    int ld0, double tol, double product_rel, enum mode mode,
                    struct verify_result *r)
{
    double sum_d2 = 0.0, sum_r2 = 0.0;
    start(r);
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
            const float got = c[(size_t)i * ldc + j];
            const float want = ref[(size_t)i * ldr + j];
            int ok;
            if (mode != BOUND) {
                ok = (got == want) || (mode == EXACT_CLASSES && isnan(got) && isnan(want));
            } else {
                const float c0_ij = (c0 && beta != 0.0f) ? c0[(size_t)i * ld0 + j] : 0.0f;
                const double bound = error_bound(k, alpha, beta, abs_ab[(size_t)i * ldab + j], c0_ij,
                                                 tol, product_rel);
                const double err = fabs((double)got - want);
                ok = !isnan(want) && (err <= bound); /* a NaN makes err <= bound false */
                if (ok && bound > 0.0 && err / bound > r->max_ratio)
                    r->max_ratio = err / bound;
            }
            record(r, i, j, got, want, ok, &sum_d2, &sum_r2);
        }
    }
    finish(r, sum_d2, sum_r2);
}

void verify_bound(int m, int n, int k, float alpha, float beta, const float *c, int ldc,
                  const float *ref, int ldr, const float *abs_ab, int ldab, const float *c0,
                  int ld0, double tol, double product_rel, struct verify_result *r)
{
    compare(m, n, k, alpha, beta, c, ldc, ref, ldr, abs_ab, ldab, c0, ld0, tol, product_rel, BOUND,
            r);
}

void verify_exact(int m, int n, const float *c, int ldc, const float *ref, int ldr,
                  struct verify_result *r)
{
    compare(m, n, 0, 0.0f, 0.0f, c, ldc, ref, ldr, NULL, 0, NULL, 0, 0.0, 0.0, EXACT, r);
}

void verify_exact_classes(int m, int n, const float *c, int ldc, const float *ref, int ldr,
                          struct verify_result *r)
{
    compare(m, n, 0, 0.0f, 0.0f, c, ldc, ref, ldr, NULL, 0, NULL, 0, 0.0, 0.0, EXACT_CLASSES,
            r);
}

long long count_touched_outside(const float *buf, size_t total, size_t offset, int m, int n,
                                int ld, float sentinel, long long *first_bad)
{
    long long touched = 0;
    *first_bad = -1;
    for (size_t p = 0; p < total; p++) {
        int inside = 0;
        if (p >= offset) {
            const size_t q = p - offset;
            const size_t row = q / (size_t)ld, col = q % (size_t)ld;
            inside = row < (size_t)m && col < (size_t)n;
        }
        if (!inside && memcmp(&buf[p], &sentinel, sizeof sentinel) != 0) {
            if (touched == 0)
                *first_bad = (long long)p;
            touched++;
        }
    }
    return touched;
}

double verify_product_rel(int precision)
{
    return precision == STEP_TF32 ? VERIFY_TF32_PRODUCT : 0.0;
}
