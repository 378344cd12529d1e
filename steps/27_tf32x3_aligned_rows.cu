/*
 * Rung 27 - A and B copied into rows TMA can read before the product, where their own rows
 * cannot be, so that an odd size, a padded leading dimension or an offset pointer runs rung
 * 25's fast path.
 *
 * What changes from rung 26
 *   TMA reads a matrix only when its base is 16-byte aligned and its rows a multiple of 16
 *   bytes (tensor_map(), common/tma.cuh). A caller's rows need not be: an odd K or N, a padded
 *   lda or ldb, a pointer a float past an aligned one. Rung 26 then has no map of A or B, does
 *   not split B first, and the producers copy them 4 bytes at a time (FEED_COPY): about half its
 *   speed. Here copy_first() queues a copy of such an operand into rows of its width rounded up
 *   to 4 floats, from the pool split B comes from (rung_memory(), common/rung_pool.cuh),
 *   where the product does enough work on each element (the other side of C at least
 *   ALIGN_COPY_MIN, common/plan_costs.h) and the copy lets TMA run: B, unless it is split first
 *   (the split reads any rows and writes aligned ones, and replaces the copy: from
 *   SPLIT_B_COPIED_MIN_M rows, split_b_pays()); A, where B is then
 *   read by TMA or split first. The product and split-K's sum read the copies, given back in
 *   stream order after both; under capture (the memory would belong to the graph) rung 26's
 *   path runs, with the same bits.
 *
 * Why the hardware rewards it
 *   A copy reads and writes an operand once, O(MK) or O(KN), where the product does O(MNK)
 *   work; the product then brings whole 128-byte swizzled boxes by TMA instead of single floats
 *   through the producers' registers, as on aligned shapes.
 *
 * Prediction: at 4095^3 rung 26 ran 1.32x, its aligned 4096^3 2.73x (make all-bench before this
 *   rung). The copy of A moves 2 x 64 MB (~35 us at ~3.7 TB/s), B's split 3 x 64 MB (~50 us),
 *   against ~1.0 ms of product: 4095^3 within 10% of 4096^3, ~2.4-2.5x. With M < 2048 (then the
 *   split's threshold) B is not split first, so its copy is what lets TMA run: 1092x3793x5256
 *   with both operands unaligned from ~1.0 to ~2.2x. Aligned shapes unchanged.
 *
 * Measured (H200, beside rung 26 in one process on the same inputs, `--budget 0.3`, ratio to
 *   cuBLAS): 4095^3 1.319 -> 2.583, 4097^3 1.348 -> 2.523, 4096^3 with rows padded by one 1.499
 *   -> 2.620, 8191^3 1.494 -> 2.855, 2048x2048x2047 1.398 -> 2.085, 1000x1000x999 1.117 ->
 *   1.476; 256^3-512^3 (no copy) unchanged. A's copy beat the prediction: in make all-bench the
 *   padded 4096^3 (through rung 29, which runs this rung's path there) 2.663, this rung's
 *   aligned 4096^3 2.715 (2%). B's copy missed it: make all-bench's random set through rung 29,
 *   against this rung's first form (A alone) in an earlier run, 1092x3793x5256 0.973 -> 1.524,
 *   1132x4250x3590 1.051 -> 1.602, 2019x976x6888 1.095 -> 1.871, not ~2.2: with M < 2048 the
 *   producers still split B tile by tile (rung 25's path), 270 tiles take 3 rounds of 132 SMs,
 *   and the copies move ~200 MB beside ~400 us of product. Since then, where B's rows are
 *   unaligned, B is split first from SPLIT_B_COPIED_MIN_M rows in place of its copy (the build
 *   before and this one, two runs each in one process): 1092x3793x5256 1.522 -> 1.880,
 *   1132x4250x3590 1.608 -> 1.959, 1801x3750x3394 1.887 -> 2.299, 640x8191x2048 1.760 -> 2.128.
 *   168 registers a thread at launch, 0 spills.
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

/* rows x cols of src (rows of ld_src floats) copied into rows of ld floats (cols rounded up to
 * 4: 16-byte rows), zeros past cols, so that TMA can read them. A 32 x 8 block copies 32
 * columns of 8 rows a step, coalesced both ways. */
#define COPY_ROWS 8
static __global__ void __launch_bounds__(32 * COPY_ROWS)
    copy_rows_aligned(int rows, int cols, const float *src, int ld_src, int ld, float *out)
{
    const int col = (int)blockIdx.x * 32 + (int)threadIdx.x;
    if (col >= ld)
        return;
    for (int row = (int)blockIdx.y * COPY_ROWS + (int)threadIdx.y; row < rows;
         row += (int)gridDim.y * COPY_ROWS)
        out[(size_t)row * ld + col] = col < cols ? src[(size_t)row * ld_src + col] : 0.0f;
}

static const tf32x3_kernel kernels[3][2] = {
    KERNEL_PAIR(FEED_COPY), KERNEL_PAIR(FEED_TMA),
    {NULL, sgemm_tf32x3_wgmma<FEED_SPLIT_B, SPLIT_STAGES_WHOLE>}}; /* split-b: whole tiles only */

/* ---- Per device, once, no stream work (common/device_facts.h): whether the image has the
 * wgmma body, the kernels' opt-in to SMEM bytes of shared memory. Split B's memory and the
 * copies come from the rung's own pool on each device (common/rung_pool.cuh), under the
 * same lock. */
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

/* An operand of rows x cols (rows of ld_src floats) copied into 16-byte rows, queued on the
 * stream: *copy := the copy (rows of *ld floats); NULL where it is too large (SPLIT_B_MAX_BYTES),
 * the stream captures (the memory would belong to the graph) or there is no memory: then the
 * operand is read as it is. launch() gives it back. */
static cudaError_t copy_first(int rows, int cols, const float *src, int ld_src, float **copy,
                              int *ld, cudaStream_t stream)
{
    *copy = NULL;
    *ld = (cols + 3) / 4 * 4;
    const size_t bytes = sizeof(float) * (size_t)rows * (size_t)*ld;
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t err = cudaSuccess;
    if (bytes > SPLIT_B_MAX_BYTES ||
        (err = cudaStreamIsCapturing(stream, &capture)) || capture != cudaStreamCaptureStatusNone)
        return err;
    if (rung_memory(&facts_table, pools, bytes, (void **)copy, stream) != cudaSuccess) {
        *copy = NULL; /* no memory, or no pool on this device: read as it is */
        (void)cudaGetLastError();
        return cudaSuccess;
    }
    /* grid.x: ld / 32 <= 2^30 / 128; grid.y at most 65535, the rows beyond in a loop */
    const int row_blocks = (rows + COPY_ROWS - 1) / COPY_ROWS;
    const dim3 grid((unsigned)((*ld + 31) / 32),
                    (unsigned)(row_blocks < 65535 ? row_blocks : 65535));
    copy_rows_aligned<<<grid, dim3(32, COPY_ROWS), 0, stream>>>(rows, cols, src, ld_src, *ld,
                                                               *copy);
    if ((err = cudaGetLastError()) != cudaSuccess) {
        (void)rung_memory(&facts_table, pools, 0, (void **)copy, stream);
        *copy = NULL;
    }
    return err;
}

/* A copy given back (NULL: nothing) after the kernels that read it, in stream order; err, or
 * the error of giving it back. */
static cudaError_t give_back(float **copy, cudaError_t err, cudaStream_t stream)
{
    if (*copy != NULL) {
        const cudaError_t freed = rung_memory(&facts_table, pools, 0, (void **)copy, stream);
        err = err != cudaSuccess ? err : freed;
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
    /* NEW: an operand whose rows TMA cannot read copied into rows it can, where the product
     * does enough work on each of its elements (the other side >= ALIGN_COPY_MIN, plan_costs.h)
     * and the copy lets TMA run: B unless it is split first (split_b_first() reads any rows);
     * A where B is then read by TMA or split first. */
    float *a_copy = NULL, *b_copy = NULL;
    int ld_copy = 0;
    int b_readable = ldb % 4 == 0 && sgemm_aligned16(B);
    const int split_min_m = b_readable ? SPLIT_B_MIN_M : SPLIT_B_COPIED_MIN_M; /* plan_costs.h */
    const int split_b = whole && split_b_pays(M, N, K, split_min_m);
    if (!b_readable && !split_b && M >= ALIGN_COPY_MIN && (tma_a || N >= ALIGN_COPY_MIN)) {
        if ((err = copy_first(K, N, B, ldb, &b_copy, &ld_copy, stream)) != cudaSuccess)
            return sgemm_workspace_done(stream, work, err);
        if (b_copy != NULL) {
            B = b_copy; /* the product, and split-K's sum, read the copy */
            ldb = ld_copy;
            b_readable = 1;
        }
    }
    if (!tma_a && (b_readable || split_b) && N >= ALIGN_COPY_MIN &&
        (err = copy_first(M, K, A, lda, &a_copy, &ld_copy, stream)) != cudaSuccess)
        return sgemm_workspace_done(stream, work, give_back(&b_copy, err, stream));
    if (a_copy != NULL) {
        if (tensor_map(&map_a, a_copy, M, K, ld_copy, BM, BK, CU_TENSOR_MAP_SWIZZLE_128B)) {
            A = a_copy;
            lda = ld_copy;
            tma_a = 1;
        } else if ((err = give_back(&a_copy, cudaSuccess, stream)) != cudaSuccess) {
            /* (no TMA in the driver: B's copy, read by the 4-byte feed, stays until the end) */
            return sgemm_workspace_done(stream, work, give_back(&b_copy, err, stream));
        }
    }
    unsigned *bt = NULL;
    int k_pad = 0, n_pad = 0;
    if (whole && tma_a && (err = split_b_first(&facts_table, pools, M, N, K, split_min_m, B, ldb,
                                                 &bt, &k_pad, &n_pad, stream)))
        return give_back(&b_copy, give_back(&a_copy, err, stream), stream);
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
    err = wgmma_finish(27, feed == FEED_SPLIT_B ? "split-b" : "whole", err, &plan, M, N,
                       K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    /* NEW: the copies after the product and split-K's sum, which reads A and B where a sum is
     * not finite */
    return give_back(&b_copy, give_back(&a_copy, err, stream), stream);
}

extern "C" const struct step step_27 = {
    27, "tf32x3_aligned_rows",
    "3xTF32 on wgmma, A and B copied into rows TMA can read where their own are not (sm_90a)",
    90, launch, "whole split-b split-k",
};
