/*
 * The 128x256 FFMA kernel of rung 12 in pieces, for the rungs from 13 on that schedule it: the
 * tile sizes (16x8 of C per thread, rung 12's; the smaller tiles of rungs 13 and 17), the copy
 * plan and copies (rung 11: cp.async, A transposed on the way in, B by 16 or 4 bytes), the
 * fragments of a k step, a thread's patch of C and the epilogue, and the FFMA order measured in
 * rung 12. Rung 11 keeps its own copies (its 8x16 form): there they are the lesson. Rung 12
 * includes this file and writes its own K loop; rungs 13-19 share theirs (ffma_loop.cuh).
 */
#ifndef SGEMM_LADDER_FFMA_TILE_CUH
#define SGEMM_LADDER_FFMA_TILE_CUH

#include <stdint.h>
#include "cp_async.cuh" /* cp_async_4, cp_async_16, commit, wait */

#define BK        8  /* K depth of one shared-memory tile */
#define WARPS_M   2  /* warps stacked along M in a block */
#define WARP_N    64 /* cols of C one warp computes: WARP_COLS(SUB_N) */
#define LANES_M   4  /* a warp's 32 lanes form a 4 x 8 grid over its warp tile */
#define LANES_N   8
#define SUB       4 /* a thread's C is made of SUB x SUB sub-tiles, each read with LDS.128 */
#define SUB_N     2 /* sub-tiles per thread along N, LANES_N*SUB = 32 cols apart */
#define WARP_COLS(sub_n) (LANES_N * SUB * (sub_n)) /* a warp tile's cols, sub_n sub-tiles across */
#define TN        (SUB_N * SUB) /* 8 cols of C per thread */
#define TM_MAX    16 /* rows of C per thread */
#define A_PAD     4  /* a_tile rows are BM+4 floats long: conflict-free transposing copies */
#define A_ROWS    4  /* rows of A each thread copies per K tile, one float each */
#define L_WARPS_N 4 /* 128x256, 8 warps (2 x 4) of 64x64, 16x8 of C per thread, 3 stages */
#define L_SUB_M   4
#define L_STAGES  3
#define L_BM      (WARPS_M * LANES_M * SUB * L_SUB_M) /* 128 */
#define L_BN      (L_WARPS_N * WARP_N)                /* 256 */
#define L_THREADS (32 * WARPS_M * L_WARPS_N)          /* 256 */
#define S_WARPS_N 2 /* 64x128, 4 warps (2 x 2) of 32x64, 8x8 of C per thread, 4 blocks/SM */
#define S_SUB_M   2
#define S_STAGES  4 /* a lone block has one warp per scheduler: a stage more hides a late copy */
#define S_BM      (WARPS_M * LANES_M * SUB * S_SUB_M) /* 64 */
#define S_BN      (S_WARPS_N * WARP_N)                /* 128 */
#define S_THREADS (32 * WARPS_M * S_WARPS_N)          /* 128 */
#define STAGE_FLOATS(bm, bn)       (BK * ((bm) + A_PAD) + BK * (bn))
#define SMEM_BYTES(stages, bm, bn) ((stages)*STAGE_FLOATS(bm, bn) * (int)sizeof(float))

struct gemm_args {
    int M, N, K;
    float alpha;
    const float *A;
    int lda;
    const float *B;
    int ldb;
    float beta;
    float *C;
    int ldc;
};
/* A kernel's shape, constant at every call (all below is inlined): every loop unrolls, every
 * array stays in registers. sub_m, sub_n: 4x4 sub-tiles a thread along M, N (sub_n is SUB_N but
 * in rung 14's 64x64 tile); b16: 16-byte copies of B; c_rows: C written a row of the lane grid
 * at a time, for C's unaligned rows (store_c_rows(); 0 where a kernel leaves it out). */
struct shape {
    int warps_n, sub_m, stages, b16, sub_n, c_rows;
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 /* sm_80+ device code (cp.async) */
struct copy_plan {              /* where each thread copies from and to (rung 11) */
    const float *a_src[A_ROWS]; /* this thread's A float in each of its rows, next K tile */
    const float *b_src;         /* this thread's first B float, next K tile */
    long long b_row_gap;        /* floats between this thread's B rows */
    long long b_tile_step;      /* floats from one K tile of B to the next: BK * ldb */
    int a_bytes[A_ROWS];        /* 4, or 0 for a row below M: zero-fill, nothing read */
    int b_bytes;                /* b16: 1 if the 16-byte segment is inside N, else 0; b4: 4 or 0 */
    unsigned a_dst, b_dst;      /* shared addresses of this thread's first A, B float (stage 0) */
};
#define A_ROW_STEP(threads)          ((threads) / BK)
#define B_LOADS(b16, bn, threads)    ((b16) ? BK * (bn) / (4 * (threads)) : BK * (bn) / (threads))
#define B_ROW_STEP(b16, bn, threads) (BK / B_LOADS(b16, bn, threads))

/* This thread's copies of one FULL K tile into the stage at byte offset `stage`; sources move on */
static __device__ __forceinline__ void copy_tile(struct copy_plan *p, unsigned stage, int bn,
                                                 int threads, int b16)
{
#pragma unroll
    for (int i = 0; i < A_ROWS; ++i) {
        cp_async_4(p->a_dst + stage + 4u * (unsigned)(i * A_ROW_STEP(threads)), p->a_src[i],
                   p->a_bytes[i]);
        p->a_src[i] += BK;
    }
#pragma unroll
    for (int j = 0; j < B_LOADS(b16, bn, threads); ++j) {
        const unsigned dst =
            p->b_dst + stage + 4u * (unsigned)(j * B_ROW_STEP(b16, bn, threads) * bn);
        if (b16)
            cp_async_16(dst, p->b_src + j * p->b_row_gap, p->b_bytes);
        else cp_async_4(dst, p->b_src + j * p->b_row_gap, p->b_bytes);
    }
    p->b_src += p->b_tile_step;
}

/* The fragments of one k step: 16 (or 8) values of A's column, 8 (or 4) of B's row, by LDS.128. */
static __device__ __forceinline__ void load_frags(float *frag_a, float *frag_b, const float *a_k,
                                                  const float *b_k, int sub_m, int sub_n)
{
#pragma unroll
    for (int s = 0; s < sub_m; ++s) { /* sub-tile s: rows 16*s + 0..3 of the warp tile */
        const float4 v = *(const float4 *)(a_k + s * LANES_M * SUB);
        frag_a[4 * s + 0] = v.x; frag_a[4 * s + 1] = v.y;
        frag_a[4 * s + 2] = v.z; frag_a[4 * s + 3] = v.w;
    }
#pragma unroll
    for (int q = 0; q < sub_n; ++q) { /* sub-tile q: cols 32*q + 0..3 of the warp tile */
        const float4 v = *(const float4 *)(b_k + q * LANES_N * SUB);
        frag_b[4 * q + 0] = v.x; frag_b[4 * q + 1] = v.y;
        frag_b[4 * q + 2] = v.z; frag_b[4 * q + 3] = v.w;
    }
}

/* The thread's patch of C in a tile: rows row0 + 16*s + 0..3, cols col0 + 32*q + 0..3 (rung 11) */
static __device__ __forceinline__ void thread_patch(struct shape sh, int *row0, int *col0)
{
    const int bm = WARPS_M * LANES_M * SUB * sh.sub_m;
    const int tid = threadIdx.x;
    const int lane = tid % 32, warp = tid / 32;
    const int warp_m = warp / sh.warps_n, warp_n = warp % sh.warps_n;
    const int lane_m = (lane / 2) % LANES_M;
    const int lane_n = (lane / 8) * 2 + lane % 2;
    *row0 = warp_m * (bm / WARPS_M) + lane_m * SUB;
    *col0 = warp_n * WARP_COLS(sh.sub_n) + lane_n * SUB;
}

/* C[row][col .. col+3] := alpha*v + beta*C, a float4 where it can, else by float; beta 0: no C */
static __device__ __forceinline__ void store_c4(const struct gemm_args *g, float *c_row, int col,
                                                int cols_left, int c_vec, const float *v)
{
    const float alpha = g->alpha, beta = g->beta;
    if (c_vec && col + 3 < cols_left) {
        float4 *c4 = (float4 *)(c_row + col);
        float4 out = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
        if (beta != 0.0f) {
            const float4 old = *c4;
            out.x += beta * old.x;
            out.y += beta * old.y;
            out.z += beta * old.z;
            out.w += beta * old.w;
        }
        *c4 = out;
    } else {
#pragma unroll
        for (int c = 0; c < SUB; ++c) {
            if (col + c < cols_left) {
                float *cp = c_row + col + c;
                *cp = (beta == 0.0f) ? alpha * v[c] : alpha * v[c] + beta * *cp;
            }
        }
    }
}

/* C's rows not 16-byte aligned: store_c4() would write a thread's four floats of a row one a
 * store, a quarter of each 32-byte sector the warp's store touches. Here the warp writes the
 * rows of its 4 x 8 lane grid one at a time, lane L on column L of each 32-column run: whole
 * sectors. Lane L takes float L % 4 of lane (row j, column L / 4) by shuffles, every lane taking
 * part. Its own kernels (sh.c_rows): in the others' code it would move the K loop's registers. */
static __device__ __forceinline__ void store_c_rows(struct shape sh, const struct gemm_args *g,
                                                    int tile_m, int tile_n, int rows_left,
                                                    int cols_left, float acc[TM_MAX][TN])
{
    const int bm = WARPS_M * LANES_M * SUB * sh.sub_m;
    const int bn = sh.warps_n * WARP_COLS(sh.sub_n);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int warp_row = (warp / sh.warps_n) * (bm / WARPS_M);
    const int warp_col = (warp % sh.warps_n) * WARP_COLS(sh.sub_n);
    const int from_n = lane / SUB, e = lane % SUB;  /* the lane whose float this lane writes, */
    const int from = (from_n / 2) * 8 + from_n % 2; /* in row 0 of the lane grid (thread_patch) */
    float *c_tile = g->C + (size_t)tile_m * bm * g->ldc + (size_t)tile_n * bn;
#pragma unroll
    for (int s = 0; s < sh.sub_m; ++s)
#pragma unroll
        for (int r = 0; r < SUB; ++r)
#pragma unroll
            for (int q = 0; q < sh.sub_n; ++q)
#pragma unroll
                for (int j = 0; j < LANES_M; ++j) {
                    const float *v = &acc[s * SUB + r][q * SUB];
                    const float t0 = __shfl_sync(0xffffffffu, v[0], from + 2 * j);
                    const float t1 = __shfl_sync(0xffffffffu, v[1], from + 2 * j);
                    const float t2 = __shfl_sync(0xffffffffu, v[2], from + 2 * j);
                    const float t3 = __shfl_sync(0xffffffffu, v[3], from + 2 * j);
                    const float x = e == 0 ? t0 : e == 1 ? t1 : e == 2 ? t2 : t3;
                    const int row = warp_row + s * LANES_M * SUB + j * SUB + r;
                    const int col = warp_col + q * LANES_N * SUB + lane;
                    if (row < rows_left && col < cols_left) {
                        float *c = c_tile + (size_t)row * g->ldc + col;
                        *c = (g->beta == 0.0f) ? g->alpha * x : g->alpha * x + g->beta * *c;
                    }
                }
}

/* The epilogue: C := alpha*acc + beta*C straight from registers (rung 11); sh.c_rows: by rows of
 * the lane grid (store_c_rows()). */
static __device__ __forceinline__ void store_c(struct shape sh, const struct gemm_args *g,
                                               int tile_m, int tile_n, int row0, int col0,
                                               float acc[TM_MAX][TN])
{
    const int bm = WARPS_M * LANES_M * SUB * sh.sub_m;
    const int bn = sh.warps_n * WARP_COLS(sh.sub_n);
    const int rows_left = g->M - tile_m * bm, cols_left = g->N - tile_n * bn;
    if (sh.c_rows) {
        store_c_rows(sh, g, tile_m, tile_n, rows_left, cols_left, acc);
        return;
    }
    const int c_vec = ((g->ldc & 3) == 0) && ((((uintptr_t)g->C) & 15u) == 0);
#pragma unroll
    for (int s = 0; s < sh.sub_m; ++s) {
#pragma unroll
        for (int r = 0; r < SUB; ++r) {
            const int row = row0 + s * LANES_M * SUB + r;
            if (row >= rows_left)
                continue;
            float *c_row = g->C + (size_t)(tile_m * bm + row) * g->ldc + tile_n * bn;
#pragma unroll
            for (int q = 0; q < sh.sub_n; ++q)
                store_c4(g, c_row, col0 + q * LANES_N * SUB, cols_left, c_vec,
                         &acc[s * SUB + r][q * SUB]);
        }
    }
}

#endif /* sm_80+ device code */

/* The large tile's 128 FFMAs of a k step in rung 12's order; X(i, j): acc[i][j] += a[i] * b[j] */
#define FFMA_ORDER_16x8                                                                            \
    X(11, 1) X(15, 1) X(12, 1) X(10, 1) X(13, 1) X(6, 1) X(4, 1) X(7, 1)                           \
    X(1, 1) X(9, 1) X(14, 1) X(2, 1) X(3, 1) X(5, 1) X(8, 1) X(0, 1)                               \
    X(0, 6) X(8, 6) X(5, 6) X(3, 6) X(2, 6) X(14, 6) X(9, 6) X(1, 6)                               \
    X(7, 6) X(4, 6) X(6, 6) X(13, 6) X(10, 6) X(12, 6) X(15, 6) X(11, 6)                           \
    X(11, 0) X(15, 0) X(12, 0) X(10, 0) X(13, 0) X(6, 0) X(4, 0) X(7, 0)                           \
    X(1, 0) X(9, 0) X(14, 0) X(2, 0) X(3, 0) X(5, 0) X(8, 0) X(0, 0)                               \
    X(0, 3) X(8, 3) X(5, 3) X(3, 3) X(2, 3) X(14, 3) X(9, 3) X(1, 3)                               \
    X(7, 3) X(4, 3) X(6, 3) X(13, 3) X(10, 3) X(12, 3) X(15, 3) X(11, 3)                           \
    X(11, 4) X(15, 4) X(12, 4) X(10, 4) X(13, 4) X(6, 4) X(4, 4) X(7, 4)                           \
    X(1, 4) X(9, 4) X(14, 4) X(2, 4) X(3, 4) X(5, 4) X(8, 4) X(0, 4)                               \
    X(0, 5) X(8, 5) X(5, 5) X(3, 5) X(2, 5) X(14, 5) X(9, 5) X(1, 5)                               \
    X(7, 5) X(4, 5) X(6, 5) X(13, 5) X(10, 5) X(12, 5) X(15, 5) X(11, 5)                           \
    X(11, 7) X(15, 7) X(12, 7) X(10, 7) X(13, 7) X(6, 7) X(4, 7) X(7, 7)                           \
    X(1, 7) X(9, 7) X(14, 7) X(2, 7) X(3, 7) X(5, 7) X(8, 7) X(0, 7)                               \
    X(0, 2) X(8, 2) X(5, 2) X(3, 2) X(2, 2) X(14, 2) X(9, 2) X(1, 2)                               \
    X(7, 2) X(4, 2) X(6, 2) X(13, 2) X(10, 2) X(12, 2) X(15, 2) X(11, 2)

#endif /* SGEMM_LADDER_FFMA_TILE_CUH */
