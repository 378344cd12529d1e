/*
 * Rung 26 - B split and transposed once, before the product, where enough rows of tiles share
 * it; TMA then brings B^T big and small like A, and the producer only issues copies.
 *
 * What changes from rung 25
 *   Rung 25's producer splits and transposes its tile's B for every K tile: each block redoes
 *   it, so every element of B is split M / 128 times, ~200 instructions a K tile in one warp a
 *   scheduler, about as long as the tile's 1536 clocks of tensor core. Here, where there are 9
 *   rows of tiles or more (M >= SPLIT_B_MIN_M, common/plan_costs.h) and whole tiles run,
 *   split_b_first() (common/wgmma_split_b.cuh, written there once for rungs 26 and 27)
 *   queues split_b_transposed() on the stream first: B^T big (rows 0..n_pad - 1) and small
 *   (rows n_pad..), k in the tile's K order, 8 bytes per element of B (up to
 *   SPLIT_B_MAX_BYTES, 1 GiB), read through a 32 x 32 block of shared memory so that both B's
 *   rows and B^T's are whole. The product (FEED_SPLIT_B) has thread 0 of the producer bring A
 *   and both B^T parts by TMA, into the 128-byte swizzled layout wgmma reads, and nothing else.
 *   The memory comes from the rung's own pool on the device (rung_memory(): made at first
 *   use, keeps what is given back, never makes one stream wait for another's memory), taken
 *   and given back in stream order around the product. Where the stream is capturing (the
 *   memory would belong to the graph), for fewer rows and for split-K, rung 25's path runs.
 *   B^T is twice raw B's bytes, and in row order each wave of blocks reads all of it from DRAM:
 *   the bands of 8 tile rows that whole tiles go in (tile_origin(), common/wgmma.cuh, as in
 *   rungs 23-25) keep it in L2.
 *
 * Why the hardware rewards it
 *   The split costs O(KN) once instead of O(MKN / 128) in the product's blocks, and the
 *   consumers' wgmma no longer wait for the producer's split: the K loop is copies, A's split
 *   and wgmma.
 *
 * Prediction: with B passed on unsplit (wrong sums) rung 25's loop ran 20% faster (H100); the
 *   pass itself reads B and writes twice its bytes, ~5% of the product at 4096: +15%.
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 1.855 / 2.338 /
 *   2.733 / 2.642x at 1024 / 2048 / 4096 / 8192, against rung 25's 1.845 / 2.165 / 2.299 /
 *   2.194: +19% at 4096 (1.038 ms, ~2070 clocks a K tile, 74% of the tensor core's), +20% at
 *   8192, +8% at 2048, level at 1024 (8 rows of tiles: rung 25's path). 1.07-1.77 u against
 *   FP64 (cuBLAS 4.7-6.8 u). 168 registers a thread at launch, 0 spills.
 *
 * Build: wgmma and setmaxnreg exist only for sm_90a (`make` picks it on an sm_90 GPU). Elsewhere
 *   the kernel is __trap(), and launch() returns cudaErrorNoKernelImageForDevice instead.
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/sgemm_workspace.h"
#include "../common/plan_costs.h"
#include "../common/wgmma.cuh"     /* the tile, split, wgmma, split_b_block, copies, finish_tile */
#include "../common/tma.cuh"       /* mbarriers, TMA loads, tensor_map */
#include "../common/wgmma_roles.cuh" /* the producer and consumer warpgroups: the kernel */
#include "../common/split_sum.cuh" /* sum_slices, split_slices (rung 22) */
#include "../common/wgmma_split_b.cuh" /* split_b_transposed, rung_memory, split_b_first */

static const tf32x3_kernel kernels[3][2] = {
    KERNEL_PAIR(FEED_COPY), KERNEL_PAIR(FEED_TMA),
    {NULL, sgemm_tf32x3_wgmma<FEED_SPLIT_B, SPLIT_STAGES_WHOLE>}}; /* split-b: whole tiles only */

/* ---- Per device, once, no stream work (common/device_facts.h): whether the image has the
 * wgmma body, the kernels' opt-in to SMEM bytes of shared memory. Split B's memory comes from
 * the rung's own pool on each device (common/rung_pool.cuh), under the same lock. */
struct facts {
    int wgmma;
};
static struct facts facts_of[SGEMM_MAX_DEVICES];
static struct rung_pool pools[SGEMM_MAX_DEVICES];

static cudaError_t ask_device(const struct sgemm_device *d, void *entry)
{
    (void)d;
    return opt_in_kernels(kernels, 3, &((struct facts *)entry)->wgmma);
}
static struct sgemm_rung_facts facts_table = SGEMM_RUNG_FACTS(facts_of, ask_device);

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    struct sgemm_device d;
    struct facts f;
    struct wgmma_plan plan;
    cudaError_t err = wgmma_start(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream,
                                  &facts_table, &d, &f, &f.wgmma, &done, &plan);
    if (err != cudaSuccess || done)
        return err;
    CUtensorMap map_a = {}, map_b = {}; /* FEED_COPY passes them unused */
    const int tma_a = tensor_map(&map_a, A, M, K, lda, BM, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    const long long tiles = plan.tiles;
    const int slices = plan.slices;
    float *work = plan.work;
    const int whole = slices == 1;
    unsigned *bt = NULL;
    int k_pad = 0, n_pad = 0;
    if (whole && tma_a && (err = split_b_first(&facts_table, pools, M, N, K, SPLIT_B_MIN_M, B, ldb,
                                                 &bt, &k_pad, &n_pad, stream)))
        return err;
    int feed = FEED_COPY; /* (B^T's map cannot fail: rows of k_pad floats, from the pool) */
    if (bt != NULL && tensor_map(&map_b, (const float *)bt, 2 * n_pad, k_pad, k_pad, BN, BK,
                                 CU_TENSOR_MAP_SWIZZLE_128B))
        feed = FEED_SPLIT_B;
    else if (tma_a && tensor_map(&map_b, B, K, N, ldb, BK, BN, CU_TENSOR_MAP_SWIZZLE_NONE))
        feed = FEED_TMA;
    kernels[feed][whole]<<<(unsigned)(tiles * slices), THREADS, SMEM(whole), stream>>>(
        map_a, map_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slices, work);
    err = cudaGetLastError();
    if (bt != NULL) { /* after the product in stream order, whatever happened to it */
        const cudaError_t freed = rung_memory(&facts_table, pools, 0, (void **)&bt,
                                              stream);
        err = err != cudaSuccess ? err : freed;
    }
    return wgmma_finish(26, feed == FEED_SPLIT_B ? "split-b" : "whole", err, &plan, M, N,
                        K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

extern "C" const struct step step_26 = {
    26, "tf32x3_split_b_first",
    "3xTF32 on wgmma, B split and transposed once before the product (sm_90a)", 90, launch,
    "whole split-b split-k",
};
