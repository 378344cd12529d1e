/* bench.c - one timed point: warm-up, interleaved batches, statistics, verification. */
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
    /* A, B and two C in float; later, with those freed, A, B and one tight C in double for the
     * FP64 reference: the larger of the two */
    const size_t floats =
        sizeof(float) * (mk + kn + 2 * mn + s->a_off + s->b_off + 2 * (size_t)s->c_off);
    const size_t doubles = sizeof(double) * (mk + kn + tight_mn);
    const size_t most = floats > doubles ? floats : doubles;
    const size_t extra = anchors ? anchors_bytes(s->m, s->n, s->k, s->lda, s->ldb, s->ldc) : 0;
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

/*
 * Exact mode at the timed shape, before the timing: small-integer A, B and C0 with alpha 0.5
 * and beta 2 make every product, sum and scaling exact in float (|sum| <= 4K < 2^24), so the
 * rung must equal cuBLAS bit for bit whatever its summation order; a dropped K tile, a slice
 * counted twice or beta applied twice shows as a wrong integer.  Uses the timed buffers.
 */
static void check_exact(const struct gemm_ctx *rung, float *dref, float *ha, float *hb,
                        struct rng *rng, struct point_result *res)
{
    const int m = rung->m, n = rung->n, k = rung->k;
    const size_t mk = (size_t)m * rung->lda, kn = (size_t)k * rung->ldb, mn = (size_t)m * rung->ldc;
    const float alpha = 0.5f, beta = 2.0f;
    float *c0 = host_floats(mn), *got = host_floats(mn), *want = host_floats(mn);
    fill_matrix(ha, m, k, rung->lda, FILL_SMALL_INTS, rng);
    fill_matrix(hb, k, n, rung->ldb, FILL_SMALL_INTS, rng);
    fill_matrix(c0, m, n, rung->ldc, FILL_SMALL_INTS, rng);
    upload((float *)rung->a, ha, mk);
    upload((float *)rung->b, hb, kn);
    upload(rung->c, c0, mn);
    upload(dref, c0, mn);
    CUDA_CHECK(rung->st->launch(m, n, k, alpha, rung->a, rung->lda, rung->b, rung->ldb, beta,
                                rung->c, rung->ldc, rung->stream));
    ref_sgemm(rung->h, m, n, k, alpha, rung->a, rung->lda, rung->b, rung->ldb, beta, dref,
              rung->ldc);
    CUDA_CHECK(cudaStreamSynchronize(rung->stream));
    CUDA_CHECK(cudaGetLastError());
    download(got, rung->c, mn);
    download(want, dref, mn);
    struct verify_result r;
    verify_exact(m, n, got, rung->ldc, want, rung->ldc, &r);
    res->exact_pass = r.pass;
    if (!r.pass)
        fprintf(stderr, "FAIL exact check M=%d N=%d K=%d (integer inputs, alpha 0.5, beta 2): "
                "%lld wrong elements, first at (%d, %d): got %.9g, want %.9g\n", m, n, k, r.bad,
                r.first_i, r.first_j, r.got, r.want);
    free(c0);
    free(got);
    free(want);
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
 * After the timing, on the timed random inputs (the rung's C and cuBLAS's already on the host,
 * their device buffers freed): the FP64 product C64 = A B and |A||B| by cublasDgemm, then
 *   - the elementwise bound against cuBLAS's C (the `check` column: harness/verify.h);
 *   - the error of the rung, of cuBLAS and of a sequential float loop against C64
 *     (harness/precision.h), and the precision gate on them.
 */
static void verify_timed(cublasHandle_t h, int precision, const struct shape *s, const float *ha,
                         const float *hb, const float *c, const float *ref,
                         const struct anchor *tf32, const struct anchor *x3,
                         struct point_result *res)
{
    const int m = s->m, n = s->n, k = s->k, lda = s->lda, ldb = s->ldb, ldc = s->ldc;
    const size_t mk = (size_t)m * lda, kn = (size_t)k * ldb, tight_mn = (size_t)m * n;
    const size_t staging_count = mk > kn ? mk : kn;

    double *staging = host_alloc(staging_count, sizeof(double));
    double *d_a64 = (double *)gpu_alloc_floats(2 * mk), *d_b64 = (double *)gpu_alloc_floats(2 * kn);
    double *d_c64 = (double *)gpu_alloc_floats(2 * tight_mn);
    double *c64 = host_alloc(tight_mn, sizeof(double)), *abs_ab = host_alloc(tight_mn, sizeof(double));
    to_device_double(d_a64, staging, ha, mk, 0);
    to_device_double(d_b64, staging, hb, kn, 0);
    ref_dgemm(h, m, n, k, d_a64, lda, d_b64, ldb, d_c64, n);
    CUDA_CHECK(cudaMemcpy(c64, d_c64, tight_mn * sizeof(double), cudaMemcpyDeviceToHost));
    to_device_double(d_a64, staging, ha, mk, 1);
    to_device_double(d_b64, staging, hb, kn, 1);
    ref_dgemm(h, m, n, k, d_a64, lda, d_b64, ldb, d_c64, n);
    CUDA_CHECK(cudaMemcpy(abs_ab, d_c64, tight_mn * sizeof(double), cudaMemcpyDeviceToHost));
    free(staging);
    gpu_free(d_a64);
    gpu_free(d_b64);
    gpu_free(d_c64);

    float *abs_ab32 = host_floats(tight_mn);
    for (size_t i = 0; i < tight_mn; i++)
        abs_ab32[i] = (float)abs_ab[i];
    struct verify_result r;
    verify_bound(m, n, k, 1.0f, 0.0f, c, ldc, ref, ldc, abs_ab32, n, NULL, 0, 1.0,
                 verify_product_rel(precision), &r);
    res->rel_err = r.rel_fro;
    res->pass = r.pass;
    if (!r.pass)
        fprintf(stderr, "FAIL timed output M=%d N=%d K=%d: %lld wrong elements, first at (%d, %d): "
                "got %.9g, want %.9g\n", m, n, k, r.bad, r.first_i, r.first_j, r.got, r.want);

    precision_measure(m, n, c, ldc, c64, abs_ab, &res->err);
    precision_measure(m, n, ref, ldc, c64, abs_ab, &res->cublas_err);
    if (tf32 && x3) {
        precision_measure(m, n, tf32->c, ldc, c64, abs_ab, &res->tf32_err);
        precision_measure(m, n, x3->c, ldc, c64, abs_ab, &res->x3_err);
    }
    const int samples = precision_samples(m, n, k);
    const int wi = res->err.worst_i, wj = res->err.worst_j; /* the rung's worst, sampled too */
    precision_sequential(m, n, k, ha, lda, hb, ldb, c64, abs_ab, samples, wi, wj, &res->seq_err);
    struct precision err_sampled;
    precision_sampled(m, n, c, ldc, c64, abs_ab, samples, wi, wj, &err_sampled);
    const double product_rel = verify_product_rel(precision);
    res->precision_pass = precision_gate(product_rel, &res->err, &err_sampled, &res->cublas_err,
                                         &res->seq_err);
    if (!res->precision_pass)
        fprintf(stderr, "FAIL precision M=%d N=%d K=%d: the rung's error against FP64 is %.3g u "
                "max, %.3g rms (cuBLAS %.3g u, %.3g); on %d sampled elements %.3g u, %.3g (a "
                "sequential loop %.3g u, %.3g): over twice the worse reference, plus 2 u and "
                "the %.3g u its precision class allows a product\n", m, n, k, res->err.max_u,
                res->err.rms, res->cublas_err.max_u, res->cublas_err.rms, samples + (wi >= 0),
                err_sampled.max_u, err_sampled.rms, res->seq_err.max_u, res->seq_err.rms,
                product_rel / PRECISION_U);

    free(abs_ab32);
    free(c64);
    free(abs_ab);
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

void bench_point(const struct step *st, const struct shape *s, const struct options *o,
                 struct timer *t, cublasHandle_t h, struct telemetry *tel, struct rng *rng,
                 struct point_result *res)
{
    const int m = s->m, n = s->n, k = s->k;
    const size_t mk = (size_t)m * s->lda, kn = (size_t)k * s->ldb, mn = (size_t)m * s->ldc;
    memset(res, 0, sizeof *res);
    res->m = m;
    res->n = n;
    res->k = k;

    float *ha = host_floats(mk), *hb = host_floats(kn);
    /* Each operand s->x_off floats past the allocation's (aligned) start: --random's shapes
     * give the rung the 4-byte-aligned pointers a caller may pass. */
    float *da = gpu_alloc_floats(mk + s->a_off), *db = gpu_alloc_floats(kn + s->b_off);
    float *dc = gpu_alloc_floats(mn + s->c_off), *dref = gpu_alloc_floats(mn + s->c_off);
    float *a = da + s->a_off, *b = db + s->b_off, *c_rung = dc + s->c_off, *c_ref = dref + s->c_off;
    struct gemm_ctx rung = {st, h, m, n, k, s->lda, s->ldb, s->ldc, a, b, c_rung, t->stream};
    struct gemm_ctx blas = {st, h, m, n, k, s->lda, s->ldb, s->ldc, a, b, c_ref, t->stream};

    check_exact(&rung, c_ref, ha, hb, rng, res);
    /* Then the timed inputs (uniform in [-1, 1), or --inputs spread), alpha 1, beta 0. */
    fill_matrix(ha, m, k, s->lda, o->inputs, rng);
    fill_matrix(hb, k, n, s->ldb, o->inputs, rng);
    upload(a, ha, mk);
    upload(b, hb, kn);

    /* Warm-up: module load, cuBLAS's heuristics and clocks out of the numbers. */
    for (int i = 0; i < TIMING_WARMUP_RUNS; i++) {
        CUDA_CHECK(run_rung(&rung, t->stream));
        CUDA_CHECK(run_cublas(&blas, t->stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(t->stream));
    float est_rung = 0, est_blas = 0;
    timer_batch(t, run_rung, &rung, 1, &est_rung);
    timer_batch(t, run_cublas, &blas, 1, &est_blas);

    int cut = 0, reps = o->reps;
    if (reps == 0)
        reps = replays_within_budget(replay_rule(m, n, k), est_rung > est_blas ? est_rung : est_blas,
                                     o->budget_s, &cut);
    res->reps = reps;
    res->cut_short = cut;

    /* Alternate batches of the rung and cuBLAS so that both see the same clocks and heat. */
    float *ms_rung = host_floats((size_t)reps), *ms_blas = host_floats((size_t)reps);
    int batch = reps / 8;
    batch = batch < 1 ? 1 : (batch > t->capacity ? t->capacity : batch);
    for (int done = 0; done < reps; done += batch) {
        const int count = (reps - done < batch) ? reps - done : batch;
        timer_batch(t, run_rung, &rung, count, ms_rung + done);
        timer_batch(t, run_cublas, &blas, count, ms_blas + done);
    }
    stats_second_half(ms_rung, reps, &res->rung);
    stats_second_half(ms_blas, reps, &res->cublas);
    power_phase(t, run_rung, &rung, res->rung.mean, o->power_s, tel, &res->tel_rung);
    power_phase(t, run_cublas, &blas, res->cublas.mean, o->power_s, tel, &res->tel_cublas);

    /* The outputs to the host and the float buffers freed before the FP64 reference allocates
     * its own: the peak is the larger of the two sets, not their sum (bench_bytes_needed()). */
    float *c = host_floats(mn), *ref = host_floats(mn);
    download(c, c_rung, mn);
    download(ref, c_ref, mn);
    gpu_free(da);
    gpu_free(db);
    gpu_free(dc);
    gpu_free(dref);
    /* The references of Part II, in the memory the rung's buffers left. */
    struct anchor tf32, x3;
    memset(&tf32, 0, sizeof tf32);
    memset(&x3, 0, sizeof x3);
    if (o->anchors_csv) {
        anchors_run(t, m, n, k, s->lda, s->ldb, s->ldc, ha, hb, reps, &tf32, &x3);
        res->has_anchors = 1;
        res->tf32 = tf32.t;
        res->x3 = x3.t;
    }
    verify_timed(h, st->precision, s, ha, hb, c, ref, o->anchors_csv ? &tf32 : NULL,
                 o->anchors_csv ? &x3 : NULL, res);
    free(tf32.c);
    free(x3.c);

    free(c);
    free(ref);
    free(ms_rung);
    free(ms_blas);
    free(ha);
    free(hb);
}
