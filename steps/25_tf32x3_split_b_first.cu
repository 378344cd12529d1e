/*
 * Rung 25 - B split and transposed once, before the product, where enough rows of tiles share
 * it; TMA then brings B^T big and small like A, and the producer only issues copies.
 *
 * What changes from rung 24
 *   Rung 24's producer splits and transposes its tile's B for every K tile: each block redoes
 *   it, so every element of B is split M / 128 times, ~200 instructions a K tile in one warp a
 *   scheduler, about as long as the tile's 1536 clocks of tensor core. Here, where there are 16
 *   rows of tiles or more (M >= SPLIT_B_MIN_M, common/plan_costs.h) and whole tiles run,
 *   split_b_first() queues split_b_transposed() on the stream first: B^T big (rows 0..n_pad -
 *   1) and small (rows n_pad..), k in the tile's K order, 8 bytes per element of B (up to
 *   SPLIT_B_MAX_BYTES, 1 GiB), read through a 32 x 32 block of shared memory so that both B's
 *   rows and B^T's are whole. The product (FEED_SPLIT_B) has thread 0 of the producer bring A
 *   and both B^T parts by TMA, into the 128-byte swizzled layout wgmma reads, and nothing else.
 *   The memory comes from the rung's own pool on the device (split_b_memory(): made at first
 *   use, keeps what is given back, never makes one stream wait for another's memory), taken
 *   and given back in stream order around the product. Where the stream is capturing (the
 *   memory would belong to the graph), for fewer rows and for split-K, rung 24's path runs.
 *   B^T is twice raw B's bytes, and in row order each wave of blocks reads all of it from DRAM:
 *   the bands of 8 tile rows that whole tiles go in (tile_origin(), common/wgmma.cuh, as in
 *   rungs 22-24) keep it in L2.
 *
 * Why the hardware rewards it
 *   The split costs O(KN) once instead of O(MKN / 128) in the product's blocks, and the
 *   consumers' wgmma no longer wait for the producer's split: the K loop is copies, A's split
 *   and wgmma.
 *
 * Prediction: with B passed on unsplit (wrong sums) rung 24's loop ran 20% faster (H100); the
 *   pass itself reads B and writes twice its bytes, ~5% of the product at 4096: +15%.
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 1.886 / 2.296 /
 *   2.730 / 2.682x at 1024 / 2048 / 4096 / 8192, against rung 24's 1.876 / 2.182 / 2.289 /
 *   2.215: +19% at 4096 (1.023 ms, ~2050 clocks a K tile, 75% of the tensor core's), +21% at
 *   8192, +5% at 2048, level at 1024 (8 rows of tiles: rung 24's path). 1.18-1.74 u against
 *   FP64 (cuBLAS 4.9-5.9 u). 168 registers a thread at launch, 0 spills.
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

/* B split once, before the product: bt[n][k] big and bt[n_pad + n][k] small, rows of k_pad
 * floats, k in the tile's K order (b_tile_row()), zeros outside K and N. A 32 x 32 block of B
 * through shared memory, read along B's rows and written along bt's (no bank conflicts). */
#define SPLIT_B_TILE 32
static __global__ void __launch_bounds__(SPLIT_B_TILE * 8)
    split_b_transposed(int K, int N, const float *B, int ldb, int k_pad, int n_pad, unsigned *bt)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ float block[SPLIT_B_TILE][SPLIT_B_TILE + 1]; /* [k][n] */
    const int n0 = (int)blockIdx.x * SPLIT_B_TILE, k0 = (int)blockIdx.y * SPLIT_B_TILE;
    const int x = (int)threadIdx.x, y = (int)threadIdx.y;
#pragma unroll
    for (int r = y; r < SPLIT_B_TILE; r += 8)
        block[r][x] = k0 + r < K && n0 + x < N ? B[(size_t)(k0 + r) * ldb + n0 + x] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int r = y; r < SPLIT_B_TILE; r += 8) { /* row n0 + r of bt, position k0 + x */
        unsigned big, small;
        split(block[b_tile_row(x / 4, x % 4)][r], &big, &small);
        const size_t at = (size_t)(n0 + r) * k_pad + k0 + x;
        bt[at] = big;
        bt[(size_t)n_pad * k_pad + at] = small;
    }
#elif defined(__CUDA_ARCH__)
    __trap(); /* as the product: launch() never gets here without the sm_90a image */
#endif
}

static const tf32x3_kernel kernels[3][2] = {
    KERNEL_PAIR(FEED_COPY), KERNEL_PAIR(FEED_TMA),
    {NULL, sgemm_tf32x3_wgmma<FEED_SPLIT_B, SPLIT_STAGES_WHOLE>}}; /* split-b: whole tiles only */

/* ---- Per device, once, no stream work (common/device_facts.h): whether the image has the
 * wgmma body, the kernels' opt-in to SMEM bytes of shared memory, split B's memory pool. */
struct facts {
    int wgmma;
    cudaMemPool_t pool; /* split_b_first()'s memory; NULL until its first use */
    int no_pool;        /* making it failed: no split-b on this device */
};
static struct facts facts_of[SGEMM_MAX_DEVICES];

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

/* B split before the product (FEED_SPLIT_B) where enough rows of tiles share it (each would
 * split all of B again) and its copy is not too large (1 GiB: K x N = 2^27, 11585^2). */

/* Memory for split B from the rung's own pool on this device (made at first use: it keeps what
 * is given back, and never makes one stream wait for another's memory), taken (bytes > 0) or
 * given back in stream order, in relaxed capture mode (a global capture elsewhere stays valid). */
static cudaError_t split_b_memory(size_t bytes, unsigned **bt, cudaStream_t stream)
{
    int device = 0;
    cudaError_t err = cudaGetDevice(&device); /* < SGEMM_MAX_DEVICES: sgemm_rung_facts() saw */
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    if (err != cudaSuccess || (err = cudaThreadExchangeStreamCaptureMode(&mode)) != cudaSuccess)
        return err;
    pthread_mutex_lock(&facts_table.lock);
    cudaMemPool_t *pool = &facts_of[device].pool;
    if (*pool == NULL && !facts_of[device].no_pool) {
        cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        cuuint64_t keep = UINT64_MAX;
        int no = 0;
        if ((err = cudaMemPoolCreate(pool, &props)) == cudaSuccess &&
            ((err = cudaMemPoolSetAttribute(*pool, cudaMemPoolAttrReleaseThreshold, &keep)) ||
             (err = cudaMemPoolSetAttribute(*pool, cudaMemPoolReuseAllowInternalDependencies,
                                            &no))))
            (void)cudaMemPoolDestroy(*pool);
        facts_of[device].no_pool = err != cudaSuccess;
        *pool = err != cudaSuccess ? NULL : *pool;
    }
    const cudaMemPool_t use = *pool;
    pthread_mutex_unlock(&facts_table.lock);
    if (err == cudaSuccess)
        err = !bytes ? cudaFreeAsync(*bt, stream)
              : use  ? cudaMallocFromPoolAsync((void **)bt, bytes, use, stream)
                     : cudaErrorNotSupported;
    const cudaError_t back = cudaThreadExchangeStreamCaptureMode(&mode);
    if (err == cudaSuccess && back != cudaSuccess && bytes) /* (never seen) */
        (void)cudaFreeAsync(*bt, stream);
    return err != cudaSuccess ? err : back;
}

/* B split once, queued on the stream: *bt := B^T big (rows 0..n_pad - 1) and small (from row
 * n_pad), rows of k_pad floats; NULL where it does not pay, the stream captures (a graph would
 * own the memory) or there is no memory: the producers split B. launch() gives it back. */
static cudaError_t split_b_first(int M, int N, int K, const float *B, int ldb, unsigned **bt,
                                 int *k_pad, int *n_pad, cudaStream_t stream)
{
    *bt = NULL;
    *k_pad = (K - 1) / BK * BK + BK;
    *n_pad = (N - 1) / BN * BN + BN;
    const size_t bytes = 2 * sizeof(unsigned) * (size_t)*k_pad * (size_t)*n_pad;
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t err = cudaSuccess;
    if (M < SPLIT_B_MIN_M || bytes > SPLIT_B_MAX_BYTES ||
        (err = cudaStreamIsCapturing(stream, &capture)) || capture != cudaStreamCaptureStatusNone)
        return err;
    if (split_b_memory(bytes, bt, stream) != cudaSuccess) {
        *bt = NULL; /* no memory, or no pool on this device: the producers split B */
        (void)cudaGetLastError();
        return cudaSuccess;
    }
    /* grid.y: k_pad / 32 <= 2^30 / (8 x 128 x 32) = 32768, within its 65535 */
    const dim3 grid(*n_pad / SPLIT_B_TILE, *k_pad / SPLIT_B_TILE), block(SPLIT_B_TILE, 8);
    split_b_transposed<<<grid, block, 0, stream>>>(K, N, B, ldb, *k_pad, *n_pad, *bt);
    if ((err = cudaGetLastError()) != cudaSuccess) {
        (void)split_b_memory(0, bt, stream);
        *bt = NULL;
    }
    return err;
}

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    cudaError_t err = sgemm_prologue(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, &done);
    if (err != cudaSuccess || done)
        return err;
    if (sgemm_current_cc() != 90)
        return cudaErrorInvalidDevice; /* wgmma is sm_90a: Hopper only, not its successors */
    struct sgemm_device d;
    struct facts f;
    if ((err = sgemm_rung_facts(&facts_table, &d, &f)) != cudaSuccess)
        return err;
    if (!f.wgmma)
        return cudaErrorNoKernelImageForDevice; /* built without sm_90a */
    CUtensorMap map_a = {}, map_b = {}; /* FEED_COPY passes them unused */
    const int tma_a = tensor_map(&map_a, A, M, K, lda, BM, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    /* One 1-D grid: C spans <= INT_MAX floats, so the block count fits. */
    const long long tiles = (long long)((M - 1) / BM + 1) * ((N - 1) / BN + 1);
    double split_cost = 0.0;
    int slices = split_slices(tiles, K, BK, d.sms, &split_cost);
    float *work = NULL;
    if (slices > 1) {
        /* NULL where there is no memory for it: then the whole tiles, which need none. */
        err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
        if (err != cudaSuccess)
            return err;
        slices = work ? slices : 1;
    }
    const int whole = slices == 1;
    unsigned *bt = NULL;
    int k_pad = 0, n_pad = 0;
    if (whole && tma_a && (err = split_b_first(M, N, K, B, ldb, &bt, &k_pad, &n_pad, stream)))
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
        const cudaError_t freed = split_b_memory(0, &bt, stream);
        err = err != cudaSuccess ? err : freed;
    }
    if (err != cudaSuccess || slices == 1) {
        sgemm_trace(25, feed == FEED_SPLIT_B ? "split-b" : "whole", M, N, K, tiles, 1);
        return err;
    }
    sgemm_trace(25, "split-k", M, N, K, tiles * slices, slices);
    /* a workspace made in a capture's graph given back after the kernels (sgemm_workspace.h) */
    return sgemm_workspace_done(
        stream, work,
        launch_sum_slices(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slices, work, stream));
}

extern "C" const struct step step_25 = {
    25, "tf32x3_split_b_first",
    "3xTF32 on wgmma, B split and transposed once before the product (sm_90a)", 90, launch,
    "whole split-b split-k",
};
