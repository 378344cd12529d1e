/*
 * split_plan.h - the tensor-core rungs' split-K plan (22-28), host code alone so that a rung
 * that only plans (rung 28) need not include the kernels: split_slices(), the cut of each C
 * tile's K into slices, and its cost in K tiles. The kernels are in split_sum.cuh.
 */
#ifndef SGEMM_LADDER_SPLIT_PLAN_H
#define SGEMM_LADDER_SPLIT_PLAN_H

#include "plan_costs.h"      /* SUM_KERNEL_COST, MMA_SPLIT_TILE_COST */
#include "sgemm_workspace.h" /* SGEMM_WORKSPACE_FLOATS_PER_SM */

#define SPLIT_TILE        128 /* the rungs' C tile: 128 x 128 */
#define SLICE_MIN_K_TILES 8   /* split-K: a slice is at least this many K tiles deep */
#define WGMMA_K_TILE      32  /* the wgmma rungs' K tile (BK, common/wgmma.cuh) */

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
static inline int split_slices(long long tiles, int K, int bk, int sms, double *cost)
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

#endif /* SGEMM_LADDER_SPLIT_PLAN_H */
