/*
 * Rung 17 - a 64x64 tile for the smallest C: twice the clusters at the same slices.
 *
 * What changes from rung 16
 *   Where C is tiny (128^2 to 512^2, or one row or column of tiles: 4096x64x4096, 64x1024x1024),
 *   even the 64x128 tiles in clusters of 8 slices leave SMs idle. This rung adds a 64x64 tile to
 *   the cluster split: the same 4 warps (2 x 2) of 32x32, 8x4 of C a thread (the 64x128 tile's
 *   thread has 8x8; in common/ffma_tile.cuh the same code with sub_n = 1), so twice the tiles at
 *   the same slices, each block's K loop half the FFMAs. The plan prices both tiles with
 *   ffma_cluster_slices() and takes the cheaper; a 64x64 K tile costs T_KT_COST (66)% of a 64x128
 *   one, measured, not 50%.
 *
 * Why the hardware rewards it
 *   A block alone on an SM (one warp per scheduler) goes at the pace of its own dependency
 *   chain, not at the SM's FFMA rate: halving its FFMAs shortens its K tile to 66% of the 64x128
 *   block's (64x256x16384 in 8 slices, one block an SM: 71.6 against 108 us, H200), while twice
 *   the blocks fill twice the SMs.
 *
 * Prediction: 512^2 18.0 -> ~15.8 us; 4096x64x4096 and 64x1024x1024 +10-20%; every shape where
 * the 64x128 split already fills the SMs unchanged.
 *
 * Measured (H200, beside rung 16 in one call, median ms, ratio to cuBLAS): 512^2 17.7 -> 15.8 us
 * (1.00 -> 1.11x), 128^2 9.4 -> 7.9 us (1.02 -> 1.24x), 4096x64x4096 111.6 -> 83.4 us (0.57 ->
 * 0.77x), 64x1024x1024 14.4 -> 13.3 us (1.02 -> 1.13x); every other shape unchanged.
 * `make all-bench`: 1.146 / 1.035 / 1.037 / 1.061 at 1024 / 2048 / 4096 / 8192.
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/sgemm_workspace.h"
#include "../common/plan_costs.h"
#include "../common/ffma_plan.h"
#include "../common/ffma_tile.cuh"    /* rungs 11-12: tile, copies, fragments, epilogue, order */
#include "../common/ffma_loop.cuh"    /* rung 13: rasterization, the K loop over a range */
#include "../common/ffma_slabs.cuh"   /* rung 14: the large tiles' split into slabs */
#include "../common/ffma_stream_k.cuh" /* rung 15: stream-K */
#include "../common/ffma_cluster.cuh" /* rung 16: split-K in clusters; NEW: its 64x64 tile */
#include "../common/ffma_whole.cuh"  /* rung 13's whole tiles; rung 15's run of stream-K */

/* Per device (common/device_facts.h): how many stream-K blocks fit at once (0: none), how many
 * clusters of each size. */
struct facts {
    long long resident;
    int cluster_cap[SPLIT_MAX + 1];
};
static struct facts facts_of[SGEMM_MAX_DEVICES];
static cudaError_t ask_device(const struct sgemm_device *d, void *entry)
{
    struct facts *f = (struct facts *)entry;
    const cudaError_t err = stream_k_resident(d, &f->resident);
    return err != cudaSuccess ? err : cluster_caps(d, f->cluster_cap);
}
static struct sgemm_rung_facts facts_table = SGEMM_RUNG_FACTS(facts_of, ask_device);

/* The workspace (common/sgemm_workspace.h: one per stream, never made while capturing): its
 * floats hold stream-K's slots (a 128x256 tile's floats per block) or the slabs; then its
 * flags. A waiter clears its flag: each launch leaves zeros. */
static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    struct sgemm_device d;
    struct facts f;
    cudaError_t err = sgemm_launch_start(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream,
                                         &facts_table, &d, &f, &done);
    if (err != cudaSuccess || done)
        return err;
    if (d.cc < 90 || f.cluster_cap[2] <= 0)
        return cudaErrorInvalidDevice; /* clusters need sm_90 */
    const int b16 = (ldb % 4 == 0) && (N % 4 == 0) && sgemm_aligned16(B); /* rung 11 */
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const long long large = ceil_div(M, L_BM) * ceil_div(N, L_BN);
    const long long small = ceil_div(M, S_BM) * ceil_div(N, S_BN);
    const struct ffma_problem pr = {M, N, K, d.sms, f.resident,
                                    (long long)SGEMM_WORKSPACE_FLOATS(d.sms)};
    int short_kt = 0;
    const enum ffma_plan plan = ffma_choose_plan(&pr, FFMA_PLAN_STREAM_K, &short_kt); /* NEW */
    float *work = NULL;
    /* Stream-K, a slot and a flag a block (common/ffma_stream_k.cuh): where the shares do
     * not all fit at once, whole tiles below. */
    if (plan == FFMA_STREAM_K && stream_k_fits(&d, f.resident)) {
        int ran = 0;
        err = run_stream_k(17, b16, &g, &d, f.resident, large, stream, &ran);
        if (err != cudaSuccess || ran)
            return err;
    }
    if (plan == FFMA_WHOLE_SMALL) {
        long long cost = 0, t_cost = 0;
        int large_slices = 1;
        const int slices = ffma_cluster_slices(small, K, d.sms, f.cluster_cap, 100, &cost);
        const long long tiny = ceil_div(M, S_BM) * ceil_div(N, T_BN); /* NEW: the 64x64 tile */
        const int t_slices =
            ffma_cluster_slices(tiny, K, d.sms, f.cluster_cap, T_KT_COST, &t_cost);
        const int t = t_slices > 1 && t_cost < cost; /* NEW: in clusters, where it costs less */
        cost = t ? t_cost : cost;
        const long long large_cost = ffma_large_split(large, &pr, &large_slices);
        const int use_large = (large_cost >= 0 && large_cost < cost); /* a long K */
        if (use_large) { /* slabs in the workspace */
            err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
            if (err != cudaSuccess || work != NULL)
                return err != cudaSuccess
                           ? err
                           : sgemm_workspace_done(stream, work,
                                                  launch_slices(17, b16, &g, large_slices, large,
                                                                work, 0, stream));
        }
        if (slices > 1 || t) /* in clusters, no workspace needed */
            return launch_cluster_split(17, b16, &g, t ? t_slices : slices, t ? tiny : small, t,
                                        stream);
        return launch_whole(17, b16, 1, &g, small, stream);
    }
    return launch_whole(17, b16, 0, &g, large, stream);
}

extern "C" const struct step step_17 = {
    17, "small_tile", "a 64x64 tile for the smallest C: twice the clusters at the same slices", 90,
    launch, "whole-large whole-small stream-k split-k split-k-64 large-split",
};
