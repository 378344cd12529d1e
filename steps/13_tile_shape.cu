/*
 * Rung 13 - the tile chosen by the shape, and rasterized: every SM busy.
 *
 * What changes from rung 12
 *   Rung 12's kernel is fast per tile, but a GPU of S SMs runs one 128x256 tile per SM, and a C
 *   of T tiles keeps every SM busy only when T is a multiple of S and a few times larger. At
 *   1024^2 there are 32 tiles for 132 SMs: 100 SMs idle, 0.37 of cuBLAS. This rung keeps rung
 *   12's K loop (common/ffma_tile.cuh, ffma_loop.cuh: the same machine code for the 128x256
 *   tile) and adds two things around it:
 *   1. A second tile, 64x128 (4 warps of 32x64, 8x8 of C a thread, 4 stages, up to 4 blocks an
 *      SM), and a plan that picks the tile whose busiest SM finishes first, counted in rounds of
 *      the SMs (ffma_choose_plan(), common/ffma_plan.cu). The SM count is asked of the device,
 *      once (common/device_facts.h); what the plan cannot ask, how much slower a round of small
 *      tiles is (LARGE_TILE_GAIN), is measured once and kept in common/plan_costs.h.
 *   2. Rasterization (tile_coords()): block b no longer takes tile b row by row; the blocks walk
 *      8 tile rows down a column before moving right, so the blocks resident together share a
 *      few row panels of A and column panels of B, and those stay in L2.
 *
 * Why the hardware rewards it
 *   Time is set by the busiest SM; an idle SM is lost throughput. 1024^2 as 64x128 tiles is 128
 *   blocks on 132 SMs. A 64x128 block is slower per FMA than a 128x256 one (its 8x8 thread tile
 *   reads shared memory at 1 byte per FMA, one warp per scheduler when it runs alone: ~68% of
 *   the FFMA peak against ~83%), so the plan takes it only where it fills more of the GPU:
 *     1024^2:  32 large tiles (1 round of 100) or 128 small (1 round of 26)  -> small;
 *     2048^2: 128 large (100) or 512 small (4 rounds, 104)                   -> large;
 *     3072^2: 288 large (3 rounds, 300) or 1152 small (9 rounds, 234)         -> small.
 *   Rasterization matters little at these sizes (the kernel needs ~1.3 TB/s of L2 and little of
 *   DRAM); it is here because every later rung shares its tile order (rungs 15 and 18 cut the
 *   last tiles, and their pieces must be found in the same order).
 *
 * Prediction: 1024 from 0.37 to ~1.15 of cuBLAS (128 blocks on 132 SMs, cuBLAS at 33.7
 * TFLOP/s); 3072 +15-20% (9 rounds of small tiles against 3 of large, the third 82% idle);
 * 2048, 4096, 8192 unchanged (the same kernel); rasterization within 1%.
 *
 * Measured (H200; each rung of the ladder beside the one before in one call, median ms, ratio to
 * cuBLAS in the same process): 1024^2 0.172 -> 0.056 ms (0.376 -> 1.146x), 512^2 0.090 -> 0.031,
 * 3072^2 1.477 -> 1.150 (0.869 -> 1.116x), 5120^2 5.73 -> 5.25 (0.998 -> 1.090x); 2048, 4096 and
 * 8192 +1% (1.024 -> 1.035x at 4096: the same plan, the tiles now rasterized). `make all-bench`:
 * 1.143 / 1.039 / 1.036 / 1.044 at 1024 / 2048 / 4096 / 8192. Still far behind: a small C with a
 * long K (256x256x65536: 0.059x; two tiles hold all the work), skinny shapes (4096x128x4096:
 * 0.50x): rung 14.
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/ffma_plan.h"
#include "../common/ffma_tile.cuh"    /* rungs 11-12: tile, copies, fragments, epilogue, order */
#include "../common/ffma_loop.cuh" /* NEW: rasterization (tile_coords()), the K loop of a tile */
#include "../common/ffma_whole.cuh" /* NEW: the whole-tile kernel on either tile, its launch */

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    struct sgemm_device d; /* NEW: the SM count, asked once per device */
    cudaError_t err = sgemm_launch_start(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream,
                                         NULL, &d, NULL, &done);
    if (err != cudaSuccess || done)
        return err;
    if (d.cc < 80)
        return cudaErrorInvalidDevice; /* cp.async needs sm_80 or newer */
    const int b16 = (ldb % 4 == 0) && (N % 4 == 0) && sgemm_aligned16(B); /* rung 11 */
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    /* NEW: the tile that fills the SMs in fewer rounds (common/ffma_plan.h) */
    const struct ffma_problem pr = {M, N, K, d.sms, 0, 0};
    int short_kt = 0;
    const int small = ffma_choose_plan(&pr, 0, &short_kt) == FFMA_WHOLE_SMALL;
    const long long tiles = small ? ceil_div(M, S_BM) * ceil_div(N, S_BN)
                                  : ceil_div(M, L_BM) * ceil_div(N, L_BN);
    return launch_whole(13, b16, small, &g, tiles, stream);
}

extern "C" const struct step step_13 = {
    13, "tile_shape", "the tile chosen by the shape, rasterized: every SM busy", 80, launch,
    "whole-large whole-small",
};
