/*
 * Rung 22 - split-K for the 3xTF32 rung: K cut into slices where a round of tiles leaves SMs
 * idle (common/mma_split_k.cuh).
 *
 * What changes from rung 21
 *   Rung 21 runs one block a 128x128 tile, one block an SM. At 1024^2 that is 64 tiles for 132
 *   SMs: half the GPU idle, and each tile's 16 K tiles in a row. Here, where the tiles come to
 *   less than two rounds of the SMs, the plan (split_slices()) cuts each tile's K into s slices
 *   of at least 8 K tiles, one block a slice (sgemm_mma_slice()): each writes its raw sums to the
 *   stream's workspace, and a second kernel (sum_slices()) adds the s slices of each
 *   element in slice order, then alpha and beta: the same floats whichever block ran first.
 *   The plan counts, in K tiles of the busiest SM, whole rounds of blocks times each block's K
 *   tiles, plus a partial tile written and read back (MMA_SPLIT_TILE_COST) and the sum kernel
 *   (SUM_KERNEL_COST), all in common/plan_costs.h, and keeps the cheapest s (1: no split).
 *   Examples on 132 SMs: 64 tiles of 16 K tiles (1024^3): 2 slices, 128 blocks of 8; 144 tiles
 *   of 24 (1536^3): 3, four rounds of 8 K tiles instead of two of 24, the second nearly empty.
 *   Where there is no memory for the stream's workspace, whole tiles run.
 *
 * Why the hardware rewards it
 *   Time is set by the busiest SM: 64 blocks of 16 K tiles take 16 K tiles' time on 64 SMs; 128
 *   blocks of 8 take 8, plus ~1.3 for the partial tile and a sum kernel that reads 2 x 64 KB a
 *   tile from L2.
 *
 * Prediction: 1024^3 +40-50% (16 K tiles of time -> ~10); 1536^3 +30%; 2048 and up unchanged
 *   (256 tiles and more: two rounds, no split).
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 1.287 / 1.425 / 1.435 /
 *   1.452x at 1024 / 2048 / 4096 / 8192, rung 21 0.987 / 1.418 / 1.435 / 1.445 in the same run:
 *   1024 +30%, 2048 and up level (no split there); 1536 +10% in a run of its own (0.1845 ->
 *   0.1660 ms). Both below the prediction: the plan prices a slice's extra cost at 1.3 K tiles
 *   and the sum kernel apart; 8 K tiles a slice also pay a pipeline fill and drain each, not
 *   counted. Error near rung 21's (1.65 against 1.79 u at 1024: the slices' sums in slice
 *   order, then alpha). The slices' kernel 247-255 registers (sm_90), 0 spills.
 */
#include "../common/step.h"
#include "../common/device_facts.h"
#include "../common/sgemm_workspace.h"
#include "../common/mma_tile.cuh"     /* the 128x128 tile, load_tile, mma_tf32, k_range */
#include "../common/mma_epilogue.cuh" /* store_c, sequential_dot */
#include "../common/tf32x3.cuh"       /* split, tile_products, tf32x3_products */
#include "../common/mma_whole.cuh"    /* sgemm_mma, launch_whole, mma_start */
#include "../common/mma_split_k.cuh"  /* sgemm_mma_slice, sum_slices, split_slices */

/* ---- Per device, once (common/device_facts.h): the K tile depth its shared memory allows, and
 * the kernels' opt-in to that much shared memory. */
struct facts {
    int deep;
};
static struct facts facts_of[SGEMM_MAX_DEVICES];

static cudaError_t ask_device(const struct sgemm_device *d, void *entry)
{
    struct facts *f = (struct facts *)entry;
    f->deep = mma_deep(d);
    cudaError_t err = prepare_whole<tf32x3_products>(f->deep);
    return err == cudaSuccess ? prepare_slices<tf32x3_products>(f->deep) : err;
}
static struct sgemm_rung_facts facts_table = SGEMM_RUNG_FACTS(facts_of, ask_device);

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    struct mma_shape s;
    struct sgemm_device d;
    struct facts f;
    cudaError_t err = mma_start(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream,
                                &facts_table, &d, &f, &done, &s);
    if (err != cudaSuccess || done)
        return err;
    double split_cost = 0.0;
    const int slices =
        split_slices(s.tiles, K, f.deep ? BK_DEEP : BK_LOW, d.sms, &split_cost);
    float *work = NULL;
    if (slices > 1) {
        /* NULL where there is no memory for it: then the whole tiles, which need none. */
        err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
        if (err != cudaSuccess)
            return err;
    }
    if (work == NULL) {
        sgemm_trace(22, "whole", M, N, K, s.tiles, 1);
        return launch_whole<tf32x3_products>(f.deep, &s, M, N, K, alpha, A, lda, B, ldb, beta, C,
                                             ldc, stream);
    }
    sgemm_trace(22, "split-k", M, N, K, s.tiles * slices, slices);
    /* a workspace made in a capture's graph given back after the kernels (sgemm_workspace.h) */
    return sgemm_workspace_done(stream, work,
                                launch_slices<tf32x3_products>(f.deep, &s, slices, work, M, N, K,
                                                               alpha, A, lda, B, ldb, beta, C,
                                                               ldc, stream));
}

extern "C" const struct step step_22 = {
    22, "tf32x3_split_k", "3xTF32 with mma.sync, K split where a round of tiles leaves SMs idle",
    80, launch, "whole split-k",
};
