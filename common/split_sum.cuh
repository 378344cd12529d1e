/*
 * split_sum.cuh - what the tensor-core rungs' split-K (22-27) shares, whatever computes the
 * slices: sum_slices(), which adds each element's slices in slice order (the same floats
 * whichever block ran first), then alpha and beta; launch_sum_slices(). The plan of the cut,
 * split_slices(), is host code in split_plan.h. C tiles of SPLIT_TILE x SPLIT_TILE.
 */
#ifndef SGEMM_LADDER_SPLIT_SUM_CUH
#define SGEMM_LADDER_SPLIT_SUM_CUH

#include <math.h> /* isfinite */

#include "split_plan.h"       /* SPLIT_TILE, split_slices */
#include "sequential_dot.cuh" /* for a sum that is not finite */

#define SUM_ROWS 8 /* sum_slices() blocks are 32 x SUM_ROWS */

/* Split-K's second half: C = alpha (the slices' partial sums, added in slice order) + beta C,
 * one thread per element of C; a sum that is not finite recomputed by sequential_dot(). The
 * workspace holds `slices` raw SPLIT_TILE x SPLIT_TILE tiles for each C tile (row by row),
 * slice s of tile t at work[t * slices + s]. */
static __global__ void sum_slices(int M, int N, int K, float alpha, const float *A, int lda,
                           const float *B, int ldb, float beta, float *C, int ldc, int slices,
                           const float *work)
{
    const int col = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int row = (int)blockIdx.y * SUM_ROWS + (int)threadIdx.y;
    if (row >= M || col >= N)
        return;
    const int tiles_n = (N - 1) / SPLIT_TILE + 1;
    const long long tile = (long long)(row / SPLIT_TILE) * tiles_n + col / SPLIT_TILE;
    const float *p = work + (size_t)tile * slices * (SPLIT_TILE * SPLIT_TILE) +
                     (row % SPLIT_TILE) * SPLIT_TILE + col % SPLIT_TILE;
    float v = 0.0f;
    for (int s = 0; s < slices; ++s)
        v += p[(size_t)s * (SPLIT_TILE * SPLIT_TILE)];
    if (!isfinite(v))
        v = sequential_dot(A, lda, B, ldb, K, row, col);
    float *c = C + (size_t)row * ldc + col;
    *c = (beta == 0.0f) ? alpha * v : alpha * v + beta * *c;
}

/* sum_slices() over all of C, on the stream, after the slices' kernel. */
static cudaError_t launch_sum_slices(int M, int N, int K, float alpha, const float *A, int lda,
                                     const float *B, int ldb, float beta, float *C, int ldc,
                                     int slices, const float *work, cudaStream_t stream)
{
    const dim3 sum_block(32, SUM_ROWS), sum_grid((N - 1) / 32 + 1, (M - 1) / SUM_ROWS + 1);
    sum_slices<<<sum_grid, sum_block, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                                                   slices, work);
    return cudaGetLastError();
}

#endif /* SGEMM_LADDER_SPLIT_SUM_CUH */
