/* bench.c - one timed point for one or more rungs: exact mode, warm-up, interleaved batches,
 * statistics, verification against cuBLAS and FP64. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cublas_ref.h"
#include "gpu.h"
#include "precision.h"
#include "verify.h"


struct gemm_ctx {
    const struct step *st;
    cublasHandle_t h;
    int m, n, k, lda, ldb, ldc;
    const float *a, *b;
    float *c;
    cudaStream_t stream; /* the timer's; cuBLAS's handle is bound to it */
};

static cudaError_t run_rung(void *p, cudaStream_t stream)
{
    const struct gemm_ctx *g = p;
    return g->st->launch(g->m, g->n, g->k, 1.0f, g->a, g->lda, g->b, g->ldb, 0.0f, g->c, g->ldc,
                         stream);
}

static cudaError_t run_cublas(void *p, cudaStream_t stream)
{
    const struct gemm_ctx *g = p;
    (void)stream; /* the handle is bound to the same stream */
    ref_sgemm(g->h, g->m, g->n, g->k, 1.0f, g->a, g->lda, g->b, g->ldb, 0.0f, g->c, g->ldc);
    return cudaSuccess;
}

size_t bench_bytes_needed(const struct shape *s, int anchors)
{
    const size_t mk = (size_t)s->m * s->lda, kn = (size_t)s->k * s->ldb;
    const size_t mn = (size_t)s->m * s->ldc, tight_mn = (size_t)s->m * s->n;
    /* A, B and two C in float; while they are freed, A, B and one tight C in double for the FP64
     * reference, then the buffers of the anchors: the largest of the three, not their sum */
    const size_t floats =
        sizeof(float) * (mk + kn + 2 * mn + s->a_off + s->b_off + 2 * (size_t)s->c_off);
    const size_t doubles = sizeof(double) * (mk + kn + tight_mn);
    const size_t extra = anchors ? anchors_bytes(s->m, s->n, s->k, s->lda, s->ldb, s->ldc) : 0;
    const size_t most = floats > doubles ? floats : doubles;
    return extra > most ? extra : most;
}

static void *host_alloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size); /* padding between rows reads as 0 */
    if (!p)
        gpu_check_cuda(cudaErrorMemoryAllocation, "calloc(host matrix)", __FILE__, __LINE__);
    return p;
}

static float *host_floats(size_t count) { return host_alloc(count, sizeof(float)); }

static void upload(float *dev, const float *host, size_t count)
{
    CUDA_CHECK(cudaMemcpy(dev, host, count * sizeof(float), cudaMemcpyHostToDevice));
}

static void download(float *host, const float *dev, size_t count)
{
    CUDA_CHECK(cudaMemcpy(host, dev, count * sizeof(float), cudaMemcpyDeviceToHost));
}

/* What one point holds for all its rungs: the operands on both sides, cuBLAS's outputs, the
 * FP64 reference. */
struct point {
    const struct shape *s;
    size_t mk, kn, mn, tight_mn;
    float *ha, *hb;              /* the host operands (integer, then the timed inputs) */
    float *da, *db, *dc, *dref;  /* the allocations; the pointers below are offset into them */
    struct gemm_ctx rung, blas;  /* rung.st is set per rung */
    float *c0, *want;            /* exact mode: C before, cuBLAS's C after */
    float *ref;                  /* cuBLAS's C on the timed inputs */
    double *c64, *abs_ab;        /* FP64: A B and |A||B| (tight, ld n) */
    float *abs_ab32;
};

/* The point's device buffers, each operand s->x_off floats past the allocation's (aligned)
 * start: --random's shapes give the rung the 4-byte-aligned pointers a caller may pass. */
static void device_buffers(struct point *p)
{
    const struct shape *s = p->s;
    p->da = gpu_alloc_floats(p->mk + s->a_off);
    p->db = gpu_alloc_floats(p->kn + s->b_off);
    p->dc = gpu_alloc_floats(p->mn + s->c_off);
    p->dref = gpu_alloc_floats(p->mn + s->c_off);
    p->rung.a = p->blas.a = p->da + s->a_off;
    p->rung.b = p->blas.b = p->db + s->b_off;
    p->rung.c = p->dc + s->c_off;
    p->blas.c = p->dref + s->c_off;
}

/* Frees them (the FP64 reference and the anchors take their memory in turn). */
static void free_device_buffers(struct point *p)
{
    gpu_free(p->da);
    gpu_free(p->db);
    gpu_free(p->dc);
    gpu_free(p->dref);
    p->da = p->db = p->dc = p->dref = NULL;
}

static void point_open(struct point *p, const struct shape *s, struct timer *t, cublasHandle_t h)
{
    memset(p, 0, sizeof *p);
    p->s = s;
    p->mk = (size_t)s->m * s->lda;
    p->kn = (size_t)s->k * s->ldb;
    p->mn = (size_t)s->m * s->ldc;
    p->tight_mn = (size_t)s->m * s->n;
    p->ha = host_floats(p->mk);
    p->hb = host_floats(p->kn);
    const struct gemm_ctx g = {NULL, h, s->m, s->n, s->k, s->lda, s->ldb, s->ldc,
                               NULL, NULL, NULL, t->stream};
    p->rung = g;
    p->blas = g;
    device_buffers(p);
}

/* The host side (the device buffers are freed before the anchors). */
static void point_close(struct point *p)
{
    free(p->ha);
    free(p->hb);
    free(p->c0);
    free(p->want);
    free(p->ref);
    free(p->c64);
    free(p->abs_ab);
    free(p->abs_ab32);
}

/*
 * Exact mode at the timed shape, before the timing: small-integer A, B and C0 with alpha 0.5
 * and beta 2 make every product, sum and scaling exact in float (|sum| <= 4K < 2^24), so a
 * rung must equal cuBLAS bit for bit whatever its summation order; a dropped K tile, a slice
 * counted twice or beta applied twice shows as a wrong integer.  exact_inputs draws them and
 * runs cuBLAS once; check_exact runs one rung on them.
 */
#define EXACT_ALPHA 0.5f
#define EXACT_BETA 2.0f

static void exact_inputs(struct point *p, struct rng *rng)
{
    const struct gemm_ctx *b = &p->blas;
    p->c0 = host_floats(p->mn);
    p->want = host_floats(p->mn);
    fill_matrix(p->ha, b->m, b->k, b->lda, FILL_SMALL_INTS, rng);
    fill_matrix(p->hb, b->k, b->n, b->ldb, FILL_SMALL_INTS, rng);
    fill_matrix(p->c0, b->m, b->n, b->ldc, FILL_SMALL_INTS, rng);
    upload((float *)b->a, p->ha, p->mk);
    upload((float *)b->b, p->hb, p->kn);
    upload(b->c, p->c0, p->mn);
    ref_sgemm(b->h, b->m, b->n, b->k, EXACT_ALPHA, b->a, b->lda, b->b, b->ldb, EXACT_BETA, b->c,
              b->ldc);
    CUDA_CHECK(cudaStreamSynchronize(b->stream));
    download(p->want, b->c, p->mn);
}

static void check_exact(struct point *p, const struct step *st, struct point_result *res)
{
    const struct gemm_ctx *r = &p->rung;
    float *got = host_floats(p->mn);
    upload(r->c, p->c0, p->mn);
    CUDA_CHECK(st->launch(r->m, r->n, r->k, EXACT_ALPHA, r->a, r->lda, r->b, r->ldb, EXACT_BETA,
                          r->c, r->ldc, r->stream));
    CUDA_CHECK(cudaStreamSynchronize(r->stream));
    CUDA_CHECK(cudaGetLastError());
    download(got, r->c, p->mn);
    struct verify_result v;
    verify_exact(r->m, r->n, got, r->ldc, p->want, r->ldc, &v);
    res->exact_pass = v.pass;
    if (!v.pass)
        fprintf(stderr, "FAIL exact check %s M=%d N=%d K=%d (integer inputs, alpha 0.5, beta 2): "
                "%lld wrong elements, first at (%d, %d): got %.9g, want %.9g\n", st->slug, r->m,
                r->n, r->k, v.bad, v.first_i, v.first_j, v.got, v.want);
    free(got);
}

/* Widens a float matrix (ld) to double, |x| when `absolute`, and copies it to dev. */
static void to_device_double(double *dev, double *staging, const float *host, size_t count,
                             int absolute)
{
    for (size_t i = 0; i < count; i++)
        staging[i] = absolute ? fabs((double)host[i]) : (double)host[i];
    CUDA_CHECK(cudaMemcpy(dev, staging, count * sizeof(double), cudaMemcpyHostToDevice));
}

/*
 * The timed inputs (uniform in [-1, 1), or --inputs spread; alpha 1, beta 0), drawn once for
 * every rung of the point: on the device, cuBLAS's output on them (the `check` column's
 * reference), and the FP64 product C64 = A B and |A||B| by cublasDgemm (the precision columns).
 */
static void timed_inputs(struct point *p, int inputs, struct rng *rng)
{
    const struct shape *s = p->s;
    const int m = s->m, n = s->n, k = s->k;
    fill_matrix(p->ha, m, k, s->lda, inputs, rng);
    fill_matrix(p->hb, k, n, s->ldb, inputs, rng);
    upload((float *)p->blas.a, p->ha, p->mk);
    upload((float *)p->blas.b, p->hb, p->kn);
    p->ref = host_floats(p->mn);
    CUDA_CHECK(run_cublas(&p->blas, p->blas.stream));
    CUDA_CHECK(cudaStreamSynchronize(p->blas.stream));
    download(p->ref, p->blas.c, p->mn);
    free_device_buffers(p); /* the FP64 reference in their memory, then they come back */

    const size_t staging_count = p->mk > p->kn ? p->mk : p->kn;
    double *staging = host_alloc(staging_count, sizeof(double));
    double *d_a64 = (double *)gpu_alloc_floats(2 * p->mk);
    double *d_b64 = (double *)gpu_alloc_floats(2 * p->kn);
    double *d_c64 = (double *)gpu_alloc_floats(2 * p->tight_mn);
    p->c64 = host_alloc(p->tight_mn, sizeof(double));
    p->abs_ab = host_alloc(p->tight_mn, sizeof(double));
    to_device_double(d_a64, staging, p->ha, p->mk, 0);
    to_device_double(d_b64, staging, p->hb, p->kn, 0);
    ref_dgemm(p->blas.h, m, n, k, d_a64, s->lda, d_b64, s->ldb, d_c64, n);
    CUDA_CHECK(cudaMemcpy(p->c64, d_c64, p->tight_mn * sizeof(double), cudaMemcpyDeviceToHost));
    to_device_double(d_a64, staging, p->ha, p->mk, 1);
    to_device_double(d_b64, staging, p->hb, p->kn, 1);
    ref_dgemm(p->blas.h, m, n, k, d_a64, s->lda, d_b64, s->ldb, d_c64, n);
    CUDA_CHECK(cudaMemcpy(p->abs_ab, d_c64, p->tight_mn * sizeof(double), cudaMemcpyDeviceToHost));
    free(staging);
    gpu_free(d_a64);
    gpu_free(d_b64);
    gpu_free(d_c64);
    device_buffers(p);
    upload((float *)p->blas.a, p->ha, p->mk);
    upload((float *)p->blas.b, p->hb, p->kn);
    p->abs_ab32 = host_floats(p->tight_mn);
    for (size_t i = 0; i < p->tight_mn; i++)
        p->abs_ab32[i] = (float)p->abs_ab[i];
}

/*
 * After a rung's timing, its output c (on the host) against the point's references:
 *   - the elementwise bound against cuBLAS's C (the `check` column: harness/verify.h);
 *   - the error of the rung, of cuBLAS and of a sequential float loop against C64
 *     (harness/precision.h), and the precision gate on them.
 */
static void verify_timed(const struct point *p, const struct step *st, const float *c,
                         struct point_result *res)
{
    const struct shape *s = p->s;
    const int m = s->m, n = s->n, k = s->k, ldc = s->ldc;
    struct verify_result r;
    verify_bound(m, n, k, 1.0f, 0.0f, c, ldc, p->ref, ldc, p->abs_ab32, n, NULL, 0, 1.0,
                 verify_product_rel(st->precision), &r);
    res->rel_err = r.rel_fro;
    res->pass = r.pass;
    if (!r.pass)
        fprintf(stderr, "FAIL timed output %s M=%d N=%d K=%d: %lld wrong elements, first at (%d, "
                "%d): got %.9g, want %.9g\n", st->slug, m, n, k, r.bad, r.first_i, r.first_j,
                r.got, r.want);

    precision_measure(m, n, c, ldc, p->c64, p->abs_ab, &res->err);
    precision_measure(m, n, p->ref, ldc, p->c64, p->abs_ab, &res->cublas_err);
    const int samples = precision_samples(m, n, k);
    const int wi = res->err.worst_i, wj = res->err.worst_j; /* the rung's worst, sampled too */
    precision_sequential(m, n, k, p->ha, s->lda, p->hb, s->ldb, p->c64, p->abs_ab, samples, wi,
                         wj, &res->seq_err);
    struct precision err_sampled;
    precision_sampled(m, n, c, ldc, p->c64, p->abs_ab, samples, wi, wj, &err_sampled);
    const double product_rel = verify_product_rel(st->precision);
    res->precision_pass = precision_gate(product_rel, &res->err, &err_sampled, &res->cublas_err,
                                         &res->seq_err);
    if (!res->precision_pass)
        fprintf(stderr, "FAIL precision %s M=%d N=%d K=%d: the rung's error against FP64 is "
                "%.3g u max, %.3g rms (cuBLAS %.3g u, %.3g); on %d sampled elements %.3g u, %.3g "
                "(a sequential loop %.3g u, %.3g): over twice the worse reference, plus 2 u and "
                "the %.3g u its precision class allows a product\n", st->slug, m, n, k,
                res->err.max_u, res->err.rms, res->cublas_err.max_u, res->cublas_err.rms,
                samples + (wi >= 0), err_sampled.max_u, err_sampled.rms, res->seq_err.max_u,
                res->seq_err.rms, product_rel / PRECISION_U);
}

/*
 * Clocks and power under sustained load: the timed replays are separated by L2 flushes
 * and synchronizations, so the GPU idles between them and NVML would mostly sample the
 * gaps.  Here the kernel runs back to back for about `seconds`, as in real use, and
 * telemetry_end gives the energy per GEMM: the mean power times the mean time per GEMM
 * of that run (its GPU time by CUDA events, over the launches).
 */
static void power_phase(struct timer *t, gemm_fn fn, void *ctx, double est_ms, double seconds,
                        struct telemetry *tel, struct telemetry_sample *out)
{
    memset(out, 0, sizeof *out);
    if (seconds <= 0.0 || !telemetry_available(tel))
        return;
    double runs = seconds * 1000.0 / (est_ms > 0.001 ? est_ms : 0.001);
    const int n = runs < 3 ? 3 : (runs > 1e6 ? 1000000 : (int)runs);
    float elapsed_ms = 0.0f;
    telemetry_begin(tel);
    CUDA_CHECK(cudaEventRecord(t->start[0], t->stream));
    for (int i = 0; i < n; i++)
        CUDA_CHECK(fn(ctx, t->stream));
    CUDA_CHECK(cudaEventRecord(t->stop[0], t->stream));
    CUDA_CHECK(cudaEventSynchronize(t->stop[0]));
    CUDA_CHECK(cudaEventElapsedTime(&elapsed_ms, t->start[0], t->stop[0]));
    telemetry_end(tel, n, elapsed_ms, out);
}

/* One rung on the timed inputs: its C poisoned (NaN), warm-up, replays of the rung and cuBLAS
 * in alternating batches, the power run, then its output verified. */
static void time_rung(struct point *p, const struct step *st, const struct options *o,
                      struct timer *t, struct telemetry *tel, struct point_result *res)
{
    struct gemm_ctx *rung = &p->rung, *blas = &p->blas;
    rung->st = st;
    CUDA_CHECK(cudaMemsetAsync(p->dc, 0xff, (p->mn + p->s->c_off) * sizeof(float), t->stream));

    /* Warm-up: module load, cuBLAS's heuristics and clocks out of the numbers. */
    for (int i = 0; i < TIMING_WARMUP_RUNS; i++) {
        CUDA_CHECK(run_rung(rung, t->stream));
        CUDA_CHECK(run_cublas(blas, t->stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(t->stream));
    float est_rung = 0, est_blas = 0;
    timer_batch(t, run_rung, rung, 1, &est_rung);
    timer_batch(t, run_cublas, blas, 1, &est_blas);

    int cut = 0, reps = o->reps;
    if (reps == 0)
        reps = replays_within_budget(replay_rule(rung->m, rung->n, rung->k),
                                     est_rung > est_blas ? est_rung : est_blas, o->budget_s, &cut);
    res->reps = reps;
    res->cut_short = cut;

    /* Alternate batches of the rung and cuBLAS so that both see the same clocks and heat. */
    float *ms_rung = host_floats((size_t)reps), *ms_blas = host_floats((size_t)reps);
    int batch = reps / 8;
    batch = batch < 1 ? 1 : (batch > t->capacity ? t->capacity : batch);
    for (int done = 0; done < reps; done += batch) {
        const int count = (reps - done < batch) ? reps - done : batch;
        timer_batch(t, run_rung, rung, count, ms_rung + done);
        timer_batch(t, run_cublas, blas, count, ms_blas + done);
    }
    stats_second_half(ms_rung, reps, &res->rung);
    stats_second_half(ms_blas, reps, &res->cublas);
    power_phase(t, run_rung, rung, res->rung.mean, o->power_s, tel, &res->tel_rung);
    power_phase(t, run_cublas, blas, res->cublas.mean, o->power_s, tel, &res->tel_cublas);
    free(ms_rung);
    free(ms_blas);

    float *c = host_floats(p->mn);
    download(c, rung->c, p->mn);
    verify_timed(p, st, c, res);
    free(c);
}

void bench_point(const struct step *const *rungs, int count, const struct shape *s,
                 const struct options *o, struct timer *t, cublasHandle_t h,
                 struct telemetry *tel, struct rng *rng, struct point_result *res)
{
    struct point p;
    for (int r = 0; r < count; r++) {
        memset(&res[r], 0, sizeof res[r]);
        res[r].m = s->m;
        res[r].n = s->n;
        res[r].k = s->k;
    }
    if (count <= 0)
        return;
    point_open(&p, s, t, h);
    exact_inputs(&p, rng);
    for (int r = 0; r < count; r++)
        check_exact(&p, rungs[r], &res[r]);
    timed_inputs(&p, o->inputs, rng);
    for (int r = 0; r < count; r++)
        time_rung(&p, rungs[r], o, t, tel, &res[r]);

    free_device_buffers(&p);
    /* The references of Part II, once, beside the last rung (its cuBLAS figure the ratio's), in
     * the memory the point's buffers left. */
    if (o->anchors_csv) {
        struct point_result *last = &res[count - 1];
        struct anchor tf32, x3;
        memset(&tf32, 0, sizeof tf32);
        memset(&x3, 0, sizeof x3);
        anchors_run(t, s->m, s->n, s->k, s->lda, s->ldb, s->ldc, p.ha, p.hb, last->reps, &tf32,
                    &x3);
        last->has_anchors = 1;
        last->tf32 = tf32.t;
        last->x3 = x3.t;
        precision_measure(s->m, s->n, tf32.c, s->ldc, p.c64, p.abs_ab, &last->tf32_err);
        precision_measure(s->m, s->n, x3.c, s->ldc, p.c64, p.abs_ab, &last->x3_err);
        free(tf32.c);
        free(x3.c);
    }
    point_close(&p);
}
