/* anchors.c - cuBLAS TF32 and 3xTF32 composed from cuBLAS, timed as references. */
#include "anchors.h"

#include <stdlib.h>

#include "gpu.h"
#include "split.h"

/* C := alpha A B + beta C, row-major, on TF32 tensor cores (the operand order of ref_sgemm:
 * cuBLAS computes the column-major C^T = B^T A^T). FAST_TF32 asks for TF32 explicitly; a
 * math mode would only allow it. */
static void gemm_tf32(cublasHandle_t h, int m, int n, int k, float alpha, const float *A,
                      int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, B, CUDA_R_32F, ldb, A,
                              CUDA_R_32F, lda, &beta, C, CUDA_R_32F, ldc,
                              CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

struct operands {
    cublasHandle_t h; /* on the timer's stream */
    int m, n, k, lda, ldb, ldc;
    const float *a, *b, *a_big, *a_small, *b_big, *b_small;
    float *c;
};

static cudaError_t run_tf32(void *p, cudaStream_t stream)
{
    const struct operands *o = p;
    (void)stream; /* the handle is bound to it */
    gemm_tf32(o->h, o->m, o->n, o->k, 1.0f, o->a, o->lda, o->b, o->ldb, 0.0f, o->c, o->ldc);
    return cudaSuccess;
}

static cudaError_t run_x3(void *p, cudaStream_t stream)
{
    const struct operands *o = p;
    (void)stream;
    /* the small terms first, so that the largest is added last */
    gemm_tf32(o->h, o->m, o->n, o->k, 1.0f, o->a_big, o->lda, o->b_small, o->ldb, 0.0f, o->c,
              o->ldc);
    gemm_tf32(o->h, o->m, o->n, o->k, 1.0f, o->a_small, o->lda, o->b_big, o->ldb, 1.0f, o->c,
              o->ldc);
    gemm_tf32(o->h, o->m, o->n, o->k, 1.0f, o->a_big, o->lda, o->b_big, o->ldb, 1.0f, o->c,
              o->ldc);
    return cudaSuccess;
}

size_t anchors_bytes(int m, int n, int k, int lda, int ldb, int ldc)
{
    (void)n; /* C's rows are ldc long */
    const size_t mk = (size_t)m * lda, kn = (size_t)k * ldb, mn = (size_t)m * ldc;
    return sizeof(float) * (3 * mk + 3 * kn + mn);
}

static float *upload_new(const float *host, size_t count)
{
    float *d = gpu_alloc_floats(count);
    CUDA_CHECK(cudaMemcpy(d, host, count * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

/* Warm-up, then `reps` replays in batches of at most the timer's capacity; the product to
 * the host. */
static void time_one(struct timer *t, gemm_fn fn, struct operands *o, int reps, size_t mn,
                     struct anchor *out)
{
    for (int i = 0; i < TIMING_WARMUP_RUNS; i++)
        CUDA_CHECK(fn(o, t->stream));
    CUDA_CHECK(cudaStreamSynchronize(t->stream));
    float *ms = calloc((size_t)reps, sizeof *ms);
    if (!ms)
        gpu_check_cuda(cudaErrorMemoryAllocation, "calloc(anchor times)", __FILE__, __LINE__);
    for (int done = 0; done < reps;) {
        const int count = reps - done < t->capacity ? reps - done : t->capacity;
        timer_batch(t, fn, o, count, ms + done);
        done += count;
    }
    stats_second_half(ms, reps, &out->t);
    free(ms);
    out->c = calloc(mn ? mn : 1, sizeof(float));
    if (!out->c)
        gpu_check_cuda(cudaErrorMemoryAllocation, "calloc(anchor C)", __FILE__, __LINE__);
    CUDA_CHECK(cudaMemcpy(out->c, o->c, mn * sizeof(float), cudaMemcpyDeviceToHost));
}

void anchors_run(struct timer *t, int m, int n, int k, int lda, int ldb, int ldc,
                 const float *ha, const float *hb, int reps, struct anchor *tf32,
                 struct anchor *x3)
{
    const size_t mk = (size_t)m * lda, kn = (size_t)k * ldb, mn = (size_t)m * ldc;
    float *big = calloc(mk > kn ? mk : kn, sizeof(float));
    float *small = calloc(mk > kn ? mk : kn, sizeof(float));
    if (!big || !small)
        gpu_check_cuda(cudaErrorMemoryAllocation, "calloc(split operands)", __FILE__, __LINE__);
    struct operands o = {NULL, m, n, k, lda, ldb, ldc, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    o.a = upload_new(ha, mk);
    o.b = upload_new(hb, kn);
    tf32_split(ha, mk, big, small);
    o.a_big = upload_new(big, mk);
    o.a_small = upload_new(small, mk);
    tf32_split(hb, kn, big, small);
    o.b_big = upload_new(big, kn);
    o.b_small = upload_new(small, kn);
    free(big);
    free(small);
    o.c = gpu_alloc_floats(mn);
    CUBLAS_CHECK(cublasCreate(&o.h));
    CUBLAS_CHECK(cublasSetStream(o.h, t->stream));
    CUBLAS_CHECK(cublasSetPointerMode(o.h, CUBLAS_POINTER_MODE_HOST));

    time_one(t, run_tf32, &o, reps, mn, tf32);
    time_one(t, run_x3, &o, reps, mn, x3);

    CUBLAS_CHECK(cublasDestroy(o.h));
    gpu_free((void *)o.a);
    gpu_free((void *)o.b);
    gpu_free((void *)o.a_big);
    gpu_free((void *)o.a_small);
    gpu_free((void *)o.b_big);
    gpu_free((void *)o.b_small);
    gpu_free(o.c);
}
