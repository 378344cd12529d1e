/* check.c - runs one check case: the rung and cuBLAS on the same operands, compared on the host. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_cases.h"
#include "cublas_ref.h"
#include "fill.h"
#include "gpu.h"
#include "precision.h"
#include "verify.h"

/* Floats of guard before and after every operand: 256 bytes keep 16-byte alignment. */
#define GUARD 64

/* A matrix inside a buffer with guards: what the host wrote and where the device copy is. */
struct operand {
    float *host;   /* the whole buffer */
    float *dev;
    size_t total;  /* floats in the buffer */
    size_t offset; /* where element (0, 0) is */
    int rows, cols, ld;
};

static float quiet_nan(void) { return nanf(""); }

/* A NaN with its own payload marks C's padding: any write there changes the bits. */
static float c_sentinel(void)
{
    const uint32_t bits = 0x7fa5a5a5u;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(EXIT_CUDA);
    }
    return p;
}

/* Lays out rows x cols (ld) after GUARD + off floats; everything else holds `pad`. */
static void operand_make(struct operand *o, int rows, int cols, int ld, int off, float pad)
{
    const size_t span = (rows > 0 && cols > 0) ? (size_t)(rows - 1) * ld + cols : 0;
    o->rows = rows;
    o->cols = cols;
    o->ld = ld;
    o->offset = GUARD + (size_t)off;
    o->total = o->offset + span + GUARD;
    o->host = xmalloc(o->total * sizeof(float));
    for (size_t i = 0; i < o->total; i++)
        o->host[i] = pad;
    o->dev = gpu_alloc_floats(o->total);
}

static float *at(const struct operand *o) { return o->host + o->offset; }
static float *dev_at(const struct operand *o) { return o->dev + o->offset; }

static void upload(const struct operand *o)
{
    CUDA_CHECK(cudaMemcpy(o->dev, o->host, o->total * sizeof(float), cudaMemcpyHostToDevice));
}

static void download(const struct operand *o, float *dst)
{
    CUDA_CHECK(cudaMemcpy(dst, o->dev, o->total * sizeof(float), cudaMemcpyDeviceToHost));
}

static void operand_free(struct operand *o)
{
    free(o->host);
    gpu_free(o->dev);
}

/* A copy of o with |x| of every matrix element (zero elsewhere), on the device. */
static void operand_abs(const struct operand *o, struct operand *abs_o)
{
    operand_make(abs_o, o->rows, o->cols, o->ld, (int)(o->offset - GUARD), 0.0f);
    for (int i = 0; i < o->rows; i++)
        for (int j = 0; j < o->cols; j++)
            at(abs_o)[(size_t)i * o->ld + j] = fabsf(at(o)[(size_t)i * o->ld + j]);
    upload(abs_o);
}

static int max1(int x) { return x > 1 ? x : 1; }

static void describe(const struct check_case *c, int lda, int ldb, int ldc, char *buf, size_t len)
{
    snprintf(buf, len, "[%s] M=%d N=%d K=%d lda=%d ldb=%d ldc=%d offsets A+%d B+%d C+%d "
             "alpha=%g beta=%g %s", c->group, c->m, c->n, c->k, lda, ldb, ldc, c->a_off, c->b_off,
             c->c_off, c->alpha, c->beta,
             c->not_finite ? "exact integer inputs with Inf and NaN in A and B"
             : c->exact    ? "exact integer inputs"
             : c->precision ? "random inputs, against FP64 too"
                            : "random inputs");
}

/* The precision gate on sampled elements (check_cases.h, `precision`): the rung's C, cuBLAS's
 * (want) and a sequential float loop, each against FP64 dot products of the same inputs, on the
 * same elements. Returns 1 when the rung passes, else 0 with the figures in `why`. */
static int precise_enough(const struct step *st, int m, int n, int k, const float *a, int lda,
                          const float *b, int ldb, const float *c, const float *want, int ldc,
                          char *why, size_t len)
{
    const int samples = precision_samples(m, n, k);
    double *c64 = xmalloc((size_t)m * n * sizeof *c64);
    double *abs_ab = xmalloc((size_t)m * n * sizeof *abs_ab);
    precision_fp64_samples(m, n, k, a, lda, b, ldb, samples, c64, abs_ab);
    struct precision rung, cublas, seq;
    precision_sampled(m, n, c, ldc, c64, abs_ab, samples, -1, -1, &rung);
    precision_sampled(m, n, want, ldc, c64, abs_ab, samples, -1, -1, &cublas);
    precision_sequential(m, n, k, a, lda, b, ldb, c64, abs_ab, samples, -1, -1, &seq);
    const double product_rel = verify_product_rel(st->precision);
    const int ok = precision_gate(product_rel, &rung, &rung, &cublas, &seq);
    if (!ok)
        snprintf(why, len, "error against FP64 on %d sampled elements %.3g u max, %.3g rms; "
                 "cuBLAS %.3g u, %.3g; a sequential loop %.3g u, %.3g: over the precision gate "
                 "(twice the worse reference, plus 2 u%s)", samples, rung.max_u, rung.rms,
                 cublas.max_u, cublas.rms, seq.max_u, seq.rms,
                 product_rel > 0.0 ? " and the 2^-10 of TF32" : "");
    free(c64);
    free(abs_ab);
    return ok;
}

/* Runs one case; returns 1 when it passed.  Prints one line on failure. */
static int run_case(const struct step *st, const struct check_case *c, cublasHandle_t h,
                    cudaStream_t stream, struct rng *rng, int quiet)
{
    /* Invalid cases are laid out as if they were valid, then given a bad argument. */
    const int m = c->m < 0 ? 64 : c->m, n = c->n, k = c->k;
    const int lda = max1(k) + c->lda_pad, ldb = max1(n) + c->ldb_pad, ldc = max1(n) + c->ldc_pad;
    char what[512];
    describe(c, lda, ldb, ldc, what, sizeof what);

    struct operand a, b, cc, ref;
    operand_make(&a, m, k, lda, c->a_off, quiet_nan()); /* reading padding poisons the result */
    operand_make(&b, k, n, ldb, c->b_off, quiet_nan());
    operand_make(&cc, m, n, ldc, c->c_off, c_sentinel());
    operand_make(&ref, m, n, ldc, c->c_off, c_sentinel());
    fill_matrix(at(&a), m, k, lda, c->exact, rng);
    fill_matrix(at(&b), k, n, ldb, c->exact, rng);
    if (c->not_finite) {
        plant_not_finite(at(&a), m, k, lda, 0);
        plant_not_finite(at(&b), k, n, ldb, 1);
    }
    fill_matrix(at(&ref), m, n, ldc, c->exact, rng); /* C0 */
    upload(&a);
    upload(&b);
    upload(&ref);

    /* What the rung gets: C0, or NaN where beta == 0 says C must not be read. */
    memcpy(cc.host, ref.host, cc.total * sizeof(float));
    if (c->beta == 0.0f && c->kind == CASE_PRODUCT)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                at(&cc)[(size_t)i * ldc + j] = quiet_nan();
    upload(&cc);

    float *out = xmalloc(cc.total * sizeof(float));
    float *want = xmalloc(ref.total * sizeof(float));
    int ok = 1;
    char why[512] = "";

    cudaError_t expect = (c->kind == CASE_INVALID) ? cudaErrorInvalidValue : cudaSuccess;
    cudaError_t got = st->launch(c->m, n, k, c->alpha, c->null_a ? NULL : dev_at(&a),
                                 c->bad_lda ? max1(k) - 1 : lda, dev_at(&b), ldb, c->beta,
                                 dev_at(&cc), ldc, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaGetLastError()); /* a fault inside the kernel stops the program here */
    download(&cc, out);

    if (got != expect) {
        ok = 0;
        snprintf(why, sizeof why, "launch returned %s, expected %s", cudaGetErrorName(got),
                 cudaGetErrorName(expect));
    } else if (c->kind != CASE_PRODUCT) {
        if (memcmp(out, cc.host, cc.total * sizeof(float)) != 0) {
            ok = 0;
            snprintf(why, sizeof why, "C was written although the call must touch nothing");
        }
    } else {
        ref_sgemm(h, m, n, k, c->alpha, dev_at(&a), lda, dev_at(&b), ldb, c->beta, dev_at(&ref), ldc);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        download(&ref, want);
        struct verify_result r;
        if (c->not_finite) {
            verify_exact_classes(m, n, out + cc.offset, ldc, want + ref.offset, ldc, &r);
        } else if (c->exact) {
            verify_exact(m, n, out + cc.offset, ldc, want + ref.offset, ldc, &r);
        } else {
            struct operand abs_a, abs_b;
            float *abs_ab_dev = gpu_alloc_floats((size_t)m * n);
            float *abs_ab = xmalloc((size_t)m * n * sizeof(float));
            operand_abs(&a, &abs_a);
            operand_abs(&b, &abs_b);
            ref_sgemm(h, m, n, k, 1.0f, dev_at(&abs_a), lda, dev_at(&abs_b), ldb, 0.0f, abs_ab_dev, n);
            CUDA_CHECK(cudaMemcpy(abs_ab, abs_ab_dev, (size_t)m * n * sizeof(float),
                                  cudaMemcpyDeviceToHost));
            verify_bound(m, n, k, c->alpha, c->beta, out + cc.offset, ldc, want + ref.offset, ldc,
                         abs_ab, n, at(&ref), ldc, 1.0,
                         verify_product_rel(st->precision), &r);
            operand_free(&abs_a);
            operand_free(&abs_b);
            gpu_free(abs_ab_dev);
            free(abs_ab);
        }
        long long first_bad = -1;
        const long long outside =
            count_touched_outside(out, cc.total, cc.offset, m, n, ldc, c_sentinel(), &first_bad);
        if (!r.pass) {
            ok = 0;
            snprintf(why, sizeof why, "%lld wrong element%s, first at (%d, %d): got %.9g, want %.9g; "
                     "max |error| %.3g", r.bad, r.bad == 1 ? "" : "s", r.first_i, r.first_j,
                     r.got, r.want, r.max_abs_err);
        } else if (outside) {
            ok = 0;
            snprintf(why, sizeof why, "%lld float%s outside the M x N window written, first at "
                     "buffer offset %lld", outside, outside == 1 ? "" : "s",
                     first_bad - (long long)cc.offset);
        } else if (c->precision) {
            ok = precise_enough(st, m, n, k, at(&a), lda, at(&b), ldb, out + cc.offset,
                                want + ref.offset, ldc, why, sizeof why);
        }
    }
    if (!ok)
        fprintf(stderr, "FAIL %s: %s\n", what, why);
    else if (!quiet)
        fprintf(stderr, "ok   %s\n", what);

    free(out);
    free(want);
    operand_free(&a);
    operand_free(&b);
    operand_free(&cc);
    operand_free(&ref);
    return ok;
}

int run_check_matrix(const struct step *st, cublasHandle_t h, cudaStream_t stream, uint64_t seed)
{
    static struct check_case cases[CHECK_MATRIX_MAX];
    const int count = check_matrix(cases, CHECK_MATRIX_MAX);
    struct rng rng;
    rng_seed(&rng, seed);
    int failed = 0, kernel = 0, settled = 0;
    for (int i = 0; i < count; i++) {
        failed += !run_case(st, &cases[i], h, stream, &rng, 1);
        kernel += case_reaches_kernel(&cases[i]);
        settled += cases[i].kind == CASE_PRODUCT && !case_reaches_kernel(&cases[i]);
    }
    /* Products that the prologue settles (K == 0 or alpha == 0) are counted apart: they run no
     * kernel, so they cover no path. */
    printf("check matrix: %d cases, %d passed, %d failed (%d ran a kernel, %d settled by the "
           "prologue, %d with no product or bad arguments; seed %llu)\n", count, count - failed,
           failed, kernel, settled, count - kernel - settled, (unsigned long long)seed);
    return failed;
}

int run_shape_checks(const struct step *st, const struct shape *shapes, int nshapes,
                     cublasHandle_t h, cudaStream_t stream, uint64_t seed, int quiet)
{
    static const float scalars[3][2] = {{1.0f, 0.0f}, {0.5f, 2.0f}, {-1.25f, 0.0f}};
    struct rng rng;
    rng_seed(&rng, seed);
    int failed = 0, count = 0;
    for (int s = 0; s < nshapes; s++) {
        for (int p = 0; p < 3; p++) {
            struct check_case c = {0};
            c.kind = CASE_PRODUCT;
            c.group = "given shape";
            c.m = shapes[s].m;
            c.n = shapes[s].n;
            c.k = shapes[s].k;
            c.lda_pad = shapes[s].lda - shapes[s].k;
            c.ldb_pad = shapes[s].ldb - shapes[s].n;
            c.ldc_pad = shapes[s].ldc - shapes[s].n;
            c.a_off = shapes[s].a_off;
            c.b_off = shapes[s].b_off;
            c.c_off = shapes[s].c_off;
            c.alpha = scalars[p][0];
            c.beta = scalars[p][1];
            c.exact = (p == 0);
            failed += !run_case(st, &c, h, stream, &rng, quiet);
            count++;
        }
    }
    printf("shape checks: %d cases, %d passed, %d failed (seed %llu)\n", count, count - failed,
           failed, (unsigned long long)seed);
    return failed;
}
