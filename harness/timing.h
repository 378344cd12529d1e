/* timing.h - replays timed with CUDA events, the L2 flushed before each. */
#ifndef HARNESS_TIMING_H
#define HARNESS_TIMING_H

#include <stddef.h>
#include <cuda_runtime.h>


/* Untimed runs of each kernel before its timed replays (module load, heuristics, clocks). */
#define TIMING_WARMUP_RUNS 3

/* Launches one GEMM on `stream`; returns its launch error. */
typedef cudaError_t (*gemm_fn)(void *ctx, cudaStream_t stream);

struct timer {
    cudaStream_t stream;
    void *flush;        /* memset before each replay evicts A, B and C from L2 */
    size_t flush_bytes; /* twice the L2 size */
    cudaEvent_t *start, *stop;
    int capacity;       /* events available: the largest batch */
};

void timer_init(struct timer *t, cudaStream_t stream, size_t l2_bytes, int capacity);
void timer_free(struct timer *t);

/* Runs fn `count` times (count <= capacity), each replay timed alone after an L2
 * flush; writes the milliseconds to ms[0..count). */
void timer_batch(struct timer *t, gemm_fn fn, void *ctx, int count, float *ms);

#endif
