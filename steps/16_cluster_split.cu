/*
 * Rung 16 - split-K in thread block clusters (sm_90): the slices add up in shared memory.
 *
 * What changes from rung 15
 *   Rung 14's slices meet in global memory: each stores its 32 KB of partial sums to a slot,
 *   fences, counts itself on an atomic, and the last one reads every slot back alone. Here the
 *   slices of a tile run as one thread block cluster (cudaLaunchKernelEx with a cluster
 *   dimension; common/ffma_cluster.cuh): started together on one GPC, each block can read the
 *   others' shared memory. Each slice parks its sums in its own shared memory; one cluster
 *   barrier replaces the slots, fences and count; every slice then adds up 1/slices of the tile,
 *   slices 0, 1, ... in order (the same floats every run); a second barrier keeps the shared
 *   memory alive until all are done. The small-tile split needs no workspace any more: a
 *   captured call splits as a direct one.
 *   A cluster never spans two GPCs, so fewer clusters of s blocks fit than SMs / s: the launcher
 *   asks the driver how many (cudaOccupancyMaxActiveClusters with a probe kernel that holds
 *   over half an SM's shared memory, once per device), and ffma_cluster_slices() prices the
 *   slices in clusters that fit (CLUSTER_BLOCK_COST 2 K tiles a slice, against 8 through L2).
 *   The rung needs sm_90; the large-tile slabs and stream-K stay as in rungs 14-15.
 *
 * Why the hardware rewards it
 *   At 256^2 the chain through global memory (store, fence, atomic, the last slice's reads) is
 *   most of the run: a build that skipped it (wrong C) ran 9.0 us instead of 13.8 (H200). In a
 *   cluster the partial sums never leave the GPC, and every slice, not the last alone, adds.
 *
 * Prediction: 256^2 13.8 -> ~10 us, 512^2 18 -> ~14 us, 768^2 36 -> ~32 us (H200); shapes that
 * split no tile unchanged.
 *
 * Measured (H200, beside rung 15 in one call, median ms, ratio to cuBLAS): 256^2 14.4 -> 9.9 us
 * (0.83 -> 1.22x), 128^2 11.8 -> 9.4 us, 768^2 36.4 -> 32.1 us (1.02 -> 1.17x), 64x1024x1024
 * 19.6 -> 14.4 us (0.75 -> 1.02x), 512^2 18.2 -> 17.7 us (level with cuBLAS: 64x128 tiles in
 * clusters of 4 still leave SMs idle: rung 17); every square from 1024 up unchanged.
 * `make all-bench`: 1.147 / 1.034 / 1.037 / 1.061 at 1024 / 2048 / 4096 / 8192.
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/sgemm_workspace.h"
#include "../common/ffma_plan.h"
#include "../common/ffma_tile.cuh"    /* rungs 11-12: tile, copies, fragments, epilogue, order */
#include "../common/ffma_loop.cuh"    /* rung 13: rasterization, the K loop over a range */
#include "../common/ffma_slabs.cuh"   /* rung 14: the large tiles' split into slabs */
#include "../common/ffma_stream_k.cuh" /* rung 15: stream-K */
#include "../common/ffma_cluster.cuh" /* NEW: split-K in thread block clusters (sm_90) */
#include "../common/ffma_whole.cuh"  /* rung 13's whole tiles; rung 15's run of stream-K */

/* Per device (common/device_facts.h): how many stream-K blocks fit at once (0: none), NEW: how
 * many clusters of each size. */
struct facts {
    long long resident;
    int cluster_cap[SPLIT_MAX + 1];
};
static struct facts facts_of[SGEMM_MAX_DEVICES];
static cudaError_t ask_device(const struct sgemm_device *d, void *entry)
{
    struct facts *f = (struct facts *)entry;
    const cudaError_t err = stream_k_resident(d, &f->resident);
    return err != cudaSuccess ? err : cluster_caps(d, f->cluster_cap); /* NEW */
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
        return cudaErrorInvalidDevice; /* NEW: clusters need sm_90 */
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
        err = run_stream_k(16, b16, &g, &d, f.resident, large, stream, &ran);
        if (err != cudaSuccess || ran)
            return err;
    }
    if (plan == FFMA_WHOLE_SMALL) {
        long long cost = 0;
        int large_slices = 1;
        /* NEW: the slices in clusters */
        const int slices = ffma_cluster_slices(small, K, d.sms, f.cluster_cap, 100, &cost);
        const long long large_cost = ffma_large_split(large, &pr, &large_slices);
        const int use_large = (large_cost >= 0 && large_cost < cost); /* a long K */
        if (use_large) { /* slabs in the workspace */
            err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
            if (err != cudaSuccess || work != NULL)
                return err != cudaSuccess
                           ? err
                           : sgemm_workspace_done(stream, work,
                                                  launch_slices(16, b16, &g, large_slices, large,
                                                                work, 0, stream));
        }
        if (slices > 1) /* NEW: in clusters, no workspace needed */
            return launch_cluster_split(16, b16, &g, slices, small, 0, stream);
        return launch_whole(16, b16, 1, &g, small, stream);
    }
    return launch_whole(16, b16, 0, &g, large, stream);
}

extern "C" const struct step step_16 = {
    16, "cluster_split", "split-K in thread block clusters: the slices add up in shared memory",
    90, launch, "whole-large whole-small stream-k split-k large-split",
};
