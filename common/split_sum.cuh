/*
 * split_sum.cuh - what the tensor-core rungs' split-K (22-27) shares, whatever computes the
 * slices: sum_slices(), which adds each element's slices in slice order (the same floats
 * whichever block ran first), then alpha and beta; launch_sum_slices(); split_slices(), the
 * plan of the cut. C tiles of SPLIT_TILE x SPLIT_TILE.
 */
#ifndef SGEMM_LADDER_SPLIT_SUM_CUH
#define SGEMM_LADDER_SPLIT_SUM_CUH

#include <math.h> /* isfinite */

#include "plan_costs.h"       /* SUM_KERNEL_COST, MMA_SPLIT_TILE_COST */
#include "sequential_dot.cuh" /* for a sum that is not finite */
#include "sgemm_workspace.h"  /* SGEMM_WORKSPACE_FLOATS_PER_SM */

#define SPLIT_TILE        128 /* the rungs' C tile: 128 x 128 */
/* Split-K: a slice is at least this many K tiles deep; sum_slices() blocks are 32 x SUM_ROWS. */
#define SLICE_MIN_K_TILES 8
#define SUM_ROWS          8

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

/* The workspace (common/sgemm_workspace.h): its floats hold WORK_TILES_PER_SM partial tiles of
 * 128x128 per SM (the most split_slices() plans for; stream-K: one slot per block), then its
 * flags (stream-K: one per block). */
#define WORK_TILES_PER_SM (SGEMM_WORKSPACE_FLOATS_PER_SM / (SPLIT_TILE * SPLIT_TILE))
static_assert(WORK_TILES_PER_SM <= SGEMM_WORKSPACE_FLAGS_PER_SM, "a flag for every slot");

/* The plans, in units of one block's K tile (~4 us on an H100) on the busiest SM.
 * Whole tiles: ceil(tiles / SMs) rounds of all k_tiles K tiles of a tile.
 * Split-K: K slices per tile, whole rounds of blocks, ceil(tiles s / sms), times each block's
 * K tiles plus, when split, the partial tile written and read back (MMA_SPLIT_TILE_COST) and the
 * sum kernel. Considered up to two rounds of whole tiles (beyond, the last round is a small
 * part of the time), each slice at least SLICE_MIN_K_TILES deep, within the workspace.
 * Examples on 132 SMs: 64 tiles of 16 K tiles (1024^3) split 2; 144 tiles of 24 (1536^3)
 * split 3, 4 rounds of 8 K tiles instead of 2 rounds of 24, the second nearly empty. The
 * constants were set for 32-deep K tiles (the partial tile then cost ~1.3 of them) and
 * measured there; kept with 64. split_slices() returns the slices (1: no split), *cost the
 * cost of the plan. */
static int split_slices(long long tiles, int K, int bk, int sms, double *cost)
{
    const long long k_tiles = (K - 1) / bk + 1;
    int best = 1;
    double best_cost = (double)((tiles - 1) / sms + 1) * (double)k_tiles;
    const long long most = WORK_TILES_PER_SM * (long long)sms / tiles; /* the workspace's room */
    for (long long s = 2; tiles < 2LL * sms && s <= k_tiles / SLICE_MIN_K_TILES && s <= most;
         ++s) {
        const double rounds = (double)((tiles * s - 1) / sms + 1);
        const double sum_kernel =
            SUM_KERNEL_COST + SUM_KERNEL_COST_PER_BLOCK * (double)(tiles * s);
        const double c =
            rounds * ((double)((k_tiles - 1) / s + 1) + MMA_SPLIT_TILE_COST) + sum_kernel;
        if (c < best_cost) {
            best_cost = c;
            best = (int)s;
        }
    }
    *cost = best_cost;
    return best;
}

#endif /* SGEMM_LADDER_SPLIT_SUM_CUH */
