/*
 * Rung 13's pieces that rung 14 runs unchanged: the rasterization of tiles (tile_coords()) and
 * stream-K's partial sums in workspace slots, handed on with flags. Rung 13 keeps its own copy:
 * there they are the lesson. Include after ffma_tile.cuh. The flags: flags.cuh.
 */
#ifndef SGEMM_LADDER_FILL_SMS_CUH
#define SGEMM_LADDER_FILL_SMS_CUH

#include "flags.cuh" /* raise_flag, wait_flag */

#define RASTER_GROUP 8 /* tile rows walked down a column before moving right */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 /* sm_80+ device code */
/* Tile number -> (tile_m, tile_n), RASTER_GROUP tile rows at a time, column by column: the
 * blocks running together share a few row panels of A and column panels of B, kept in L2. */
static __device__ __forceinline__ void tile_coords(int tile, int tiles_m, int tiles_n, int *tile_m,
                                                   int *tile_n)
{
    const int per_group = RASTER_GROUP * tiles_n;
    const int group = tile / per_group;
    const int in_group = tile - group * per_group;
    const int group_m0 = group * RASTER_GROUP;
    const int group_rows = min(tiles_m - group_m0, RASTER_GROUP);
    *tile_m = group_m0 + in_group % group_rows;
    *tile_n = in_group / group_rows;
}

/* A block's raw sums to / from a workspace slot (load: acc = or += it, add 0 / 1): thread tid's
 * float4 v at v*threads + tid (a warp: 512 contiguous bytes). .cg: L2 only (L1 may be stale). */
static __device__ __forceinline__ void store_partial(struct shape sh, float4 *slot,
                                                     float acc[TM_MAX][TN])
{
    const int threads = 32 * WARPS_M * sh.warps_n, tm = sh.sub_m * SUB;
    float4 *mine = slot + threadIdx.x;
#pragma unroll
    for (int i = 0; i < tm; ++i)
#pragma unroll
        for (int q = 0; q < SUB_N; ++q)
            __stcg(&mine[(i * SUB_N + q) * threads],
                   make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2],
                               acc[i][4 * q + 3]));
}
static __device__ __forceinline__ void load_partial(struct shape sh, const float4 *slot,
                                                    float acc[TM_MAX][TN], int add)
{
    const int threads = 32 * WARPS_M * sh.warps_n, tm = sh.sub_m * SUB;
    const float4 *mine = slot + threadIdx.x;
#pragma unroll
    for (int i = 0; i < tm; ++i)
#pragma unroll
        for (int q = 0; q < SUB_N; ++q) {
            const float4 v = __ldcg(&mine[(i * SUB_N + q) * threads]);
            acc[i][4 * q] = (add ? acc[i][4 * q] : 0.0f) + v.x;
            acc[i][4 * q + 1] = (add ? acc[i][4 * q + 1] : 0.0f) + v.y;
            acc[i][4 * q + 2] = (add ? acc[i][4 * q + 2] : 0.0f) + v.z;
            acc[i][4 * q + 3] = (add ? acc[i][4 * q + 3] : 0.0f) + v.w;
        }
}

#endif /* sm_80+ device code */

#endif /* SGEMM_LADDER_FILL_SMS_CUH */
