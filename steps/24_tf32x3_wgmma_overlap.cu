/*
 * Rung 24 - the tensor core kept busy: rung 23's wgmma issued, and the next K tile split while
 * they run.
 *
 * What changes from rung 23
 *   wgmma is asynchronous: issued, it runs while the warpgroup goes on, until wgmma.wait_group.
 *   Rung 23 waits for a tile's twelve at once (wait_group 0), so the tensor core idles while the
 *   block waits at its barriers and splits the next tile. Here (multiply()):
 *   - B^T has two stages: tile kt's wgmma read one while the block splits tile kt + 1's B into
 *     the other (prepare());
 *   - A has two sets of fragment registers, a0 and a1: the wgmma of tile kt read one while
 *     tile kt + 1's A is split into the other. The loop goes two tiles a turn, so that each set
 *     stays in its own registers;
 *   - a tile waits with wait_group 1: for the tile before's wgmma (whose B^T stage and A set the
 *     next tile reuses), not its own;
 *   - `chunk` joins `acc` every two tiles (64 of K), not every tile: each FADD of chunk into acc
 *     waits for all of the warpgroup's wgmma, which drains the queue this rung keeps full; the
 *     tensor core truncates as it adds, so a longer chunk loses more. Two tiles measured
 *     fastest on the H100 build (every tile 1.84x at 4096, two 2.18x, four 2.14x).
 *
 * Why the hardware rewards it
 *   The tensor core and the other pipes run at once: while 24 wgmma (1536 clocks of tensor
 *   core) run, the block's splits, shared-memory stores and loads, and copies go through the
 *   integer, FP32 and load/store pipes.
 *
 * Prediction: from the measured ~3400 clocks a K tile at 4096 (rung 23), with the split of the
 *   next tile behind the tensor core: ~2300 clocks, +45%. Chunks of 64 of K: the rms error of
 *   the H100 build rose from 3.1e-7 (a tile) to 4.8e-7 (two), 6.9e-7 (three), 9.1e-7 (four).
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 1.657 / 1.713 /
 *   1.753 / 1.774x at 1024 / 2048 / 4096 / 8192, against rung 23's 1.581 / 1.588 / 1.613 /
 *   1.643: +9% at 4096, a fifth of the prediction (4096: 1.532 ms, ~3050 clocks a K tile). The two
 *   barriers a tile remain: the warpgroup that finishes its share of the split first waits for
 *   the other before it may issue, and every thread still both splits and issues.
 *   1.07-1.77 u against FP64 (cuBLAS 4.7-6.8 u); rms 4.6-5.0e-7 (rung 23: 2.5-3.7e-7; cuBLAS
 *   5.7e-7-1.6e-6). 231 and 235 registers, 0 spills.
 *
 * Build: wgmma exists only for sm_90a (`make` picks it on an sm_90 GPU). Elsewhere the kernel is
 *   __trap(), and launch() returns cudaErrorNoKernelImageForDevice instead.
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/sgemm_workspace.h"
#include "../common/wgmma.cuh"     /* the tile, split, wgmma, split_b_block, copies, finish_tile */
#include "../common/split_sum.cuh" /* sum_slices, split_slices (rung 22) */

#define THREADS   (2 * WG) /* two warpgroups: each copies, splits and multiplies */
#define FEED_COPY 0        /* 4-byte copies: a row or a base not 16-byte aligned */
#define FEED_VEC  1        /* 16-byte copies */
#define SPLIT_STAGES 2     /* B^T stages: one read by wgmma while the next is written */

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/* A raw K tile by 16-byte cp.async (K and N multiples of 4: a chunk is wholly in or out; out,
 * it is zeros), 128 threads p for each operand: A's chunk p % 8 of rows p / 8 + 16i, B's chunk
 * p % 32 of rows p / 32 + 4i. */
static __device__ __forceinline__ void copy_a_16(unsigned stage, const float *A, int lda, int M,
                                                 int K, int m0, int k0, int p)
{
    const int c = p % 8, r0 = p / 8, k = k0 + 4 * c;
#pragma unroll
    for (int i = 0; i < BM / 16; ++i) {
        const int row = r0 + 16 * i, ok = k < K && m0 + row < M;
        cp_async_16(stage + SWZ(row, c), A + (ok ? (m0 + row) * lda + k : 0), ok);
    }
}
static __device__ __forceinline__ void copy_b_16(unsigned stage, const float *B, int ldb, int N,
                                                 int K, int n0, int k0, int p)
{
    const int c = p % 32, r0 = p / 32, col = n0 + 4 * c;
#pragma unroll
    for (int i = 0; i < BK / 4; ++i) {
        const int row = r0 + 4 * i, ok = col < N && k0 + row < K;
        cp_async_16(stage + A_RAW_BYTES + row * B_RAW_ROW_BYTES + 16 * c,
                    B + (ok ? (k0 + row) * ldb + col : 0), ok);
    }
}
#endif

/* C (m0..m0+BM-1) x (n0..n0+BN-1) = A B, `slices` blocks per tile (block b: tile b / slices,
 * K slice b % slices). One slice: the block finishes C. Several: it writes its partial sums to
 * work[b] and sum_slices() finishes C. */
template <int FEED>
static __global__ void __launch_bounds__(THREADS, 1)
    sgemm_tf32x3_wgmma(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                       int ldb, float beta, float *C, int ldc, int slices, float *work)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const unsigned raw_addr = (unsigned)__cvta_generic_to_shared(smem_raw);
    const unsigned pad = (SMEM_ALIGN - (raw_addr % SMEM_ALIGN)) % SMEM_ALIGN;
    unsigned char *raw = smem_raw + pad; /* [RAW_STAGES][A raw, B raw] */
    unsigned char *bt = raw + RAW_STAGES * RAW_STAGE_BYTES; /* [SPLIT_STAGES][big, small] */
    const unsigned raw_s = raw_addr + pad, bt_s = raw_s + RAW_STAGES * RAW_STAGE_BYTES;
    int m0, n0;
    tile_origin((int)blockIdx.x / slices, slices, M, N, &m0, &n0);

    /* This block's K tiles: [kt0, kt0 + k_tiles), the slices as even as whole tiles allow. */
    const int slice = (int)blockIdx.x % slices, all_k_tiles = (K - 1) / BK + 1;
    const int kt0 = (int)((long long)slice * all_k_tiles / slices);
    const int k_tiles = (int)((long long)(slice + 1) * all_k_tiles / slices) - kt0;

    const int tid = (int)threadIdx.x, wg = tid / WG, p = tid % WG;
    const int warp = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int row0 = wg * WG_ROWS + warp * 16 + g; /* this thread's rows: row0, row0 + 8 */
    const int a_row[2] = {row0 * ROW_BYTES, (row0 + 8) * ROW_BYTES};

    /* Raw tile j (block-relative) into stage j % RAW_STAGES: warpgroup 0 copies A, 1 B. */
    auto fetch = [&](int j) {
        const unsigned stage = raw_s + (j % RAW_STAGES) * RAW_STAGE_BYTES;
        const int k0 = (kt0 + j) * BK;
        if (FEED == FEED_VEC) {
            if (wg == 0)
                copy_a_16(stage, A, lda, M, K, m0, k0, p);
            else
                copy_b_16(stage, B, ldb, N, K, n0, k0, p);
        } else if (m0 + BM <= M && n0 + BN <= N && k0 + BK <= K) {
            if (wg == 0)
                copy_a_inside(stage, A + (size_t)(m0 + p / BK) * lda + p % BK + k0,
                              (size_t)4 * lda, p);
            else
                copy_b_inside(stage, B + (size_t)k0 * ldb + n0 + p, ldb, p);
        } else if (wg == 0) {
            copy_a_raw(stage, A, lda, M, K, m0, k0, p);
        } else {
            copy_b_raw(stage, B, ldb, N, K, n0, k0, p);
        }
    };
    for (int j = 0; j < RAW_STAGES - 1; ++j) { /* one commit group a tile, empty past the end */
        if (j < k_tiles)
            fetch(j);
        cp_async_commit();
    }

    float acc[ACC_REGS], chunk[ACC_REGS];
#pragma unroll
    for (int i = 0; i < ACC_REGS; ++i) {
        acc[i] = 0.0f;
        chunk[i] = 0.0f; /* never read (a chunk's first wgmma ignores it), but defined */
    }
    /* Tile kt made ready for its wgmma: once everyone's copies of it have landed and everyone's
     * wgmma on B^T stage kt % SPLIT_STAGES are done (the barrier), the next raw tile is asked
     * for, B split into that B^T stage and A into a_next; the second barrier: B^T whole. */
    auto prepare = [&](int kt, unsigned a_next[K8_STEPS][2][4]) {
        const unsigned char *stage = raw + (kt % RAW_STAGES) * RAW_STAGE_BYTES;
        cp_async_wait(RAW_STAGES - 2); /* this thread's copies of tile kt have landed */
        __syncthreads();
        if (kt + RAW_STAGES - 1 < k_tiles)
            fetch(kt + RAW_STAGES - 1); /* into the stage tile kt - 1 used */
        cp_async_commit();
        split_b_block(stage + A_RAW_BYTES, bt + (kt % SPLIT_STAGES) * SPLIT_STAGE_BYTES, tid / 8,
                      tid % 8);
        fence_proxy_async(); /* B^T, as wgmma will read it */
        float2 v[K8_STEPS][2];
        read_a(stage, a_row, g, t, v);
        split_a(v, a_next);
        __syncthreads();
    };
    /* Tile kt, whose A is split in `a`: its twelve wgmma issued, and while they run, the wait for
     * the tile before's (its B^T stage and A registers free) and tile kt + 1 prepared.
     * After a chunk's last tile (`sums`) and the last tile: the wait for all, chunk into acc by
     * FADD. starts and sums are constants where inlined: ptxas keeps wgmma in flight only across
     * branches it sees are uniform. */
    auto multiply = [&](int kt, unsigned a[K8_STEPS][2][4], unsigned a_next[K8_STEPS][2][4],
                        const int starts, const int sums) {
        pin_a(a);
        wgmma_fence();
        tile_wgmma(chunk, a, bt_s + (kt % SPLIT_STAGES) * SPLIT_STAGE_BYTES, starts);
        wgmma_commit();
        if (!starts) /* tile kt - 1's wgmma still run (a starting tile's are all done) */
            wgmma_wait<1>(chunk, a_next);
        if (kt + 1 < k_tiles)
            prepare(kt + 1, a_next);
        if (sums || kt == k_tiles - 1) {
            wgmma_wait<0>(chunk, a);
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
    cp_async_wait_all(); /* only empty groups are left; none may outlive the block */
    finish_tile<1>((float *)raw, tid, row0, acc, slices, work, M, N, K, alpha, A, lda, B, ldb,
                   beta, C, ldc, m0, n0);
#elif defined(__CUDA_ARCH__)
    __trap(); /* no wgmma in this image: launch() asks wgmma_image_loaded() and never gets here */
#endif
}

typedef void (*tf32x3_kernel)(int, int, int, float, const float *, int, const float *, int, float,
                              float *, int, int, float *);
static const tf32x3_kernel kernels[2] = {sgemm_tf32x3_wgmma<FEED_COPY>,
                                         sgemm_tf32x3_wgmma<FEED_VEC>};
#define SMEM (SMEM_BYTES(SPLIT_STAGES)) /* 197,632: four raw stages and two of B^T */

/* ---- Per device, once, no stream work (common/device_facts.h): whether the image has the
 * wgmma body, and the kernels' opt-in to SMEM bytes of shared memory. */
struct facts {
    int wgmma;
};
static struct facts facts_of[SGEMM_MAX_DEVICES];

static cudaError_t ask_device(const struct sgemm_device *d, void *entry)
{
    struct facts *f = (struct facts *)entry;
    cudaError_t err = cudaSuccess;
    (void)d;
    f->wgmma = wgmma_image_loaded();
    for (int i = 0; i < 2 && err == cudaSuccess && f->wgmma; ++i)
        err = cudaFuncSetAttribute((const void *)kernels[i],
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM);
    return err;
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
    /* 16-byte copies need 16-byte aligned rows and no 4-float chunk across the edge. */
    const int vec = lda % 4 == 0 && K % 4 == 0 && sgemm_aligned16(A) && ldb % 4 == 0 &&
                    N % 4 == 0 && sgemm_aligned16(B);
    const long long tiles = plan.tiles;
    const int slices = plan.slices;
    float *work = plan.work;
    kernels[vec]<<<(unsigned)(tiles * slices), THREADS, SMEM, stream>>>(
        M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slices, work);
    return wgmma_finish(24, "whole", cudaGetLastError(), &plan, M, N, K, alpha, A, lda, B,
                        ldb, beta, C, ldc, stream);
}

extern "C" const struct step step_24 = {
    24, "tf32x3_wgmma_overlap",
    "3xTF32 on wgmma, the next tile split while the tensor core multiplies (sm_90a)", 90,
    launch, "whole split-k",
};
