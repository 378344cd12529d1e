/*
 * Rung 23 - 3xTF32 on wgmma: rung 22's arithmetic on Hopper's warpgroup tensor-core instruction,
 * every thread still copying, splitting and multiplying in step.
 *
 * What changes from rung 22
 *   The product. Rung 22's warps each issue mma.sync.m16n8k8: 16x8x8 from registers, 48 of them
 *   a k8 step for a warp's 64x32 of C. Here the four warps of a warpgroup issue one
 *   wgmma.mma_async.m64n128k8 together: 64x128x8, A from registers, B read by the tensor core
 *   from shared memory through a matrix descriptor (sm_90a only; common/wgmma.cuh). The block
 *   is two warpgroups, 64 rows of the 128x128 tile each, and a 32-deep K tile is twelve wgmma a
 *   warpgroup: per k8 step small x big, big x small, big x big into `chunk`, added to `acc` by
 *   FADD after each tile, as in rung 21.
 *   B^T, split. TF32 wgmma reads B only K-major (its transpose flag is for 16-bit types) and
 *   must see big and small, not the raw float. So each K tile the 256 threads split raw B and
 *   store it transposed (split_b_block()): B^T big and small, 128 rows (n) of 128 bytes (k),
 *   16-byte chunk c of row n at c ^ (n % 8), the 128-byte swizzle the descriptor names. A's raw
 *   rows land in the same swizzle (copy_a_16()); each thread splits its fragments of them in
 *   registers (read_a(), split_a()).
 *   Details that keep it FP32-accurate: a k8 step covers 8 consecutive columns of the tile
 *   (lane t's two k are adjacent: one LDS.64 a row and step), so a short K takes few steps,
 *   each three truncating additions; small is rounded to TF32 too, where rung 22's is cut by
 *   the tensor core (up to 8 u a product; at K = 2 that was 10 u against a bound of 10 u).
 *   The copies: 16 bytes where rows allow, 4 bytes elsewhere (common/wgmma.cuh), warpgroup 0
 *   for A, warpgroup 1 for B, four stages. Split-K and its plan are rung 22's (split_sum.cuh).
 *
 * Why the hardware rewards it
 *   One wgmma does the work of 128 mma.sync: B is read once from shared memory for the whole
 *   warpgroup instead of into every warp's registers, and the issue slots and register reads
 *   that 48 mma.sync a step cost go to the split instead.
 *
 * Prediction: a first build of this kind ran 1.84x cuBLAS at 4096 on an H100, against rung 22's
 *   ~1.45x: about +25%.
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 1.581 / 1.588 / 1.613 /
 *   1.643x at 1024 / 2048 / 4096 / 8192, against rung 22's 1.287 / 1.425 / 1.435 / 1.452 in the
 *   same run: +12% at 4096, below the prediction. 4096: 1.662 ms, 993 K tiles an SM, so ~3300
 *   clocks a K tile at ~2 GHz, of which the tensor core needs 24 x 64 = 1536 (H200 dense TF32:
 *   ~1024 multiply-adds a clock an SM). The rest is the split and two barriers, in series with
 *   the products: nothing else runs while the block splits. 1.11-1.24 u against FP64 (cuBLAS
 *   4.7-6.8 u). 211 and 219 registers, 0 spills.
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
    unsigned char *bt = raw + RAW_STAGES * RAW_STAGE_BYTES; /* B^T big, small */
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
        chunk[i] = 0.0f; /* never read (a tile's first wgmma ignores it), but defined */
    }
    unsigned a[K8_STEPS][2][4];
    for (int kt = 0; kt < k_tiles; ++kt) {
        const unsigned char *stage = raw + (kt % RAW_STAGES) * RAW_STAGE_BYTES;
        cp_async_wait(RAW_STAGES - 2); /* this thread's copies of tile kt have landed */
        __syncthreads(); /* everyone's; and everyone's wgmma on tile kt - 1 are done */
        if (kt + RAW_STAGES - 1 < k_tiles)
            fetch(kt + RAW_STAGES - 1); /* into the stage tile kt - 1 used */
        cp_async_commit();
        split_b_block(stage + A_RAW_BYTES, bt, tid / 8, tid % 8);
        fence_proxy_async(); /* B^T, as wgmma will read it */
        __syncthreads();
        float2 v[K8_STEPS][2];
        read_a(stage, a_row, g, t, v);
        split_a(v, a);
        pin_a(a);
        wgmma_fence();
        tile_wgmma(chunk, a, bt_s, 1);
        wgmma_commit();
        wgmma_wait<0>(chunk, a);
#pragma unroll
        for (int i = 0; i < ACC_REGS; ++i)
            acc[i] += chunk[i]; /* rounded to nearest, outside the tensor core */
        pin(acc);
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
#define SMEM (SMEM_BYTES(1)) /* 164,864: four raw stages and one of B^T */

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
    return wgmma_finish(23, "whole", cudaGetLastError(), &plan, M, N, K, alpha, A, lda, B,
                        ldb, beta, C, ldc, stream);
}

extern "C" const struct step step_23 = {
    23, "tf32x3_wgmma",
    "3xTF32 on wgmma: FP32 accuracy from TF32 warpgroup products, in lockstep (sm_90a)", 90,
    launch, "whole split-k",
};
