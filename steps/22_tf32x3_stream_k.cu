/*
 * Rung 19 - 3xTF32 on tensor cores with mma.sync: FP32 accuracy from a TF32 unit. Opens Part II:
 * read against rung 18, the last FFMA rung (its diff is the whole of the change).
 *
 * What changes from rung 18
 *   The multiply-adds move to the tensor cores: mma.sync.m16n8k8 with TF32 operands, 16x8 of A
 *   times 8x8 of B into 16x8 of C in one instruction (32 FFMAs do as many). TF32 keeps 10 of
 *   float's 23 fraction bits: a TF32 product errs by up to 2^-11 an operand, 2^13 times float's
 *   u = 2^-24. Part II stays as accurate as SGEMM, so each product is three TF32 products
 *   (3xTF32, as in CUTLASS's sm80 kernels):
 *
 *     x = big + small,   big = tf32(x),   small = x - big   (|small| <= 2^-11 |x|)
 *     a b = a_big b_big + a_big b_small + a_small b_big + a_small b_small
 *
 *   The last term (below 2^-22 |a b|) is dropped, and small reaches the tensor core cut to TF32:
 *   a product errs by up to ~2^-20 |a b|, but the errors cancel in a sum (see Measured).
 *
 * The split costs three instructions per element, two on sm_90
 *   The tensor core reads an operand's top 19 bits. Adding 0x1000, half of the last kept bit,
 *   before the cut rounds to nearest: big = bits + 0x1000, small = x - (big & 0xffffe000), three
 *   instructions (+16% at 4096 against nine with cvt.rna). sm_90: big = cvt.rn.tf32(x), two.
 *
 * Where the products are summed: tensor cores truncate
 *   The tensor core aligns the terms it adds to the largest and cuts the bits below, where FFMA
 *   rounds each addition: run into one accumulator over all of K, the products lose bits against
 *   a growing sum (59.5 u at 4096; cuBLAS SGEMM ~5.6 u). As Ootomo and Yokota (2022), the long sum
 *   stays out of the tensor core, here once a 64-deep K tile: its products run into a zeroed
 *   `chunk` (small terms first), which joins the FP32 `acc` by FADD. The truncation then cuts
 *   2^-23 of a 64-term partial sum: 1.37 u at 4096 (cuBLAS 5.62 u; the paper's FADD per k8 step:
 *   2.1 u, 8x the FADDs).
 *
 * Inf, NaN and the tail of the float range
 *   For x = +-Inf, small = Inf - Inf = NaN: the cross terms turn an Inf that SGEMM returns into
 *   NaN; a finite x within 2^-12 of FLT_MAX rounds up to an Inf big part. Both leave a
 *   non-finite element in acc, as does every input that makes SGEMM's answer Inf or NaN, so the
 *   epilogue recomputes any element whose sum is not finite with a sequential FP32 loop over its
 *   row of A and column of B: the simplest SGEMM's answer, at no cost when C is finite.
 *
 * The other traps
 *   ldmatrix moves 16-bit elements: it cannot transpose 32-bit TF32 operands, so B's fragments
 *   are read with plain LDS, A's with LDS.128 (next section). The small part of an x below
 *   ~2^-115 is subnormal and may be lost: an error below 2^-126 |b| a term. The cross terms stay
 *   TF32: in one bf16 mma (~1.7x) they failed the checks (results/notes/step_19.md).
 *
 * Fragments in a k order of our choosing
 *   An mma sums its eight k at once, so which k a lane's slots hold is free while A's and B's
 *   agree. Taken literally (lane (g, t): k = t and t + 4) a lane's A elements lie four floats
 *   apart. Here lane t holds k = 4t..4t+3 of two k8 steps (4t, 4t + 1 the first; 4t + 2, 4t + 3
 *   the second): one LDS.128 a row for both steps, a K tile 1131 -> 1061 instructions (sm_90).
 *   B follows the same k, XOR-swizzled against bank conflicts (the layout comment below).
 *
 * The tile
 *   A block of 8 warps (2 x 4) computes 128x128 of C; a warp 64x32: 4 x 4 fragments of 16x8,
 *   64 floats of acc and 64 of chunk per thread. K tiles of 64 in two cp.async stages (144
 *   KB; 32 deep, 80 KB, on sm_86 and sm_89): a barrier and a chunk's FADDs per 64 of K, +5% over
 *   32-deep tiles in three stages. Each fragment is split as it is loaded from shared memory.
 *
 * The epilogue, through shared memory
 *   A lane's sums of a fragment are two adjacent floats: stored from registers a warp fills half
 *   of each of 8 sectors. acc goes to the stages' memory first (128 x 136 floats), then each warp
 *   writes a row of C as 32 float4s: whole sectors, a quarter of the stores (store_c).
 *
 * Filling the SMs, as rungs 14-15 do, one block an SM: split-K under two rounds of tiles (a
 *   second kernel sums the slices in order), stream-K for a partial last round (4096: 7.76
 *   rounds of 132 SMs), a share as straight code (in a loop, K tiles ran 17% slower).
 *
 * Prediction: the mma.sync TF32 ceiling (~320 TFLOP/s, H200) caps three products a step at
 *   ~107 TFLOP/s, 2.08x cuBLAS SGEMM, less the split and the FADDs beside the mma; each step
 *   below was predicted before its run (results/notes/step_19.md).
 *
 * Measured (ratio to cuBLAS SGEMM in the same process): H200, `make step=19 run`, 1.283 / 1.406
 *   / 1.465 / 1.481 at 1024 / 2048 / 4096 / 8192, 1.1-1.7 u against FP64 where cuBLAS has 4.5-6.8
 *   u. Each step beside the build before it (H100): the k order +7%, cvt.rn +6%, stream-K +2.3%
 *   at 4096 and +2.9% at 8192 (+12% at 3072), the epilogue +3.7% at 2048 and +35% at 4096x4096x128.
 *   TF32 alone (big x big only): 2.245x and 475.7 u, the reason for three products. The HMMAs
 *   alone (no loads or splits) ran 1.46-1.53x: mma.sync TF32 runs 255 TFLOP/s with this rung's 4
 *   A x 4 B fragments (325 when every mma reads the same registers), ~1.65x for three products,
 *   the ceiling of this operand pattern. 213-254 registers (sm_80-90), 0 spills.
 */
#include <math.h>
#include <stdint.h>

#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/sgemm_workspace.h"
#include "../common/plan_costs.h"
#include "../common/cp_async.cuh" /* cp_async_4, cp_async_16, commit, wait */
#include "../common/flags.cuh"    /* stream-K: raise_flag, wait_flag */

/* ---- The tile ------------------------------------------------------------------------------ */
#define BM      128 /* rows of C per block */
#define BN      128 /* cols of C per block */
#define BK_DEEP 64  /* K depth of one shared-memory tile (eight k8 steps) */
#define BK_LOW  32  /* ... on GPUs with less than SMEM_BYTES(BK_DEEP) per block (sm_86, sm_89) */
#define STAGES  2   /* K tiles in flight */
#define WARPS_M 2
#define WARPS_N 4
#define THREADS (32 * WARPS_M * WARPS_N) /* 256 */
#define WM      (BM / WARPS_M)           /* 64 rows of C per warp */
#define WN      (BN / WARPS_N)           /* 32 cols of C per warp */
#define MI      (WM / 16)                /* 4 fragments of 16x8 along M */
#define NI      (WN / 8)                 /* 4 along N */
/* Layouts in which a warp's fragment loads hit 32 different banks (lane (g, t) = (lane / 4,
 * lane % 4); bk: the K tile's depth). Counted by Nsight Compute at 4096 (H100,
 * before the epilogue's C tile): 0 bank conflicts on shared loads and stores, 100.7 M load
 * wavefronts for 51.9 M loads, the ideal 4 per LDS.128 and 1 per LDS.32.
 * A: rows padded to bk + 16 floats. Lane (g, t) reads a_tile[g][4t..4t+3] with one LDS.128
 *    (tile_products); a quarter warp (g = 0, 1; t = 0..3) covers banks 16g + 4t..4t+3: all 32.
 * B: rows of BN floats, unpadded; element (k, n) is stored at column b_col(k, n), n with its
 *    bits 3-4 XORed by bits 2-3 of k. Lane (g, t) reads rows 4t + c, c the same for the warp,
 *    columns 8j + g: bank 8 (j ^ t) + g mod 32, all 32. The XOR moves groups of 8 floats, so a
 *    16-byte copy lands whole. */
#define A_LD(bk)    ((bk) + 16)
#define B_LD        BN
#define A_STAGE(bk) (BM * A_LD(bk)) /* a_tile[BM][A_LD]: A as stored, row-major */
#define B_STAGE(bk) ((bk) * B_LD)   /* b_tile[bk][B_LD] */
/* 147,456 bytes for BK_DEEP, 81,920 for BK_LOW */
#define SMEM_BYTES(bk) (STAGES * (A_STAGE(bk) + B_STAGE(bk)) * (int)sizeof(float))
/* Split-K: a slice is at least this many K tiles deep; sum_slices() blocks are 32 x SUM_ROWS. */
#define SLICE_MIN_K_TILES 8
#define SUM_ROWS          8

struct stream_k {     /* the stream-K schedule ("Stream-K" below) */
    int dp_tiles;     /* tiles [0, dp_tiles): whole, by sgemm_tf32x3 */
    int sk_tiles;     /* the tiles after them, their K tiles shared out evenly over the blocks */
    float4 *partials; /* one slot of BM * BN floats per block */
    unsigned *flags;  /* flags[w] != 0: slot w holds block w's start of a tile, for block w + 1 */
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800

/* B's column for element (k, n) of a tile: the swizzle of the layout comment above. */
static __device__ __forceinline__ int b_col(int k, int n)
{
    return n ^ (((k >> 2) & 3) << 3);
}

/* x as big + small, both as the 32-bit registers the mma reads (it ignores the low 13 bits);
 * small = x - big as a float. sm_90 rounds big in one instruction (cvt.rn.tf32.f32: SASS
 * F2FP.TF32), sm_80-89 by the carry of 0x1000 (two: IADD, LOP3). */
static __device__ __forceinline__ void split(float x, unsigned *big, unsigned *small)
{
#if __CUDA_ARCH__ >= 900
    unsigned b;
    asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(b) : "f"(x));
    *big = b;
    *small = __float_as_uint(x - __uint_as_float(b));
#else
    const unsigned b = __float_as_uint(x) + 0x1000u;
    *big = b;
    *small = __float_as_uint(x - __uint_as_float(b & 0xffffe000u));
#endif
}

/* d = a b + c for one 16x8x8 fragment: a 16x8 of A (4 registers a lane), b 8x8 of B (2). */
static __device__ __forceinline__ void mma_tf32(float d[4], const unsigned a[4],
                                                const unsigned b[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* One K tile into shared memory: A rows m0.., cols k0..k0+BK-1; B rows k0.., cols n0..n0+BN-1.
 * Outside M, N or K the copies write zeros and read nothing (cp_async.cuh), and a zero adds
 * nothing to any product. VA/VB: 16-byte copies (lda and K, or ldb and N, multiples of 4 and
 * the operand 16-byte aligned), else 4-byte ones. */
template <int BK, int VA, int VB>
static __device__ __forceinline__ void load_tile(float *a_tile, float *b_tile, const float *A,
                                                 int lda, const float *B, int ldb, int M, int N,
                                                 int K, int m0, int n0, int k0)
{
    const int tid = threadIdx.x;
    if (VA) { /* 16-byte copies (BK 64): segment c4 of rows r0, r0 + 16, ..., r0 + 112;
               * from one clamped base by 32-bit offsets, as the 4-byte copies below */
        const int c4 = tid % (BK / 4), r0 = tid / (BK / 4), step = THREADS / (BK / 4);
        const int gk = k0 + 4 * c4, rows_left = M - m0 - r0, k_in = gk < K;
        const float *base = A + (size_t)min(m0 + r0, M - 1) * lda + (k_in ? gk : 0);
        const unsigned dst = (unsigned)__cvta_generic_to_shared(a_tile + r0 * A_LD(BK) + 4 * c4);
#pragma unroll
        for (int i = 0; i < BM / step; ++i) { /* 8 (BK 64), 4 (BK 32) */
            const int ok = k_in && i * step < rows_left;
            cp_async_16(dst + 4u * (unsigned)(i * step * A_LD(BK)),
                        base + (ok ? i * step * lda : 0), ok);
        }
    } else { /* 4-byte copies (BK 64): column c of rows r0, r0 + 4, ..., r0 + 124 */
        /* From one base, clamped into A, by 32-bit offsets (A spans <= INT_MAX floats); a copy
         * outside M or K takes offset 0 and reads nothing: one select per copy, no 64-bit
         * pointer arithmetic. */
        const int c = tid % BK, r0 = tid / BK, step = THREADS / BK;
        const int gk = k0 + c, rows_left = M - m0 - r0, k_in = gk < K;
        const float *base = A + (size_t)min(m0 + r0, M - 1) * lda + min(gk, K - 1);
        const unsigned dst = (unsigned)__cvta_generic_to_shared(a_tile + r0 * A_LD(BK) + c);
#pragma unroll
        for (int i = 0; i < BM / step; ++i) { /* 32 (BK 64), 16 (BK 32) */
            const int ok = k_in && i * step < rows_left;
            cp_async_4(dst + 4u * (unsigned)(i * step * A_LD(BK)),
                       base + (ok ? i * step * lda : 0), ok ? 4 : 0);
        }
    }
    if (VB) { /* 16-byte copies (BK 64): segment c4 of K rows r0, r0 + 8, ..., r0 + 56 */
        const int c4 = tid % (BN / 4), r0 = tid / (BN / 4), step = THREADS / (BN / 4);
        const int gc = n0 + 4 * c4, rows_left = K - k0 - r0, n_in = gc < N;
        const float *base = B + (size_t)min(k0 + r0, K - 1) * ldb + (n_in ? gc : 0);
        const unsigned dst = (unsigned)__cvta_generic_to_shared(b_tile);
#pragma unroll
        for (int i = 0; i < BK / step; ++i) { /* 8 (BK 64), 4 (BK 32) */
            const int ok = n_in && i * step < rows_left, row = r0 + i * step;
            cp_async_16(dst + 4u * (unsigned)(row * B_LD + b_col(row, 4 * c4)),
                        base + (ok ? i * step * ldb : 0), ok);
        }
    } else { /* 4-byte copies (BK 64): column c of K rows r0, r0 + 2, ..., r0 + 62 */
        const int c = tid % BN, r0 = tid / BN, step = THREADS / BN;
        const int gc = n0 + c, rows_left = K - k0 - r0, n_in = gc < N;
        const float *base = B + (size_t)min(k0 + r0, K - 1) * ldb + min(gc, N - 1);
        const unsigned dst = (unsigned)__cvta_generic_to_shared(b_tile);
#pragma unroll
        for (int i = 0; i < BK / step; ++i) { /* 32 (BK 64), 16 (BK 32) */
            const int ok = n_in && i * step < rows_left, row = r0 + i * step;
            cp_async_4(dst + 4u * (unsigned)(row * B_LD + b_col(row, c)),
                       base + (ok ? i * step * ldb : 0), ok ? 4 : 0);
        }
    }
}

/* One K tile's products into chunk, two k8 steps at a time. The mma sums its eight k in one
 * step, so which eight k a step takes, and in which slots, is free as long as A's and B's
 * fragments agree. In this layout lane t takes k = 4t..4t+3 of the 16-deep pair: the first step
 * 4t and 4t + 1 (as the mma's k = t and t + 4), the second 4t + 2 and 4t + 3. Then a lane's A
 * elements of both steps are four consecutive floats of its row: one LDS.128 per row (rows g
 * and g + 8) loads what took eight LDS.32 (k = t and t + 4 of two steps, two rows). B's
 * fragment reads rows 4t + 2h and 4t + 2h + 1 of column g. Per pair, the warp's B fragments are
 * split once (both steps), then per 16-row A fragment the three products into each of its four
 * 16x8 chunks, small terms first (the smallest: a truncating sum loses least when it starts
 * with them). */
template <int BK>
static __device__ __forceinline__ void tile_products(const float *a_tile, const float *b_tile,
                                                     int wn0, float chunk[MI][NI][4], int g,
                                                     int t)
{
#pragma unroll
    for (int kp = 0; kp < BK / 16; ++kp) {
        unsigned b_big[2][NI][2], b_small[2][NI][2]; /* [step of the pair][fragment][k slot] */
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                const int k = kp * 16 + 4 * t + 2 * h;
                const float *p = b_tile + k * B_LD + b_col(k, wn0 + j * 8 + g);
                split(p[0], &b_big[h][j][0], &b_small[h][j][0]);
                split(p[B_LD], &b_big[h][j][1], &b_small[h][j][1]); /* k + 1: same swizzle */
            }
#pragma unroll
        for (int i = 0; i < MI; ++i) {
            const float *p = a_tile + (i * 16 + g) * A_LD(BK) + kp * 16 + 4 * t;
            const float4 row_g = *(const float4 *)p, row_g8 = *(const float4 *)(p + 8 * A_LD(BK));
            /* Fragment layout (PTX ISA, mma.m16n8k8 .tf32): a0 = (g, k slot t), a1 = (g + 8, t),
             * a2 = (g, t + 4), a3 = (g + 8, t + 4). */
            unsigned a_big[2][4], a_small[2][4];
            split(row_g.x, &a_big[0][0], &a_small[0][0]);
            split(row_g8.x, &a_big[0][1], &a_small[0][1]);
            split(row_g.y, &a_big[0][2], &a_small[0][2]);
            split(row_g8.y, &a_big[0][3], &a_small[0][3]);
            split(row_g.z, &a_big[1][0], &a_small[1][0]);
            split(row_g8.z, &a_big[1][1], &a_small[1][1]);
            split(row_g.w, &a_big[1][2], &a_small[1][2]);
            split(row_g8.w, &a_big[1][3], &a_small[1][3]);
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int j = 0; j < NI; ++j) {
                    mma_tf32(chunk[i][j], a_small[h], b_big[h][j]);
                    mma_tf32(chunk[i][j], a_big[h], b_small[h][j]);
                    mma_tf32(chunk[i][j], a_big[h], b_big[h][j]);
                }
        }
    }
}

/* A warp tile's MI x NI fragments of 16x8 sums, 4 floats a lane, set to zero. */
static __device__ __forceinline__ void clear(float frags[MI][NI][4])
{
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                frags[i][j][r] = 0.0f;
}

/* Raw sums to / from a stream-K slot: thread tid's float4 q at q * THREADS + tid (a warp: 512
 * contiguous bytes). .cg: L2 only, where another SM's stores are (its L1 may hold stale lines). */
static __device__ __forceinline__ void store_partial(float4 *slot, float acc[MI][NI][4])
{
    float4 *mine = slot + threadIdx.x;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
            __stcg(&mine[(NI * i + j) * THREADS],
                   make_float4(acc[i][j][0], acc[i][j][1], acc[i][j][2], acc[i][j][3]));
}
static __device__ __forceinline__ void load_partial(const float4 *slot, float acc[MI][NI][4])
{
    const float4 *mine = slot + threadIdx.x;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) {
            const float4 v = __ldcg(&mine[(NI * i + j) * THREADS]);
            acc[i][j][0] = v.x;
            acc[i][j][1] = v.y;
            acc[i][j][2] = v.z;
            acc[i][j][3] = v.w;
        }
}

/* K tiles [j0, j1) of the C tile at (m0, n0) added into acc, one K tile at a time in k order,
 * through STAGES shared-memory stages. init (a stream-K piece that continues another block's
 * tile): acc starts from the raw sums that block left there, once its flag is up; the adds that
 * follow are those a whole tile makes, so the floats are a whole tile's. */
template <int BK, int VA, int VB>
static __device__ __forceinline__ void k_range(float *smem, const float *A, int lda,
                                               const float *B, int ldb, int M, int N, int K,
                                               int m0, int n0, int j0, int j1,
                                               float acc[MI][NI][4], const float4 *init,
                                               unsigned *init_flag)
{
    float *a_tiles = smem, *b_tiles = smem + STAGES * A_STAGE(BK);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int g = lane / 4, t = lane % 4;
    const int k_tiles = j1 - j0;
    /* STAGES - 1 tiles in flight before the loop, one commit group each (empty past the
     * range). */
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles)
            load_tile<BK, VA, VB>(a_tiles + s * A_STAGE(BK), b_tiles + s * B_STAGE(BK), A, lda,
                                  B, ldb, M, N, K, m0, n0, (j0 + s) * BK);
        cp_async_commit();
    }
    if (init) { /* the copies above are on their way meanwhile */
        wait_flag(init_flag);
        load_partial(init, acc);
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
        const int stage = kt % STAGES;
        cp_async_wait(STAGES - 2); /* this thread's copies of tile kt have landed */
        __syncthreads();           /* everyone's; and everyone is done with tile kt - 1 */
        {
            /* into the stage tile kt - 1 used: free since the barrier */
            const int next = kt + STAGES - 1;
            if (next < k_tiles)
                load_tile<BK, VA, VB>(a_tiles + (next % STAGES) * A_STAGE(BK),
                                      b_tiles + (next % STAGES) * B_STAGE(BK), A, lda, B, ldb,
                                      M, N, K, m0, n0, (j0 + next) * BK);
            cp_async_commit();
        }
        float chunk[MI][NI][4];
        clear(chunk);
        tile_products<BK>(a_tiles + stage * A_STAGE(BK) + wm * WM * A_LD(BK),
                          b_tiles + stage * B_STAGE(BK), wn * WN, chunk, g, t);
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r)
                    acc[i][j][r] += chunk[i][j][r]; /* rounded to nearest, outside the TC */
    }
    cp_async_wait_all(); /* only empty groups are left; none may outlive the range */
}

#endif

/* SGEMM's own answer for one element, as a sequential FP32 loop: for a sum that is not finite
 * (its Inf or NaN, or a finite value where only the big parts overflowed). */
static __device__ float sequential_dot(const float *A, int lda, const float *B, int ldb, int K,
                                       int row, int col)
{
    float v = 0.0f;
#pragma unroll 1
    for (int k = 0; k < K; ++k)
        v = fmaf(A[(size_t)row * lda + k], B[(size_t)k * ldb + col], v);
    return v;
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
/* C tile (m0, n0) := alpha acc + beta C, by way of shared memory. Lane (g, t) holds, of each
 * 16x8 fragment, (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1): written to C from the
 * registers, a warp's store would fill half of each 32-byte sector it touches. Through a BM x
 * C_LD tile in the stages' memory, each warp writes one row of 128 floats as 32 float4s: whole
 * sectors, and a quarter of the store instructions. A sum that is not finite is not written
 * here but recomputed below. The caller refills the stages only after a barrier (the stream-K
 * kernel has one between pieces). */
#define C_LD (BN + 8) /* rows 8 banks apart: a half warp's float2 stores hit 32 banks (by the
                       * addresses; not counted) */
static_assert(BM * C_LD * (int)sizeof(float) <= SMEM_BYTES(BK_LOW), "the C tile fits the stages");
static __device__ __forceinline__ void store_c(float *smem, int M, int N, int K, float alpha,
                                               const float *A, int lda, const float *B, int ldb,
                                               float beta, float *C, int ldc, int m0, int n0,
                                               float acc[MI][NI][4])
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int g = lane / 4, t = lane % 4;
    float *c_tile = smem;
    __syncthreads(); /* every warp is done with the last K tile's stage */
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                *(float2 *)(c_tile + (wm * WM + i * 16 + g + 8 * h) * C_LD + wn * WN + j * 8 +
                            2 * t) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
    __syncthreads();
    /* Thread: float4 c4 of rows r0, r0 + 8, ..., r0 + 120 (a warp: one row) */
    const int c4 = threadIdx.x % (BN / 4), r0 = threadIdx.x / (BN / 4);
    const int rows_per_pass = THREADS / (BN / 4), col = n0 + 4 * c4;
    const int vec = ldc % 4 == 0 && (uintptr_t)C % 16 == 0 && col + 3 < N;
    int redo = 0;
#pragma unroll 8 /* in full, the stream-K kernel spilled on sm_80-89 */
    for (int p = 0; p < BM / rows_per_pass; ++p) {
        const int row = m0 + r0 + p * rows_per_pass;
        if (row >= M)
            break;
        const float4 v = *(const float4 *)(c_tile + (r0 + p * rows_per_pass) * C_LD + 4 * c4);
        float *c = C + (size_t)row * ldc + col;
        if (vec && isfinite(v.x) && isfinite(v.y) && isfinite(v.z) && isfinite(v.w)) {
            float4 out = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
            if (beta != 0.0f) {
                const float4 old = *(const float4 *)c;
                out = make_float4(out.x + beta * old.x, out.y + beta * old.y,
                                  out.z + beta * old.z, out.w + beta * old.w);
            }
            *(float4 *)c = out;
        } else {
            const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                if (col + q >= N)
                    continue;
                if (!isfinite(e[q]))
                    redo = 1;
                else
                    c[q] = (beta == 0.0f) ? alpha * e[q] : alpha * e[q] + beta * c[q];
            }
        }
    }
    /* Rare: the sums that are not finite, found again in c_tile; the loop stays rolled (a K
     * loop in each of 64 copies would only bloat the kernel). */
#pragma unroll 1
    for (int e = 0; redo && e < 4 * (BM / rows_per_pass); ++e) {
        const int lr = r0 + (e / 4) * rows_per_pass, row = m0 + lr, cq = col + e % 4;
        if (row >= M || cq >= N || isfinite(c_tile[lr * C_LD + 4 * c4 + e % 4]))
            continue;
        const float v = sequential_dot(A, lda, B, ldb, K, row, cq);
        float *c = C + (size_t)row * ldc + cq;
        *c = (beta == 0.0f) ? alpha * v : alpha * v + beta * *c;
    }
}

#endif

/* C (m0..m0+BM-1) x (n0..n0+BN-1) = A B, `slices` blocks per tile (block b: tile b / slices,
 * K slice b % slices). One slice: the block finishes C. Several: the block writes its partial
 * sums, unscaled, to work[b][BM][BN], and sum_slices() finishes C. */
template <int BK, int VA, int VB>
static __global__ void __launch_bounds__(THREADS, 1)
    sgemm_tf32x3(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                 int ldb, float beta, float *C, int ldc, int slices, float *work)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    extern __shared__ __align__(16) float smem[];
    const int tiles_n = (N - 1) / BN + 1;
    const int tile = (int)blockIdx.x / slices, slice = (int)blockIdx.x % slices;
    const int m0 = (tile / tiles_n) * BM, n0 = (tile % tiles_n) * BN;

    float acc[MI][NI][4];
    clear(acc);

    /* This block's K tiles: [j0, j1), the slices as even as whole tiles allow. */
    const int all_k_tiles = (K - 1) / BK + 1;
    const int j0 = (int)((long long)slice * all_k_tiles / slices);
    const int j1 = (int)((long long)(slice + 1) * all_k_tiles / slices);
    k_range<BK, VA, VB>(smem, A, lda, B, ldb, M, N, K, m0, n0, j0, j1, acc, NULL, NULL);

    if (slices > 1) { /* the whole tile, edges too (zeros there): sum_slices() reads in range */
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int wm = warp / WARPS_N, wn = warp % WARPS_N;
        const int g = lane / 4, t = lane % 4;
        float *out = work + (size_t)blockIdx.x * (BM * BN);
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int row = wm * WM + i * 16 + g + 8 * h, col = wn * WN + j * 8 + 2 * t;
                    *(float2 *)(out + row * BN + col) =
                        make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                }
        return;
    }
    store_c(smem, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, m0, n0, acc);
#elif defined(__CUDA_ARCH__)
    __trap(); /* launch() refuses devices below sm_80 */
#endif
}

/* ---- Stream-K: the last round shared out evenly ---------------------------------------------
 * W blocks resident at once (one per SM), T tiles: whole tiles leave T % W SMs busy in the last
 * round. Tiles [0, dp_tiles), the whole rounds but one, run as whole tiles (sgemm_tf32x3); the
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
    k_range<BK, 1, 1>(smem, A, lda, B, ldb, M, N, K, m0, n0, j0, j1, acc,
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
    sgemm_tf32x3_stream_k(int M, int N, int K, float alpha, const float *A, int lda,
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

/* Split-K's second half: C = alpha (the slices' partial sums, added in slice order) + beta C,
 * one thread per element of C; a sum that is not finite recomputed as in the kernel above. */
static __global__ void sum_slices(int M, int N, int K, float alpha, const float *A, int lda,
                           const float *B, int ldb, float beta, float *C, int ldc, int slices,
                           const float *work)
{
    const int col = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int row = (int)blockIdx.y * SUM_ROWS + (int)threadIdx.y;
    if (row >= M || col >= N)
        return;
    const int tiles_n = (N - 1) / BN + 1;
    const long long tile = (long long)(row / BM) * tiles_n + col / BN;
    const float *p = work + (size_t)tile * slices * (BM * BN) + (row % BM) * BN + col % BN;
    float v = 0.0f;
    for (int s = 0; s < slices; ++s)
        v += p[(size_t)s * (BM * BN)];
    if (!isfinite(v))
        v = sequential_dot(A, lda, B, ldb, K, row, col);
    float *c = C + (size_t)row * ldc + col;
    *c = (beta == 0.0f) ? alpha * v : alpha * v + beta * *c;
}

typedef void (*tf32x3_kernel)(int, int, int, float, const float *, int, const float *, int, float,
                              float *, int, int, float *);
typedef void (*tf32x3_sk_kernel)(int, int, int, float, const float *, int, const float *, int,
                                 float, float *, int, struct stream_k);

/* [deep][va][vb]: deep, K tiles of BK_DEEP (else BK_LOW); va, vb: 16-byte copies of A, B */
static const tf32x3_kernel kernels[2][2][2] = {
    {{sgemm_tf32x3<BK_LOW, 0, 0>, sgemm_tf32x3<BK_LOW, 0, 1>},
     {sgemm_tf32x3<BK_LOW, 1, 0>, sgemm_tf32x3<BK_LOW, 1, 1>}},
    {{sgemm_tf32x3<BK_DEEP, 0, 0>, sgemm_tf32x3<BK_DEEP, 0, 1>},
     {sgemm_tf32x3<BK_DEEP, 1, 0>, sgemm_tf32x3<BK_DEEP, 1, 1>}},
};
/* [deep]: stream-K with 16-byte copies of A and B */
static const tf32x3_sk_kernel sk_kernels[2] = {sgemm_tf32x3_stream_k<BK_LOW>,
                                               sgemm_tf32x3_stream_k<BK_DEEP>};

/* The workspace (common/sgemm_workspace.h): its floats hold WORK_TILES_PER_SM partial tiles of
 * 128x128 per SM (the most split_slices() plans for; stream-K: one slot per block), then its
 * flags (stream-K: one per block). */
#define WORK_TILES_PER_SM (SGEMM_WORKSPACE_FLOATS_PER_SM / (BM * BN))
static_assert(WORK_TILES_PER_SM <= SGEMM_WORKSPACE_FLAGS_PER_SM, "a flag for every slot");

/* ---- Per device, once (common/device_facts.h): the K tile depth its shared memory allows, the
 * opt-in above 48 KB (an attribute of the kernel in that device's context, no stream work, so
 * it may run while a stream captures) and how many stream-K blocks fit at once. */
struct facts {
    int deep;
    long long resident; /* stream-K blocks resident at once; 0: no cooperative launch */
};
static struct facts facts_of[SGEMM_MAX_DEVICES];

static cudaError_t ask_device(const struct sgemm_device *d, void *entry)
{
    struct facts *f = (struct facts *)entry;
    int per_sm = 0;
    cudaError_t err = cudaSuccess;
    f->deep = d->smem_optin >= SMEM_BYTES(BK_DEEP); /* 227 KB on sm_90, 163 on sm_80, 99 on sm_86 */
    const int smem = f->deep ? SMEM_BYTES(BK_DEEP) : SMEM_BYTES(BK_LOW);
    for (int i = 0; i < 4 && err == cudaSuccess; ++i)
        err = cudaFuncSetAttribute((const void *)kernels[f->deep][i / 2][i % 2],
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
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

/* ---- The plans, in units of one block's K tile (~4 us on an H100) on the busiest SM --------
 * Whole tiles: ceil(tiles / SMs) rounds of all k_tiles K tiles of a tile.
 * Split-K: K slices per tile, whole rounds of blocks, ceil(tiles s / sms), times each block's
 * K tiles plus, when split, the partial tile written and read back (MMA_SPLIT_TILE_COST) and the
 * sum kernel. Considered up to two rounds of whole tiles (beyond, the last round is a small
 * part of the time), each slice at least SLICE_MIN_K_TILES deep, within the workspace.
 * Examples on 132 SMs: 64 tiles of 16 K tiles (1024^3) split 2; 144 tiles of 24 (1536^3)
 * split 3, 4 rounds of 8 K tiles instead of 2 rounds of 24, the second nearly empty. The
 * constants were set for 32-deep K tiles (the partial tile then cost ~1.3 of them) and
 * measured there; kept with 64. split_slices() returns the slices (1: no split), *cost the
 * cost of the plan. */
static int split_slices(long long tiles, int K, int bk, int sms, double *cost)
{
    const long long k_tiles = (K - 1) / bk + 1;
    int best = 1;
    double best_cost = (double)((tiles - 1) / sms + 1) * (double)k_tiles;
    const long long most = WORK_TILES_PER_SM * (long long)sms / tiles; /* the workspace's room */
    for (long long s = 2; tiles < 2LL * sms && s <= k_tiles / SLICE_MIN_K_TILES && s <= most;
         ++s) {
        const double rounds = (double)((tiles * s - 1) / sms + 1);
        const double sum_kernel =
            SUM_KERNEL_COST + SUM_KERNEL_COST_PER_BLOCK * (double)(tiles * s);
        const double c =
            rounds * ((double)((k_tiles - 1) / s + 1) + MMA_SPLIT_TILE_COST) + sum_kernel;
        if (c < best_cost) {
            best_cost = c;
            best = (int)s;
        }
    }
    *cost = best_cost;
    return best;
}

/* Stream-K, for more tiles than blocks resident and not a multiple of them: the whole rounds but
 * one (each block all k_tiles of a tile), then a share of the rest's K tiles, plus
 * MMA_STREAM_K_COST: two more pipeline fills and a partial tile written and read back (a share
 * starts and ends mid-tile). *dp_tiles := the tiles run whole. Examples on 132 SMs: 4096^3,
 * 1024 tiles of 64: 6 * 64 + 113 + 3 = 500 against 8 * 64 = 512 (-2.3%; measured on an H200
 * -3.0%); 8192^3, 4096 tiles of 128: 30 * 128 + 132 + 3 = 3975 against 4096 (-3.0%; -2.6%);
 * 2048^3, 256 tiles of 32: 63 + 3 = 66 against 64 (whole tiles). Only with 16-byte copies of
 * A and B (sgemm_tf32x3_stream_k()). */
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
                                   int N, int K,
                                   float alpha, const float *A, int lda, const float *B,
                                   int ldb, float beta, float *C, int ldc, long long tiles,
                                   long long dp_tiles, float *work, cudaStream_t stream,
                                   int *launched)
{
    const int bk = f->deep ? BK_DEEP : BK_LOW;
    struct stream_k sk;
    sk.dp_tiles = (int)dp_tiles;
    sk.sk_tiles = (int)(tiles - dp_tiles);
    sk.partials = (float4 *)work;
    sk.flags = (unsigned *)(work + SGEMM_WORKSPACE_FLOATS(d->sms));
    void *params[] = {&M, &N, &K, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc, &sk};
    *launched = 0;
    cudaError_t err = cudaLaunchCooperativeKernel((const void *)sk_kernels[f->deep],
                                                  dim3((unsigned)f->resident), dim3(THREADS),
                                                  params, (size_t)SMEM_BYTES(bk), stream);
    if (err == cudaErrorCooperativeLaunchTooLarge) {
        (void)cudaGetLastError(); /* not sticky */
        return cudaSuccess;
    }
    if (err == cudaSuccess)
        err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    *launched = 1;
    sgemm_trace(19, "stream-k", M, N, K, f->resident + dp_tiles, 1);
    if (dp_tiles > 0) {
        kernels[f->deep][1][1]<<<(unsigned)dp_tiles, THREADS, SMEM_BYTES(bk), stream>>>(
            M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, 1, NULL);
        err = cudaGetLastError();
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
    if (sgemm_current_cc() < 80)
        return cudaErrorInvalidDevice; /* mma.sync with TF32 and cp.async need sm_80 */
    struct sgemm_device d;
    struct facts f;
    if ((err = sgemm_rung_facts(&facts_table, &d, &f)) != cudaSuccess)
        return err;
    /* 16-byte copies need 16-byte aligned rows and no 4-float segment across the edge. */
    const int va = (lda % 4 == 0) && (K % 4 == 0) && sgemm_aligned16(A);
    const int vb = (ldb % 4 == 0) && (N % 4 == 0) && sgemm_aligned16(B);
    /* One 1-D grid: C spans <= INT_MAX floats, so the block count fits. */
    const long long tiles = (long long)((M - 1) / BM + 1) * ((N - 1) / BN + 1);
    const int bk = f.deep ? BK_DEEP : BK_LOW;
    double split_cost = 0.0;
    int slices = split_slices(tiles, K, bk, d.sms, &split_cost);
    long long dp_tiles = 0;
    const int stream_k = va && vb && f.resident > 0 && tiles > f.resident &&
                         tiles % f.resident != 0 &&
                         stream_k_cost(tiles, K, bk, f.resident, &dp_tiles) < split_cost;
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
        err = launch_stream_k(&d, &f, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, tiles, dp_tiles,
                              work, stream, &launched);
        if (err != cudaSuccess || launched)
            return err;
    }
    slices = work ? slices : 1;
    kernels[f.deep][va][vb]<<<(unsigned)(tiles * slices), THREADS, SMEM_BYTES(bk), stream>>>(
        M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slices, work);
    if ((err = cudaGetLastError()) != cudaSuccess || slices == 1) {
        sgemm_trace(19, "whole", M, N, K, tiles, 1);
        return err;
    }
    const dim3 sum_block(32, SUM_ROWS), sum_grid((N - 1) / 32 + 1, (M - 1) / SUM_ROWS + 1);
    sum_slices<<<sum_grid, sum_block, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                                                   slices, work);
    sgemm_trace(19, "split-k", M, N, K, tiles * slices, slices);
    return cudaGetLastError();
}

extern "C" const struct step step_19 = {
    19, "tf32x3_mma", "3xTF32 on tensor cores with mma.sync: FP32 accuracy from TF32 products",
    80, launch, "whole split-k stream-k",
};
