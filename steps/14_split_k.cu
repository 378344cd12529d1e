/*
 * Rung 14 - split-K: where even the small tiles are too few, each tile's K is cut over several
 * blocks.
 *
 * What changes from rung 13
 *   At 512^2 there are 32 tiles of 64x128 for 132 SMs; at 256x256x65536 two tiles hold all the
 *   work. More tiles cannot be had, but each tile's K loop can be cut into s slices run by s
 *   blocks (a K range: the K loop of rung 13 starts at any K tile, common/ffma_loop.cuh), their
 *   partial sums added afterwards. Two forms, both in a fixed order, so every run gives the same
 *   floats:
 *   1. Small tiles (common/ffma_split_k.cuh): slice s of a 64x128 tile stores its raw sums in a
 *      slot of a workspace, fences, and counts itself on the tile's counter (atomicAdd); the last
 *      slice to count adds the slots up in slice order, 0 first, and writes C, then resets the
 *      counter for the next launch. ffma_split_slices() picks s = 2..8 by the busiest SM: blocks
 *      on it times their K tiles plus SPLIT_BLOCK_COST for each (a pipeline fill and 32 KB of
 *      partial sums through L2).
 *   2. Large tiles for a long K (common/ffma_slabs.cuh): block (x, y) runs tile x over K slice y
 *      with the whole-tile kernel's loop into slab y of the workspace, and a second kernel adds
 *      the slabs in order into C. The 128x256 tile keeps its speed (~83% of the FFMA peak, where
 *      64x128 slices reach ~68%): ffma_large_split() prices it beside the small split.
 *   The workspace is one per stream (common/sgemm_workspace.h), made by the first launch on the
 *   stream that wants one; a capture before it makes one in the graph (stream-ordered nodes),
 *   given back after the kernels (sgemm_workspace_done()): a captured call splits as a direct one.
 *
 * Why the hardware rewards it
 *   Split-K trades bytes (each slice's partial sums through L2) for more, shorter blocks, so that
 *   every SM has work. Accuracy gains too: s sums of K/s terms each round less than one of K
 *   (256^3: rms error 1.2e-7 against 2.9e-7 unsplit, H100).
 *
 * Prediction: 512^2 from ~31 us to ~10 us (32 tiles x 4 slices), 256^2 ~1.5x, 768^2 +20%, 1024
 * unchanged (128 tiles already fill the SMs); 256x256x65536 from 0.44 of cuBLAS to 0.95-1.05
 * (2 tiles x 66 slices of the large tile), 1024x1024x16384 from 0.84 to ~1.0.
 *
 * Measured (H200, beside rung 13 in one call, median ms, ratio to cuBLAS): 256x256x65536 3.113 ->
 * 0.182 ms (0.059 -> 0.992x, the large tile in 66 slabs), 512^2 0.031 -> 0.018 (0.56 -> 0.96x),
 * 1024x1024x16384 0.790 -> 0.701 (0.84 -> 0.94x), 4096x128x4096 0.201 -> 0.119 (0.50 -> 0.86x),
 * 64x1024x1024 0.055 -> 0.020; squares from 1024 up unchanged. `make all-bench`: 1.148 / 1.036
 * / 1.036 / 1.043 at 1024 / 2048 / 4096 / 8192. At 256^2 (0.83x) the chain through global memory
 * is most of the run: rung 16.
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/sgemm_workspace.h"
#include "../common/ffma_plan.h"
#include "../common/ffma_tile.cuh"    /* rungs 11-12: tile, copies, fragments, epilogue, order */
#include "../common/ffma_loop.cuh"    /* rung 13: rasterization, the K loop of a tile */
#include "../common/ffma_split_k.cuh" /* NEW: split-K, slices meeting in global memory */
#include "../common/ffma_slabs.cuh"   /* NEW: the large tiles' split into slabs */
#include "../common/ffma_whole.cuh"   /* rung 13: the whole-tile kernel, its launch */

/* NEW: the workspace (common/sgemm_workspace.h: one per stream, never made while capturing):
 * its floats hold split-K's slots (a 64x128 tile's floats per slice) or the slabs; then its
 * counts. A tile's last slice resets its count: each launch leaves zeros. */
static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    struct sgemm_device d;
    cudaError_t err = sgemm_launch_start(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream,
                                         NULL, &d, NULL, &done);
    if (err != cudaSuccess || done)
        return err;
    if (d.cc < 80)
        return cudaErrorInvalidDevice; /* cp.async needs sm_80 or newer */
    const int b16 = (ldb % 4 == 0) && (N % 4 == 0) && sgemm_aligned16(B); /* rung 11 */
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const long long large = ceil_div(M, L_BM) * ceil_div(N, L_BN);
    const long long small = ceil_div(M, S_BM) * ceil_div(N, S_BN);
    const struct ffma_problem pr = {M, N, K, d.sms, 0,
                                    (long long)SGEMM_WORKSPACE_FLOATS(d.sms)};
    int short_kt = 0;
    const enum ffma_plan plan = ffma_choose_plan(&pr, 0, &short_kt);
    float *work = NULL;
    if (plan == FFMA_WHOLE_SMALL) {
        const long long room = (long long)SGEMM_WORKSPACE_FLOATS(d.sms);
        long long cost = 0;
        int large_slices = 1;
        const int slices = ffma_split_slices(small, K, d.sms, room / (S_BM * S_BN), &cost);
        const long long large_cost = ffma_large_split(large, &pr, &large_slices);
        const int use_large = (large_cost >= 0 && large_cost < cost); /* NEW: a long K */
        if (use_large || slices > 1) { /* NEW: split, where the stream has a workspace */
            err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
            if (err != cudaSuccess)
                return err;
        }
        if (work != NULL && use_large)
            return sgemm_workspace_done(
                stream, work, launch_slices(14, b16, &g, large_slices, large, work, 0, stream));
        if (work != NULL && slices > 1)
            return sgemm_workspace_done(stream, work,
                                        launch_split_k(14, b16, &g, slices, small, work,
                                                       SGEMM_WORKSPACE_FLAGS(work, d.sms), stream));
        return launch_whole(14, b16, 1, &g, small, stream);
    }
    return launch_whole(14, b16, 0, &g, large, stream);
}

extern "C" const struct step step_14 = {
    14, "split_k", "split-K: too few tiles, so each tile's K is cut over several blocks", 80,
    launch, "whole-large whole-small split-k large-split",
};
