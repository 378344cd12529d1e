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
 * Measured (H200, ratio to cuBLAS SGEMM timed beside it in one process): 1.837 / 2.342 / 2.700
 *   / 2.894x at 1024 / 2048 / 4096 / 8192, against rung 24's 1.835 / 2.147 / 2.270 / 2.317:
 *   +19% at 4096 (1.041 ms, ~2080 clocks a K tile, 74% of the tensor core's), +25% at 8192,
 *   +9% at 2048, level at 1024 (8 rows of tiles: rung 24's path). 1.13-1.78 u against FP64
 *   (cuBLAS 5.5-6.8 u). 168 registers a thread at launch, 0 spills.
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
#include "../common/split_sum.cuh" /* sum_slices, split_slices (rung 21) */

/* ---- The roles ---- */
#define THREADS (3 * WG) /* warpgroup 0: the producer; 1 and 2: the consumers */
/* B^T stages (the kernel's SPLIT_STAGES): one read by wgmma, one written, and for whole tiles a
 * spare (+3% at 8192; 15-20% slower on the split-K shapes): 230,400 bytes whole, 197,632 sliced */
#define SPLIT_STAGES_WHOLE  3
#define SPLIT_STAGES_SLICED 2
#define SMEM(whole)         SMEM_BYTES((whole) ? SPLIT_STAGES_WHOLE : SPLIT_STAGES_SLICED)
/* Registers per thread after setmaxnreg: the consumers hold acc, chunk and A's fragments;
 * 128 * 56 + 256 * 224 = 64,512 = 384 * 168, what __launch_bounds__(384, 1) gives. */
#define PRODUCER_REGS 56
#define CONSUMER_REGS 224
#define FEED_COPY 0 /* raw A and B by the producer's 4-byte cp.async: TMA cannot describe them */
#define FEED_TMA  1 /* by TMA */
#define FEED_SPLIT_B 2 /* A raw and B^T big and small by TMA, B split before the product */
static_assert(SMEM(1) <= 227 * 1024, "an H100 block holds at most 227 KB");

#if defined(__CUDA_ARCH_FEAT_SM90_ALL) /* sm_90a: wgmma, setmaxnreg */

/* The barriers, one 8-byte mbarrier each, per stage:
 *   raw_full:    the raw tile has landed (TMA's byte count, or the producers' copies);
 *   raw_empty:   everyone who reads the raw tile has read it (384 threads; SPLIT_B: 256);
 *   split_full:  B^T big/small written and fenced (128 producers; SPLIT_B: TMA's byte count);
 *   split_empty: both consumer warpgroups' wgmma on them have completed (256 consumers). */
#define BAR_RAW_FULL    0
#define BAR_RAW_EMPTY   (BAR_RAW_FULL + RAW_STAGES)
#define BAR_SPLIT_FULL  (BAR_RAW_EMPTY + RAW_STAGES)
#define BAR_SPLIT_EMPTY (BAR_SPLIT_FULL + SPLIT_STAGES)
#define BARS            (BAR_SPLIT_EMPTY + SPLIT_STAGES) /* SPLIT_STAGES: the kernel's */

#endif /* sm_90a */

/* C (m0..m0+BM-1) x (n0..n0+BN-1) = A B, `slices` blocks per tile (block b: tile b / slices,
 * K slice b % slices). One slice: the block finishes C. Several: it writes its partial sums to
 * work[b] and sum_slices() finishes C. FEED_TMA: tmap_a and tmap_b describe A and B;
 * FEED_SPLIT_B: tmap_b describes B^T big and small. */
template <int FEED, int SPLIT_STAGES>
static __global__ void __launch_bounds__(THREADS, 1)
    sgemm_tf32x3_wgmma(const __grid_constant__ CUtensorMap tmap_a,
                       const __grid_constant__ CUtensorMap tmap_b, int M, int N, int K,
                       float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                       float *C, int ldc, int slices, float *work)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long bars[BARS];
    const unsigned raw_addr = (unsigned)__cvta_generic_to_shared(smem_raw);
    const unsigned pad = (SMEM_ALIGN - (raw_addr % SMEM_ALIGN)) % SMEM_ALIGN;
    unsigned char *raw = smem_raw + pad; /* [RAW_STAGES][A raw, B raw] */
    unsigned char *bt = raw + RAW_STAGES * RAW_STAGE_BYTES; /* [SPLIT_STAGES][big, small] */
    const unsigned raw_s = raw_addr + pad, bt_s = raw_s + RAW_STAGES * RAW_STAGE_BYTES;
    const unsigned bar = (unsigned)__cvta_generic_to_shared(bars);
#define BAR(i) (bar + 8u * (unsigned)(i))

    const int tid = (int)threadIdx.x;
    int m0, n0;
    tile_origin((int)blockIdx.x / slices, slices, M, N, &m0, &n0);

    /* This block's K tiles: [kt0, kt0 + k_tiles), the slices as even as whole tiles allow. */
    const int slice = (int)blockIdx.x % slices, all_k_tiles = (K - 1) / BK + 1;
    const int kt0 = (int)((long long)slice * all_k_tiles / slices);
    const int k_tiles = (int)((long long)(slice + 1) * all_k_tiles / slices) - kt0;

    if (tid == 0) {
        for (int r = 0; r < RAW_STAGES; ++r) {
            bar_init(BAR(BAR_RAW_FULL + r), 1);
            /* read by the consumers (A) and, where it splits B, the producer */
            bar_init(BAR(BAR_RAW_EMPTY + r), FEED == FEED_SPLIT_B ? 2 * WG : THREADS);
        }
        for (int p = 0; p < SPLIT_STAGES; ++p) {
            bar_init(BAR(BAR_SPLIT_FULL + p), FEED == FEED_SPLIT_B ? 1 : WG);
            bar_init(BAR(BAR_SPLIT_EMPTY + p), 2 * WG);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads(); /* the last block-wide barrier: after it each warpgroup keeps to its role */

    if (tid < WG) {
        /* ---- The producer: brings raw tiles, splits and transposes B ---- */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
        const int p = tid;
        if (FEED == FEED_SPLIT_B) {
            /* Thread 0 alone: A and B^T big and small, each once its stage's readers are done */
            for (int kt = 0; p == 0 && kt < k_tiles; ++kt) {
                const int r = kt % RAW_STAGES, s = kt % SPLIT_STAGES, k0 = (kt0 + kt) * BK;
                const unsigned b_big = bt_s + s * SPLIT_STAGE_BYTES;
                bar_wait(BAR(BAR_RAW_EMPTY + r), ((kt / RAW_STAGES) & 1) ^ 1);
                bar_arrive_expect(BAR(BAR_RAW_FULL + r), A_RAW_BYTES);
                tma_load_2d(raw_s + r * RAW_STAGE_BYTES, &tmap_a, k0, m0, BAR(BAR_RAW_FULL + r));
                bar_wait(BAR(BAR_SPLIT_EMPTY + s), ((kt / SPLIT_STAGES) & 1) ^ 1);
                bar_arrive_expect(BAR(BAR_SPLIT_FULL + s), SPLIT_STAGE_BYTES);
                tma_load_2d(b_big, &tmap_b, k0, n0, BAR(BAR_SPLIT_FULL + s));
                tma_load_2d(b_big + SPLIT_PART_BYTES, &tmap_b, k0, ((N - 1) / BN + 1) * BN + n0,
                            BAR(BAR_SPLIT_FULL + s));
            }
            return;
        }
        /* Raw tile j (block-relative) into stage j % RAW_STAGES once its readers are done.
         * TMA: thread 0 alone; the fallback: all 128, each its own copies. */
        auto fetch = [&](int j) {
            const int r = j % RAW_STAGES;
            const unsigned stage = raw_s + r * RAW_STAGE_BYTES;
            if (FEED == FEED_TMA) {
                if (p == 0) {
                    bar_wait(BAR(BAR_RAW_EMPTY + r), ((j / RAW_STAGES) & 1) ^ 1);
                    bar_arrive_expect(BAR(BAR_RAW_FULL + r), RAW_STAGE_BYTES);
                    tma_load_2d(stage, &tmap_a, (kt0 + j) * BK, m0, BAR(BAR_RAW_FULL + r));
                    tma_load_2d(stage + A_RAW_BYTES, &tmap_b, n0, (kt0 + j) * BK,
                                BAR(BAR_RAW_FULL + r));
                }
            } else {
                bar_wait(BAR(BAR_RAW_EMPTY + r), ((j / RAW_STAGES) & 1) ^ 1);
                const int k0 = (kt0 + j) * BK;
                if (m0 + BM <= M && n0 + BN <= N && k0 + BK <= K) {
                    copy_a_inside(stage, A + (size_t)(m0 + p / BK) * lda + p % BK + k0,
                                  (size_t)4 * lda, p);
                    copy_b_inside(stage, B + (size_t)k0 * ldb + n0 + p, ldb, p);
                } else {
                    copy_a_raw(stage, A, lda, M, K, m0, k0, p);
                    copy_b_raw(stage, B, ldb, N, K, n0, k0, p);
                }
            }
        };
        for (int j = 0; j < RAW_STAGES - 1; ++j) {
            if (j < k_tiles)
                fetch(j);
            if (FEED == FEED_COPY)
                cp_async_commit();
        }
        for (int kt = 0; kt < k_tiles; ++kt) {
            const int r = kt % RAW_STAGES, s = kt % SPLIT_STAGES;
            if (kt + RAW_STAGES - 1 < k_tiles)
                fetch(kt + RAW_STAGES - 1);
            if (FEED == FEED_COPY) {
                /* Groups: tiles 0..kt + RAW_STAGES - 1 (empty past the end); RAW_STAGES - 1
                 * pending: tile kt's copies landed, everyone's after the barrier. */
                cp_async_commit();
                cp_async_wait(RAW_STAGES - 1);
                asm volatile("bar.sync 1, 128;\n" ::: "memory"); /* the producers alone */
                if (p == 0)
                    bar_arrive(BAR(BAR_RAW_FULL + r));
            }
            bar_wait(BAR(BAR_RAW_FULL + r), (kt / RAW_STAGES) & 1);
            bar_wait(BAR(BAR_SPLIT_EMPTY + s), ((kt / SPLIT_STAGES) & 1) ^ 1);
            for (int blk = 0; blk < 2; ++blk) /* two of a tile's 256 blocks a producer */
                split_b_block(raw + r * RAW_STAGE_BYTES + A_RAW_BYTES, bt + s * SPLIT_STAGE_BYTES,
                              p / 8 + 16 * blk, p % 8);
            bar_arrive(BAR(BAR_RAW_EMPTY + r));
            fence_proxy_async();
            bar_arrive(BAR(BAR_SPLIT_FULL + s));
        }
        if (FEED == FEED_COPY)
            cp_async_wait_all(); /* only empty groups are left; none may outlive the block */
        return;
    }

    /* ---- The consumers: warpgroup 1 rows 0..63 of the tile, warpgroup 2 rows 64..127 ---- */
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
    const int wg = tid / WG - 1; /* of the consumers: 0 or 1 */
    const int warp = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int row0 = wg * WG_ROWS + warp * 16 + g; /* this thread's rows: row0, row0 + 8 */
    const int a_row[2] = {row0 * ROW_BYTES, (row0 + 8) * ROW_BYTES};

    float acc[ACC_REGS], chunk[ACC_REGS];
#pragma unroll
    for (int i = 0; i < ACC_REGS; ++i) {
        acc[i] = 0.0f;
        chunk[i] = 0.0f; /* never read (a chunk's first wgmma ignores it), but defined */
    }
    /* A of tile kt into a_next, once TMA or the producer's copies have landed it; its raw stage
     * handed back before the split. */
    auto prepare = [&](int kt, unsigned a_next[K8_STEPS][2][4]) {
        const int r = kt % RAW_STAGES;
        bar_wait(BAR(BAR_RAW_FULL + r), (kt / RAW_STAGES) & 1);
        float2 v[K8_STEPS][2];
        read_a(raw + r * RAW_STAGE_BYTES, a_row, g, t, v);
        bar_arrive(BAR(BAR_RAW_EMPTY + r));
        split_a(v, a_next);
    };
    /* Tile kt, whose A is split in `a`: its twelve wgmma issued once the producer has filled its
     * B^T stage, and while they run, the wait for the tile before's (its B^T stage handed back to
     * the producer, its A registers free) and A of tile kt + 1.
     * After a chunk's last tile (`sums`) and the last tile: the wait for all, chunk into acc by
     * FADD. starts and sums are constants where inlined: ptxas keeps wgmma in flight only across
     * branches it sees are uniform. */
    auto multiply = [&](int kt, unsigned a[K8_STEPS][2][4], unsigned a_next[K8_STEPS][2][4],
                        const int starts, const int sums) {
        const int s = kt % SPLIT_STAGES;
        bar_wait(BAR(BAR_SPLIT_FULL + s), (kt / SPLIT_STAGES) & 1);
        pin_a(a);
        wgmma_fence();
        tile_wgmma(chunk, a, bt_s + s * SPLIT_STAGE_BYTES, starts);
        wgmma_commit();
        if (!starts) { /* tile kt - 1's wgmma still run (a starting tile's are all done) */
            wgmma_wait<1>(chunk, a_next);
            bar_arrive(BAR(BAR_SPLIT_EMPTY + (kt - 1) % SPLIT_STAGES));
        }
        if (kt + 1 < k_tiles)
            prepare(kt + 1, a_next);
        if (sums || kt == k_tiles - 1) {
            wgmma_wait<0>(chunk, a);
            bar_arrive(BAR(BAR_SPLIT_EMPTY + s));
#pragma unroll
            for (int i = 0; i < ACC_REGS; ++i)
                acc[i] += chunk[i]; /* rounded to nearest, outside the tensor core */
            pin(acc);
        }
    };
    /* Two sets of A fragments: the tensor core reads one while the other is filled. The loop
     * goes two tiles at a time so that each set stays in its own registers: one chunk, 64 of K
     * (the tensor core truncates as it adds, so its sums stay short, but each sum drains the
     * warpgroup's wgmma queue). */
    unsigned a0[K8_STEPS][2][4], a1[K8_STEPS][2][4];
    if (k_tiles > 0)
        prepare(0, a0);
    if (k_tiles < SHORT_K_TILES) { /* a short K: a chunk a tile (common/wgmma.cuh) */
        for (int kt = 0; kt < k_tiles; kt += 2) {
            multiply(kt, a0, a1, 1, 1);
            if (kt + 1 < k_tiles)
                multiply(kt + 1, a1, a0, 1, 1);
        }
    } else {
        for (int kt = 0; kt < k_tiles; kt += 2) {
            multiply(kt, a0, a1, 1, 0);
            if (kt + 1 < k_tiles)
                multiply(kt + 1, a1, a0, 0, 1);
        }
    }
    /* named barrier 2: 1 is the producers' */
    finish_tile<2>((float *)raw, tid - WG, row0, acc, slices, work, M, N, K, alpha, A, lda, B,
                   ldb, beta, C, ldc, m0, n0);
#elif defined(__CUDA_ARCH__)
    __trap(); /* no wgmma in this image: launch() asks wgmma_image_loaded() and never gets here */
#endif
}

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

typedef void (*tf32x3_kernel)(const CUtensorMap, const CUtensorMap, int, int, int, float,
                              const float *, int, const float *, int, float, float *, int, int,
                              float *);
/* [FEED][whole tiles] */
#define KERNEL_PAIR(feed) {sgemm_tf32x3_wgmma<feed, SPLIT_STAGES_SLICED>, \
                           sgemm_tf32x3_wgmma<feed, SPLIT_STAGES_WHOLE>}
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
