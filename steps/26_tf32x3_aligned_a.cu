/*
 * Rung 26 - A copied into rows TMA can read before the product, where its own rows cannot be,
 * so that an odd K, a padded lda or an offset A runs rung 25's fast path.
 *
 * What changes from rung 25
 *   TMA reads a matrix only when its base is 16-byte aligned and its rows a multiple of 16
 *   bytes (tensor_map(), common/tma.cuh). A caller's rows need not be: an odd K, a padded lda,
 *   a pointer a float past an aligned one. Rung 25 then has no map of A, does not split B first
 *   either, and the producers copy both 4 bytes at a time (FEED_COPY): about half its speed.
 *   Here, where A's rows are not TMA's and N is large enough for a copy to pay (ALIGN_A_MIN_N,
 *   common/plan_costs.h), copy_a_first() queues a copy of A into rows of K rounded up to 4
 *   floats, from the pool split B comes from (rung_memory(), common/wgmma_split_b.cuh),
 *   and the product reads the copy: where B's rows are TMA's, or B is split first as in rung 25
 *   (whole tiles, split_b_pays(); B^T's rows are aligned whatever B's are); elsewhere a
 *   copy would not let TMA run, and none is made. It is given back in stream order after the
 *   product (and split-K's sum, which reads A where a sum is not finite); under capture (the
 *   memory would belong to the graph) rung 25's path runs.
 *
 * Why the hardware rewards it
 *   The copy reads and writes M K floats once, O(MK), where the product does O(MNK) work; the
 *   product then brings whole 128-byte swizzled boxes by TMA instead of single floats through
 *   the producers' registers, as on aligned shapes.
 *
 * Prediction: at 4095^3 rung 25 runs 1.32x (make all-bench's shape set), its aligned 4096^3
 *   2.73x. The copy of A moves 2 x 64 MB (~35 us at ~3.7 TB/s), B's split 3 x 64 MB (~50 us),
 *   against ~1.0 ms of product: 4095^3 should come within 10% of 4096^3, ~2.4-2.5x. Aligned
 *   shapes are unchanged.
 *
 * Measured (H200, beside rung 25 in one process on the same inputs, ratio to cuBLAS): 4095^3
 *   1.311 -> 2.598, 4097^3 1.350 -> 2.563, 4096^3 with rows padded by one 1.491 -> 2.627, 8191^3
 *   1.488 -> 2.888, 2048x2048x2047 1.393 -> 2.081, 2279x6252x1561 1.375 -> 2.462, 1297x7412x1823
 *   1.248 -> 2.214; aligned shapes and 256^3-512^3 (no copy) unchanged. Above the prediction:
 *   4096^3 padded runs within 2% of the aligned 4096^3, so the copy and split cost ~2%, not 10%.
 *   make all-bench (results/nvidia-h200/bench.csv, shapes.csv): 1.857 / 2.353 / 2.703 / 2.622x
 *   at 1024 / 2048 / 4096 / 8192, rung 25 1.852 / 2.346 / 2.713 / 2.588 (level: aligned); 4095^3
 *   2.634, 4097^3 2.598, 4096^3 padded 2.657. Still short: with B's rows unaligned and M < 2048
 *   no copy is made (1092x3793x5256: 0.973), nor for N < 512, and products below ~1e9 flops stay
 *   below cuBLAS (256^3 0.749, 512^3 0.862). 168 registers a thread at launch, 0 spills.
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
#include "../common/split_sum.cuh" /* sum_slices, split_slices (rung 21) */
#include "../common/wgmma_split_b.cuh" /* split_b_transposed, rung_memory, split_b_first */

/* A copied into rows of ld floats (ld = K rounded up to 4: 16-byte rows), zeros past K, so that
 * TMA can read it. A 32 x 8 block copies 32 columns of 8 rows a step, coalesced both ways. */
#define COPY_A_ROWS 8
static __global__ void __launch_bounds__(32 * COPY_A_ROWS)
    copy_a_aligned(int M, int K, const float *A, int lda, int ld, float *out)
{
    const int col = (int)blockIdx.x * 32 + (int)threadIdx.x;
    if (col >= ld)
        return;
    for (int row = (int)blockIdx.y * COPY_A_ROWS + (int)threadIdx.y; row < M;
         row += (int)gridDim.y * COPY_A_ROWS)
        out[(size_t)row * ld + col] = col < K ? A[(size_t)row * lda + col] : 0.0f;
}

static const tf32x3_kernel kernels[3][2] = {
    KERNEL_PAIR(FEED_COPY), KERNEL_PAIR(FEED_TMA),
    {NULL, sgemm_tf32x3_wgmma<FEED_SPLIT_B, SPLIT_STAGES_WHOLE>}}; /* split-b: whole tiles only */

/* ---- Per device, once, no stream work (common/device_facts.h): whether the image has the
 * wgmma body, the kernels' opt-in to SMEM bytes of shared memory. Split B's memory and A's
 * copy come from the rung's own pool on each device (common/wgmma_split_b.cuh), under the
 * same lock. */
struct facts {
    int wgmma;
};
static struct facts facts_of[SGEMM_MAX_DEVICES];
static struct rung_pool pools[SGEMM_MAX_DEVICES];

static cudaError_t ask_device(const struct sgemm_device *d, void *entry)
{
    struct facts *f = (struct facts *)entry;
    cudaError_t err = cudaSuccess;
    (void)d;
    f->wgmma = wgmma_image_loaded();
    for (int i = 0; i < 6 && err == cudaSuccess && f->wgmma; ++i)
        if (kernels[i / 2][i % 2] != NULL)
            err = cudaFuncSetAttribute((const void *)kernels[i / 2][i % 2],
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM(i % 2));
    return err;
}
static struct sgemm_rung_facts facts_table = SGEMM_RUNG_FACTS(facts_of, ask_device);

/* A copied into 16-byte rows, queued on the stream: *copy := the copy (rows of *ld floats), NULL
 * where the copy does not pay (N < ALIGN_A_MIN_N), is too large, the stream captures or there is
 * no memory: then A is read as it is. launch() gives it back. */
static cudaError_t copy_a_first(int M, int N, int K, const float *A, int lda, float **copy, int *ld,
                                cudaStream_t stream)
{
    *copy = NULL;
    *ld = (K + 3) / 4 * 4;
    const size_t bytes = sizeof(float) * (size_t)M * (size_t)*ld;
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t err = cudaSuccess;
    if (N < ALIGN_A_MIN_N || bytes > SPLIT_B_MAX_BYTES ||
        (err = cudaStreamIsCapturing(stream, &capture)) || capture != cudaStreamCaptureStatusNone)
        return err;
    if (rung_memory(&facts_table, pools, bytes, (void **)copy, stream) != cudaSuccess) {
        *copy = NULL; /* no memory, or no pool on this device: A read as it is */
        (void)cudaGetLastError();
        return cudaSuccess;
    }
    /* grid.x: ld / 32 <= 2^30 / 128; grid.y at most 65535, the rows beyond in a loop */
    const int row_blocks = (M + COPY_A_ROWS - 1) / COPY_A_ROWS;
    const dim3 grid((unsigned)((*ld + 31) / 32),
                    (unsigned)(row_blocks < 65535 ? row_blocks : 65535));
    copy_a_aligned<<<grid, dim3(32, COPY_A_ROWS), 0, stream>>>(M, K, A, lda, *ld, *copy);
    if ((err = cudaGetLastError()) != cudaSuccess) {
        (void)rung_memory(&facts_table, pools, 0, (void **)copy, stream);
        *copy = NULL;
    }
    return err;
}

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
    int tma_a = tensor_map(&map_a, A, M, K, lda, BM, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    const long long tiles = plan.tiles;
    const int slices = plan.slices;
    float *work = plan.work;
    const int whole = slices == 1;
    /* NEW: A copied where TMA cannot read its own rows and the copy lets the product use TMA:
     * B read by TMA as well, or split first (whole tiles, where split_b_pays()). */
    float *a_copy = NULL;
    int ld_copy = 0;
    const int b_readable = ldb % 4 == 0 && sgemm_aligned16(B);
    if (!tma_a && (b_readable || (whole && split_b_pays(M, N, K))) &&
        (err = copy_a_first(M, N, K, A, lda, &a_copy, &ld_copy, stream)) != cudaSuccess)
        return sgemm_workspace_done(stream, work, err);
    if (a_copy != NULL) {
        if (tensor_map(&map_a, a_copy, M, K, ld_copy, BM, BK, CU_TENSOR_MAP_SWIZZLE_128B)) {
            A = a_copy; /* the product, and split-K's sum, read the copy */
            lda = ld_copy;
            tma_a = 1;
        } else { /* (no TMA in the driver) */
            err = rung_memory(&facts_table, pools, 0, (void **)&a_copy, stream);
            a_copy = NULL;
            if (err != cudaSuccess)
                return sgemm_workspace_done(stream, work, err);
        }
    }
    unsigned *bt = NULL;
    int k_pad = 0, n_pad = 0;
    if (whole && tma_a && (err = split_b_first(&facts_table, pools, M, N, K, B, ldb, &bt, &k_pad,
                                                 &n_pad, stream))) {
        if (a_copy != NULL)
            (void)rung_memory(&facts_table, pools, 0, (void **)&a_copy, stream);
        return err;
    }
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
    err = wgmma_finish(26, feed == FEED_SPLIT_B ? "split-b" : "whole", err, &plan, M, N,
                       K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    if (a_copy != NULL) { /* NEW: after the product and split-K's sum, in stream order */
        const cudaError_t freed = rung_memory(&facts_table, pools, 0, (void **)&a_copy,
                                              stream);
        err = err != cudaSuccess ? err : freed;
    }
    return err;
}

extern "C" const struct step step_26 = {
    26, "tf32x3_aligned_a",
    "3xTF32 on wgmma, A copied into rows TMA can read where its own are not (sm_90a)", 90,
    launch, "whole split-b split-k",
};
