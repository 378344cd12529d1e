/* bench.c - one timed point: warm-up, interleaved batches, statistics, verification. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cublas_ref.h"
#include "gpu.h"
#include "verify.h"

#define WARMUP_RUNS 3

struct gemm_ctx {
    const struct step *st;
    cublasHandle_t h;
    int m, n, k, lda, ldb, ldc;
    const float *a, *b;
    float *c;
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

size_t bench_bytes_needed(const struct shape *s)
{
    const size_t mk = (size_t)s->m * s->lda, kn = (size_t)s->k * s->ldb;
    const size_t mn = (size_t)s->m * s->ldc, tight_mn = (size_t)s->m * s->n;
    /* A, B, two C, then |A|, |B| and |A||B| for the bound */
    return sizeof(float) * (2 * mk + 2 * kn + 2 * mn + tight_mn);
}

static float *host_floats(size_t count)
{
    float *p = calloc(count, sizeof(float)); /* padding between rows reads as 0 */
    if (!p)
        gpu_check_cuda(cudaErrorMemoryAllocation, "malloc(host matrix)", __FILE__, __LINE__);
    return p;
}

static float *to_device(const float *host, size_t count)
{
    float *d = gpu_alloc_floats(count);
    CUDA_CHECK(cudaMemcpy(d, host, count * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

/* Compares the rung's C with cuBLAS's under the elementwise bound. */
static void verify_timed(const struct gemm_ctx *rung, const float *c_ref_dev, const float *ha,
                         const float *hb, cublasHandle_t h, struct point_result *res)
{
    const int m = rung->m, n = rung->n, k = rung->k;
    const int lda = rung->lda, ldb = rung->ldb, ldc = rung->ldc;
    const size_t mk = (size_t)m * lda, kn = (size_t)k * ldb, mn = (size_t)m * ldc;
    const size_t tight_mn = (size_t)m * n;
    float *abs_a = host_floats(mk), *abs_b = host_floats(kn);
    for (size_t i = 0; i < mk; i++)
        abs_a[i] = fabsf(ha[i]);
    for (size_t i = 0; i < kn; i++)
        abs_b[i] = fabsf(hb[i]);
    float *d_abs_a = to_device(abs_a, mk), *d_abs_b = to_device(abs_b, kn);
    float *d_abs_ab = gpu_alloc_floats(tight_mn);
    ref_sgemm(h, m, n, k, 1.0f, d_abs_a, lda, d_abs_b, ldb, 0.0f, d_abs_ab, n);

    float *c = host_floats(mn), *ref = host_floats(mn), *abs_ab = host_floats(tight_mn);
    CUDA_CHECK(cudaMemcpy(c, rung->c, mn * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(ref, c_ref_dev, mn * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(abs_ab, d_abs_ab, tight_mn * sizeof(float), cudaMemcpyDeviceToHost));
    struct verify_result r;
    verify_bound(m, n, k, 1.0f, 0.0f, c, ldc, ref, ldc, abs_ab, n, NULL, 0, 1.0, &r);
    res->rel_err = r.rel_fro;
    res->pass = r.pass;
    if (!r.pass)
        fprintf(stderr, "FAIL timed output M=%d N=%d K=%d: %lld wrong elements, first at (%d, %d): "
                "got %.9g, want %.9g\n", m, n, k, r.bad, r.first_i, r.first_j, r.got, r.want);

    free(abs_a);
    free(abs_b);
    free(c);
    free(ref);
    free(abs_ab);
    gpu_free(d_abs_a);
    gpu_free(d_abs_b);
    gpu_free(d_abs_ab);
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
    fill_matrix(ha, m, k, s->lda, 0, rng);
    fill_matrix(hb, k, n, s->ldb, 0, rng);
    float *da = to_device(ha, mk), *db = to_device(hb, kn);
    float *dc = gpu_alloc_floats(mn), *dref = gpu_alloc_floats(mn);
    struct gemm_ctx rung = {st, h, m, n, k, s->lda, s->ldb, s->ldc, da, db, dc};
    struct gemm_ctx blas = {st, h, m, n, k, s->lda, s->ldb, s->ldc, da, db, dref};

    /* Warm-up: module load, cuBLAS's heuristics and clocks out of the numbers. */
    for (int i = 0; i < WARMUP_RUNS; i++) {
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

    verify_timed(&rung, dref, ha, hb, h, res);

    free(ms_rung);
    free(ms_blas);
    free(ha);
    free(hb);
    gpu_free(da);
    gpu_free(db);
    gpu_free(dc);
    gpu_free(dref);
}
