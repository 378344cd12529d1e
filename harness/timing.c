/* timing.c - CUDA-event timing of single replays with a cold L2. */
#include "timing.h"

#include <stdlib.h>
#include <string.h>

#include "gpu.h"

void timer_init(struct timer *t, cudaStream_t stream, size_t l2_bytes, int capacity)
{
    memset(t, 0, sizeof *t);
    t->stream = stream;
    t->flush_bytes = 2 * (l2_bytes > 0 ? l2_bytes : (size_t)64 << 20);
    CUDA_CHECK(cudaMalloc(&t->flush, t->flush_bytes));
    t->capacity = capacity;
    t->start = calloc((size_t)capacity, sizeof *t->start);
    t->stop = calloc((size_t)capacity, sizeof *t->stop);
    if (!t->start || !t->stop)
        gpu_check_cuda(cudaErrorMemoryAllocation, "calloc(events)", __FILE__, __LINE__);
    for (int i = 0; i < capacity; i++) {
        CUDA_CHECK(cudaEventCreate(&t->start[i]));
        CUDA_CHECK(cudaEventCreate(&t->stop[i]));
    }
}

void timer_free(struct timer *t)
{
    for (int i = 0; i < t->capacity; i++) {
        CUDA_CHECK(cudaEventDestroy(t->start[i]));
        CUDA_CHECK(cudaEventDestroy(t->stop[i]));
    }
    free(t->start);
    free(t->stop);
    CUDA_CHECK(cudaFree(t->flush));
}

void timer_batch(struct timer *t, gemm_fn fn, void *ctx, int count, float *ms)
{
    for (int i = 0; i < count; i++) {
        /* Writing 2x L2 worth of bytes leaves none of the operands cached. */
        CUDA_CHECK(cudaMemsetAsync(t->flush, i & 0xff, t->flush_bytes, t->stream));
        CUDA_CHECK(cudaEventRecord(t->start[i], t->stream));
        CUDA_CHECK(fn(ctx, t->stream));
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventRecord(t->stop[i], t->stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(t->stream));
    for (int i = 0; i < count; i++)
        CUDA_CHECK(cudaEventElapsedTime(&ms[i], t->start[i], t->stop[i]));
}
