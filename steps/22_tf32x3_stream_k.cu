/*
 * Rung 22 - stream-K for the 3xTF32 rung: the last, partial round of tiles shared out evenly.
 *
 * What changes from rung 21
 *   At 4096^2 the 1024 tiles of 128x128 are 7.76 rounds of 132 SMs: the eighth round leaves
 *   24% of them idle. As rung 15 does for the FFMA tile, this rung runs the whole rounds but one
 *   as whole tiles and shares the K tiles of the rest out evenly over one block per SM
 *   (sgemm_mma_stream_k()): block w takes an equal share in a row, at most the end of one tile,
 *   one whole tile and the start of another. A tile shared by blocks w and w + 1 is still summed
 *   in k order: w computes the start first and leaves its raw sums in workspace slot w with a
 *   release flag (store_partial(), raise_flag()); w + 1 computes the rest last, from those sums
 *   after an acquire of the flag (k_range()'s init): the floats of a whole tile. w + 1 waits
 *   on w, so both must be resident: the launch is cooperative, and where the blocks do not all
 *   fit, the plan of rung 21 runs. A share is straight code, up to three pieces, not a loop
 *   around the K loop (in a loop, every K tile ran ~17% slower).
 *   The plan prices stream-K (stream_k_cost()) in rung 21's units: the whole rounds but one,
 *   plus an even share of the rest, plus MMA_STREAM_K_COST (two more pipeline fills and a
 *   partial tile through L2), and takes it where it is cheaper than split_slices()'s plan. Only
 *   with 16-byte copies of A and B: the 4-byte copies' address registers made ptxas spill.
 *
 * Why the hardware rewards it
 *   The last round ends together instead of leaving SMs idle; the price is one 64 KB partial
 *   sum written and read per shared tile, and a second pipeline fill.
 *
 * Prediction (the plan's own counts, 132 SMs): 4096^3, 1024 tiles of 64 K tiles: 6 x 64 + 113
 *   + 3 = 500 against 8 x 64 = 512: +2.4%; 8192^3, 4096 tiles of 128: 3975 against 4096: +3%;
 *   3072^3, 576 tiles of 48: 3 x 48 + 66 + 3 = 213 against 240: +12%; 2048^3 (256
 *   tiles of 32: 66 against 64) whole tiles, unchanged.
 *
 * Measured (H200, one process, ratio to cuBLAS SGEMM timed beside it): 1.296 / 1.759 / 1.415
 *   / 1.625 / 1.462 / 1.491x at 1024 / 1536 / 2048 / 3072 / 4096 / 8192: +2.2% at 4096 and
 *   +2.6% at 8192 over rung 21 (1.8740 -> 1.8312 ms, 14.916 -> 14.511), as predicted; 3072
 *   +12% (0.8874 -> 0.7897 ms), as predicted; 1536 +53% (0.1660 -> 0.1083: 144 tiles of 24 K
 *   tiles on 132 SMs, split-K's 4 rounds of 8 against stream-K's 27 + 3). 1024 and 2048 level.
 *   217-255 registers (sm_90), 0 spills.
 */
#include "../common/step.h"
#include "../common/device_facts.h"
#include "../common/sgemm_workspace.h"
#include "../common/plan_costs.h"
#include "../common/mma_tile.cuh"     /* the 128x128 tile, load_tile, mma_tf32, k_range */
#include "../common/mma_epilogue.cuh" /* store_c, sequential_dot */
#include "../common/tf32x3.cuh"       /* split, tile_products, tf32x3_products */
#include "../common/mma_whole.cuh"    /* sgemm_mma, launch_whole, mma_start */
#include "../common/mma_split_k.cuh"  /* sgemm_mma_slice, sum_slices, split_slices */
#include "../common/flags.cuh"        /* raise_flag, wait_flag */

struct stream_k {     /* the stream-K schedule ("Stream-K" below) */
    int dp_tiles;     /* tiles [0, dp_tiles): whole, by sgemm_mma */
    int sk_tiles;     /* the tiles after them, their K tiles shared out evenly over the blocks */
    float4 *partials; /* one slot of BM * BN floats per block */
    unsigned *flags;  /* flags[w] != 0: slot w holds block w's start of a tile, for block w + 1 */
};

/* ---- Stream-K: the last round shared out evenly ---------------------------------------------
 * W blocks resident at once (one per SM), T tiles: whole tiles leave T % W SMs busy in the last
 * round. Tiles [0, dp_tiles), the whole rounds but one, run as whole tiles (sgemm_mma); the
 * sk_tiles = W + T % W after them go to exactly W blocks, each an equal share of their K tiles
 * in a row: the end of one tile, at most one whole tile, the start of another (a share is at
 * least one tile's K tiles, since sk_tiles >= W). A tile shared by blocks w and w + 1 still adds
 * its K tiles in order: w computes the start FIRST and leaves its raw sums in slot w (flag w),
 * w + 1 the rest LAST, from those sums on: the floats of a whole tile. w + 1 waits on w: safe
 * only if both are resident, so the launch is cooperative. */
template <int BK>
static __device__ __forceinline__ void stream_k_piece(float *smem, int M, int N, int K,
                                                      float alpha, const float *A, int lda,
                                                      const float *B, int ldb, float beta,
                                                      float *C, int ldc,
                                                      const struct stream_k *sk, int tile, int j0,
                                                      int j1, int kt)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const int w = (int)blockIdx.x, tiles_n = (N - 1) / BN + 1, t = sk->dp_tiles + tile;
    const int m0 = (t / tiles_n) * BM, n0 = (t % tiles_n) * BN;
    float acc[MI][NI][4];
    clear(acc);
    k_range<BK, 1, 1, tf32x3_products>(smem, A, lda, B, ldb, M, N, K, m0, n0, j0, j1, acc,
                      j0 > 0 ? sk->partials + (size_t)(w - 1) * (BM * BN / 4) : NULL,
                      j0 > 0 ? &sk->flags[w - 1] : NULL);
    if (j1 < kt) {
        store_partial(sk->partials + (size_t)w * (BM * BN / 4), acc);
        raise_flag(&sk->flags[w]);
    } else {
        store_c(smem, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, m0, n0, acc);
    }
#endif
}

/* Block w's share as (at most) three straight pieces: the start of its last tile (for w + 1), a
 * whole tile between, then the rest of its first tile, whose start block w - 1 made first of
 * all. Not a loop around the K loop: with one (or one kernel for whole tiles and pieces alike),
 * every K tile ran ~17% slower. Only with 16-byte copies of A and B: the 4-byte copies' extra
 * address registers made ptxas spill here. */
template <int BK>
static __global__ void __launch_bounds__(THREADS, 1)
    sgemm_mma_stream_k(int M, int N, int K, float alpha, const float *A, int lda,
                       const float *B, int ldb, float beta, float *C, int ldc,
                          struct stream_k sk)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    extern __shared__ __align__(16) float smem[];
    const int kt = (K - 1) / BK + 1; /* K tiles per C tile */
    const long long total = (long long)sk.sk_tiles * kt;
    const long long begin = total * blockIdx.x / gridDim.x;
    const long long end = total * (blockIdx.x + 1) / gridDim.x;
    const int tf = (int)(begin / kt), tl = (int)((end - 1) / kt);
    const int tf_j0 = (int)(begin - (long long)tf * kt); /* tf's first K tile in the share */
    const int tl_j1 = (int)(end - (long long)tl * kt);   /* tl's K tiles in the share */
    stream_k_piece<BK>(smem, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &sk, tl,
                       tl == tf ? tf_j0 : 0, tl_j1, kt);
    if (tl - tf == 2) {
        __syncthreads(); /* every warp is done with the stages before they are filled again */
        stream_k_piece<BK>(smem, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &sk, tf + 1, 0,
                           kt, kt);
    }
    if (tl > tf) {
        __syncthreads();
        stream_k_piece<BK>(smem, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &sk, tf, tf_j0,
                           kt, kt);
    }
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

typedef void (*mma_sk_kernel)(int, int, int, float, const float *, int, const float *, int,
                              float, float *, int, struct stream_k);
/* [deep]: stream-K with 16-byte copies of A and B */
static const mma_sk_kernel sk_kernels[2] = {sgemm_mma_stream_k<BK_LOW>,
                                            sgemm_mma_stream_k<BK_DEEP>};

/* ---- Per device, once (common/device_facts.h): the K tile depth its shared memory allows, the
 * kernels' opt-in to that much shared memory, and how many stream-K blocks fit at once. */
struct facts {
    int deep;
    long long resident; /* stream-K blocks resident at once; 0: no cooperative launch */
};
static struct facts facts_of[SGEMM_MAX_DEVICES];

static cudaError_t ask_device(const struct sgemm_device *d, void *entry)
{
    struct facts *f = (struct facts *)entry;
    int per_sm = 0;
    f->deep = mma_deep(d);
    const int smem = mma_smem(f->deep);
    cudaError_t err = prepare_whole<tf32x3_products>(f->deep);
    if (err == cudaSuccess)
        err = prepare_slices<tf32x3_products>(f->deep);
    if (err == cudaSuccess)
        err = cudaFuncSetAttribute((const void *)sk_kernels[f->deep],
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (err == cudaSuccess && d->cooperative)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, (const void *)sk_kernels[f->deep], THREADS, (size_t)smem);
    /* a slot and a flag per block: at most WORK_TILES_PER_SM a SM (one fits, on sm_80-90) */
    f->resident = (long long)d->sms * (per_sm < WORK_TILES_PER_SM ? per_sm : WORK_TILES_PER_SM);
    return err;
}
static struct sgemm_rung_facts facts_table = SGEMM_RUNG_FACTS(facts_of, ask_device);

/* Stream-K, for more tiles than blocks resident and not a multiple of them: the whole rounds but
 * one (each block all k_tiles of a tile), then a share of the rest's K tiles, plus
 * MMA_STREAM_K_COST: two more pipeline fills and a partial tile written and read back (a share
 * starts and ends mid-tile). *dp_tiles := the tiles run whole. Examples on 132 SMs: 4096^3,
 * 1024 tiles of 64: 6 * 64 + 113 + 3 = 500 against 8 * 64 = 512 (-2.3%; measured on an H200
 * -3.0%); 8192^3, 4096 tiles of 128: 30 * 128 + 132 + 3 = 3975 against 4096 (-3.0%; -2.6%);
 * 2048^3, 256 tiles of 32: 63 + 3 = 66 against 64 (whole tiles). Only with 16-byte copies of
 * A and B (sgemm_mma_stream_k()). */
static double stream_k_cost(long long tiles, int K, int bk, long long blocks, long long *dp_tiles)
{
    const long long k_tiles = (K - 1) / bk + 1;
    *dp_tiles = (tiles / blocks - 1) * blocks;
    const long long shared = (tiles - *dp_tiles) * k_tiles;
    return (double)(tiles / blocks - 1) * (double)k_tiles + (double)((shared - 1) / blocks + 1) +
           MMA_STREAM_K_COST;
}

/* Stream-K: a cooperative launch of one block per resident slot for the tiles after dp_tiles,
 * then the whole tiles before them. *launched = 0 if the blocks don't fit at once (the caller
 * runs another plan). */
static cudaError_t launch_stream_k(const struct sgemm_device *d, const struct facts *f, int M,
                                   int N, int K, float alpha, const float *A, int lda,
                                   const float *B, int ldb, float beta, float *C, int ldc,
                                   long long tiles, long long dp_tiles, float *work,
                                   cudaStream_t stream, int *launched)
{
    struct stream_k sk;
    sk.dp_tiles = (int)dp_tiles;
    sk.sk_tiles = (int)(tiles - dp_tiles);
    sk.partials = (float4 *)work;
    sk.flags = SGEMM_WORKSPACE_FLAGS(work, d->sms);
    void *params[] = {&M, &N, &K, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc, &sk};
    *launched = 0;
    cudaError_t err = cudaLaunchCooperativeKernel((const void *)sk_kernels[f->deep],
                                                  dim3((unsigned)f->resident), dim3(THREADS),
                                                  params, (size_t)mma_smem(f->deep), stream);
    if (err == cudaErrorCooperativeLaunchTooLarge) {
        (void)cudaGetLastError(); /* not sticky */
        return cudaSuccess;
    }
    if (err == cudaSuccess)
        err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    *launched = 1;
    sgemm_trace(22, "stream-k", M, N, K, f->resident + dp_tiles, 1);
    if (dp_tiles > 0) {
        const struct mma_shape whole = {1, 1, dp_tiles};
        err = launch_whole<tf32x3_products>(f->deep, &whole, M, N, K, alpha, A, lda, B, ldb, beta,
                                            C, ldc, stream);
    }
    return err;
}

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
    const int bk = f.deep ? BK_DEEP : BK_LOW;
    double split_cost = 0.0;
    const int slices = split_slices(s.tiles, K, bk, d.sms, &split_cost);
    long long dp_tiles = 0;
    const int stream_k = s.va && s.vb && f.resident > 0 && s.tiles > f.resident &&
                         s.tiles % f.resident != 0 &&
                         stream_k_cost(s.tiles, K, bk, f.resident, &dp_tiles) < split_cost;
    float *work = NULL;
    if (slices > 1 || stream_k) {
        /* NULL while the stream captures before its first launch (or with no memory for it):
         * then the whole tiles, which need none. */
        err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
        if (err != cudaSuccess)
            return err;
    }
    if (stream_k && work) {
        int launched = 0;
        err = launch_stream_k(&d, &f, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, s.tiles,
                              dp_tiles, work, stream, &launched);
        if (err != cudaSuccess || launched)
            return err;
    }
    if (work == NULL || slices == 1) {
        sgemm_trace(22, "whole", M, N, K, s.tiles, 1);
        return launch_whole<tf32x3_products>(f.deep, &s, M, N, K, alpha, A, lda, B, ldb, beta, C,
                                             ldc, stream);
    }
    sgemm_trace(22, "split-k", M, N, K, s.tiles * slices, slices);
    return launch_slices<tf32x3_products>(f.deep, &s, slices, work, M, N, K, alpha, A, lda, B, ldb,
                                          beta, C, ldc, stream);
}

extern "C" const struct step step_22 = {
    22, "tf32x3_stream_k", "3xTF32 with mma.sync, the last round of tiles shared out by stream-K",
    80, launch, "whole split-k stream-k",
};
