/*
 * ffma_plan.h - the plans of the FFMA rungs from 13 on: how the tiles of one C are spread over
 * the SMs. Host code, usable from C (the host tests call it with made-up devices).
 *
 * Each function prices one way to run the product in time on the busiest SM, from the device's
 * facts (the SM count, how many blocks or clusters fit at once: common/device_facts.h) and the
 * measured costs of common/plan_costs.h; a rung calls those of the mechanisms it has.
 *   ffma_choose_plan()     whole 128x256 tiles, whole 64x128 tiles (rung 13), stream-K for a
 *                          partial last round (rung 15), the uneven tail (rung 18);
 *   ffma_split_slices()    split-K of the 64x128 tiles, slices meeting in global memory (14);
 *   ffma_large_split()     split-K of the 128x256 tiles into slabs, for a long K (14);
 *   ffma_cluster_slices()  split-K in thread block clusters (16; the 64x64 tile: 17);
 *   ffma_small_slabs()     the 64x128 tiles' split into slabs by dependent launches (18).
 */
#ifndef SGEMM_LADDER_FFMA_PLAN_H
#define SGEMM_LADDER_FFMA_PLAN_H

#define SPLIT_MAX     8  /* K slices per tile, at most (a cluster of 8 is portable) */
#define SPLIT_MIN_KT  4  /* K tiles per slice, at least */
#define LSPLIT_MIN_KT 16 /* K tiles per slice of the large-tile split, at least */

#ifdef __cplusplus
extern "C" {
#endif

enum ffma_plan { FFMA_WHOLE_LARGE, FFMA_WHOLE_SMALL, FFMA_STREAM_K, FFMA_UNEVEN_TAIL };
#define FFMA_PLAN_STREAM_K    1 /* options: the rung can share out the last rounds */
#define FFMA_PLAN_UNEVEN_TAIL 2 /* ... and cut the last round's tiles in two along K */

struct ffma_problem {
    int M, N, K;
    int sms;            /* the device's SMs */
    long long resident; /* 128x256 blocks that fit at once (stream-K's cooperative launch) */
    long long ws;       /* floats of workspace a plan may use (0: none) */
};

/* The plan whose busiest SM finishes first among those `options` allows; *short_kt: the uneven
 * tail's short piece, in K tiles. */
enum ffma_plan ffma_choose_plan(const struct ffma_problem *p, int options, int *short_kt);

/* Slices for each of `tiles` 64x128 tiles (1: none), meeting in global memory; tiles * slices
 * stays within max_blocks (the workspace's slots). *cost: the plan's cost in K tiles. */
int ffma_split_slices(long long tiles, int K, int sms, long long max_blocks, long long *cost);

/* The same in clusters: cap[s] clusters of s blocks fit at once (s <= SPLIT_MAX), each K tile
 * costs kt_cost% of a 64x128 block's. */
int ffma_cluster_slices(long long tiles, int K, int sms, const int *cap, int kt_cost,
                        long long *cost);

/* The 128x256 tiles' K split into *slices slabs of the workspace; its cost in
 * ffma_split_slices()'s units, -1 where it does not apply. */
long long ffma_large_split(long long tiles, const struct ffma_problem *p, int *slices);

/* The 64x128 tiles' K split into slabs, at most max_slices, blocks sharing SMs; as above. */
long long ffma_small_slabs(long long tiles, const struct ffma_problem *p, int max_slices,
                           int *slices);

/* The first row of C from tile dp's raster group on: where the uneven tail's sums start. */
int ffma_tail_row0(long long dp, int N);

#ifdef __cplusplus
}
#endif

#endif /* SGEMM_LADDER_FFMA_PLAN_H */
