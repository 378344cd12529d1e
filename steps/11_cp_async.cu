/*
 * Rung 11 - cp.async: global -> shared copies that skip the registers, a three-stage
 * pipeline, and the 128x256 block tile that the freed registers pay for.
 *
 * What changes from rung 10
 *   1. Copies. Rungs 09-10 load a tile into registers (LDG or TLD) and store it to shared
 *      memory (STS) once the load returns. Here one instruction, cp.async (SASS: LDGSTS),
 *      moves the bytes from L2 straight into shared memory: no staging registers, no store
 *      instruction, and the thread never waits for the data; it only waits, later
 *      (cp.async.wait_group), until a whole tile has landed. common/cp_async.cuh has the
 *      PTX. B moves 16 bytes per copy (.cg: L2 only). A moves 4 bytes per copy (.ca): A is
 *      transposed on the way in (a_tile[k][m]), and a 16-byte copy cannot scatter four
 *      floats of a row into four rows. One warp's copy instruction covers 4 rows x 8
 *      consecutive floats (four whole 32-byte sectors); rows of BM+4 floats spread the
 *      transposing writes over all 32 banks, where rung 07's XOR swizzle would leave 2-way
 *      conflicts: lane (row r, slot kk) hits bank (4*kk + r) % 32.
 *   2. A pipeline of 3 shared-memory stages instead of 2: two tiles are in flight while one
 *      is computed. The fragments are still double-buffered in registers.
 *   3. A 128x256 block tile: 8 warps (4 x 2) of 32x128, 8x16 of C per thread (rung 10: 8x8).
 *      Per k step a thread issues 128 FFMA for 6 LDS.128 (rung 10: 64 for 4), and the block
 *      does 128*256/(128+256) = 85 FMAs per float it copies (rung 10: 64). The registers
 *      rung 10 spent on the staged float4s now hold accumulators: 128 + 48 fragment floats
 *      in 233 registers, one block of 8 warps per SM.
 *
 * Why 8 rows of 16, not 16 rows of 8
 *   The FFMAs keep the order of rungs 09-10, row by row (acc[i][0..15] += a[i] * b[0..15]).
 *   ptxas can mark a[i] .reuse along a row, so that an FFMA reads one source from the operand
 *   reuse cache and two from the register file; a row's first FFMA reads all three from the
 *   file, where their banks may collide. Longer rows start half as often: in the K loop 98
 *   of the 1024 FFMAs read three registers from the file with 8x16, 161 with 16x8
 *   (cuobjdump, sm_90). Measured on an H100: 16x8 ran level with rung 10, 8x16
 *   runs ahead of it (below). The order of the FFMAs itself is rung 12's lesson.
 *
 * The pipeline (tile t is commit group t)
 *   prologue: copy tiles 0 and 1, one commit each; wait_group(1); barrier.
 *   iteration t: copy tile t+2 into the stage tile t-1 used (its last reads came before the
 *   barrier that ended iteration t-1), commit (an empty group past the end keeps the count
 *   uniform); k steps 0..6; wait_group(1) (groups 0..t+1 complete) and a barrier (every
 *   thread's copies visible) before the fragments of tile t+1 are read at k step 7.
 *
 * Why the hardware rewards it
 *   FP32 GEMM on an SM is bounded by issue slots: each of the 4 schedulers issues one
 *   instruction per clock and the FP32 pipe takes one warp FFMA per clock, so every LDG,
 *   STS, address add or barrier displaces an FFMA. The K loop is 1117 SASS instructions per
 *   tile, 1024 of them FFMA (92%; rung 10: 90%; cuobjdump, sm_90). The deeper pipeline matters
 *   because one block of 8 warps fills an SM (2 warps per scheduler): few other warps run
 *   while a copy is late, so it must have been issued tiles ago.
 *
 * Edges and alignment (correct for any M, N, K >= 1, any ld, any 4-byte aligned pointers)
 *   - A copy of 0 bytes (or a 16-byte copy with its ignore-src predicate) reads nothing and
 *     writes zeros: rows below M and columns right of N become zeros in shared memory, their
 *     source pointers clamped inside the operand anyway.
 *   - K: the FIRST K tile is the partial one (k = K-8*kt .., slots k < 0 zero-filled), so
 *     every later tile is full and the loop has no K test; each accumulator still adds
 *     k = 0, 1, ..., K-1 in order (the zero slots first), so C is bit for bit cuBLAS's on
 *     exact inputs.
 *   - A is always copied 4 bytes at a time: legal for any lda and alignment. B: 16-byte
 *     copies need ldb % 4 == 0, N % 4 == 0 and a 16-byte aligned B (checked at launch;
 *     else the <0> kernel copies B 4 bytes at a time).
 *   - C: float4 stores (and loads when beta != 0) where ldc % 4 == 0, C is 16-byte aligned
 *     and all 4 columns are inside N; scalar stores otherwise; beta == 0 never reads C. Each
 *     warp store covers 4 rows x 128 contiguous bytes: coalesced without staging.
 *   - Grid: one dimension, block -> tile row by row.
 *   - Below sm_80 there is no cp.async: the launcher returns cudaErrorInvalidDevice.
 *
 * Prediction (written before measuring, H200): 1.04x cuBLAS at 2048-8192: 92% FFMA issue
 * share, minus ~5% of barrier and bank stalls, times 97% wave quantization at 4096.
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 0.360 / 0.973 / 0.971 / 0.991 at
 * 1024 / 2048 / 4096 / 8192, rung 10 in the same run 0.668 / 0.958 / 0.959 / 0.969: ahead by 1-2.3%
 * from 2048 (on an H100, 1-3%), short of the 1.04 predicted. The prediction missed by the order of
 * the FFMAs (rung 12, +4-6%) and, at 1024, by 32 tiles for 132 SMs (rung 13). With 16x8 per thread,
 * this rung's first form, it ran level with rung 10 (0.957 / 0.947 / 0.953). Nsight Compute at
 * 4096: FMA pipe 77.5% (16x8: 75.9%, rung 10 75.9%), dispatch stalls 0.20 per instruction (16x8:
 * 0.24).
 * results/notes/step_11.md has more.
 * Resources (ptxas, sm_90): 233 registers, 37,248 bytes of shared memory, 0 spills.
 */
#include <stdint.h>

#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/cp_async.cuh" /* cp_async_4, cp_async_16, commit, wait */

/* ---- The tile ------------------------------------------------------------------------------ */
#define BK        8  /* K depth of one shared-memory tile */
#define WARPS_M   4  /* warps stacked along M in a block */
#define WARP_N    128 /* cols of C one warp computes */
#define LANES_M   4  /* a warp's 32 lanes form a 4 x 8 grid over its warp tile */
#define LANES_N   8
#define SUB       4 /* a thread's C is made of SUB x SUB sub-tiles, each read with LDS.128 */
#define SUB_N     4 /* sub-tiles per thread along N, LANES_N*SUB = 32 cols apart */
#define TN        (SUB_N * SUB) /* 16 cols of C per thread */
#define TM_MAX    8  /* rows of C per thread */
#define A_PAD     4  /* a_tile rows are BM+4 floats long: conflict-free transposing copies */
#define A_ROWS    4  /* rows of A each thread copies per K tile, one float each */

/* 128x256, 8 warps (4 x 2) of 32x128, 8x16 of C per thread, 3 stages. */
#define L_WARPS_N 2
#define L_SUB_M   2
#define L_STAGES  3
#define L_BM      (WARPS_M * LANES_M * SUB * L_SUB_M) /* 128 */
#define L_BN      (L_WARPS_N * WARP_N)                /* 256 */
#define L_THREADS (32 * WARPS_M * L_WARPS_N)          /* 256 */

/* One pipeline stage: a_tile[BK][BM + A_PAD] (A transposed) then b_tile[BK][BN]. */
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

/* The shape of the kernel, constant at every call (everything below is inlined into it), so
 * every loop is unrolled and every array lives in registers.
 *   warps_n: warps along N;  sub_m: 4x4 sub-tiles per thread along M;
 *   stages: K tiles resident in shared memory;
 *   b16: 1 when B may be copied 16 bytes at a time (ldb % 4 == 0, N % 4 == 0, aligned) */
struct shape {
    int warps_n, sub_m, stages, b16;
};

/* Everything from here to the kernel is sm_80+ device code: cp.async does not exist below. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800

/* ---- Where each thread copies from and to -------------------------------------------------- */
struct copy_plan {
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

/* This thread's copies of one FULL K tile into the stage at byte offset `stage`; the sources
 * then step on to the next K tile. */
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
        else
            cp_async_4(dst, p->b_src + j * p->b_row_gap, p->b_bytes);
    }
    p->b_src += p->b_tile_step;
}

/* The fragments of one k step: 8 values of A's column, 16 of B's row, by LDS.128. */
static __device__ __forceinline__ void load_frags(float *frag_a, float *frag_b, const float *a_k,
                                                  const float *b_k, int sub_m)
{
#pragma unroll
    for (int s = 0; s < sub_m; ++s) { /* sub-tile s: rows 16*s + 0..3 of the warp tile */
        const float4 v = *(const float4 *)(a_k + s * LANES_M * SUB);
        frag_a[4 * s + 0] = v.x;
        frag_a[4 * s + 1] = v.y;
        frag_a[4 * s + 2] = v.z;
        frag_a[4 * s + 3] = v.w;
    }
#pragma unroll
    for (int q = 0; q < SUB_N; ++q) { /* sub-tile q: cols 32*q + 0..3 of the warp tile */
        const float4 v = *(const float4 *)(b_k + q * LANES_N * SUB);
        frag_b[4 * q + 0] = v.x;
        frag_b[4 * q + 1] = v.y;
        frag_b[4 * q + 2] = v.z;
        frag_b[4 * q + 3] = v.w;
    }
}

/* The thread's patch of C inside a tile: rows row0 + 16*s + 0..3 (s < sub_m), cols
 * col0 + 32*q + 0..3 . */
static __device__ __forceinline__ void thread_patch(struct shape sh, int *row0, int *col0)
{
    const int bm = WARPS_M * LANES_M * SUB * sh.sub_m;
    const int tid = threadIdx.x;
    const int lane = tid % 32, warp = tid / 32;
    const int warp_m = warp / sh.warps_n, warp_n = warp % sh.warps_n;
    const int lane_m = (lane / 2) % LANES_M;
    const int lane_n = (lane / 8) * 2 + lane % 2;
    *row0 = warp_m * (bm / WARPS_M) + lane_m * SUB;
    *col0 = warp_n * WARP_N + lane_n * SUB;
}

/* C[row][col .. col+3] := alpha * v + beta * C, as a float4 where ldc, C and the columns
 * allow, else float by float inside N. beta == 0 never reads C. */
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

/* The epilogue: C := alpha*acc + beta*C straight from registers . */
static __device__ __forceinline__ void store_c(struct shape sh, const struct gemm_args *g,
                                               int tile_m, int tile_n, int row0, int col0,
                                               float acc[TM_MAX][TN])
{
    const int bm = WARPS_M * LANES_M * SUB * sh.sub_m;
    const int bn = sh.warps_n * WARP_N;
    const int rows_left = g->M - tile_m * bm, cols_left = g->N - tile_n * bn;
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
            for (int q = 0; q < SUB_N; ++q)
                store_c4(g, c_row, col0 + q * LANES_N * SUB, cols_left, c_vec,
                         &acc[s * SUB + r][q * SUB]);
        }
    }
}

static __device__ __forceinline__ void tile_product(struct shape sh, const struct gemm_args *g,
                                                    int tile)
{
    const int threads = 32 * WARPS_M * sh.warps_n;
    const int bm = WARPS_M * LANES_M * SUB * sh.sub_m;
    const int bn = sh.warps_n * WARP_N;
    const int a_ld = bm + A_PAD;
    const int stages = sh.stages, b16 = sh.b16;
    const int tm = sh.sub_m * SUB;

    extern __shared__ float4 smem_f4[]; /* float4: the stages start 16-byte aligned */
    float *smem = (float *)smem_f4;
    const unsigned smem_addr = (unsigned)__cvta_generic_to_shared(smem);

    const int tiles_n = (g->N - 1) / bn + 1;
    const int tile_m = tile / tiles_n, tile_n = tile % tiles_n; /* row by row */
    const int rows_left = g->M - tile_m * bm; /* >= 1: rows of C in this tile (if < bm) */
    const int cols_left = g->N - tile_n * bn; /* >= 1 */
    const int tid = threadIdx.x;

    /* Copy plan (rung 11): A[row][kk] -> a_tile[kk][row], 4 bytes per copy, 4 rows per
     * thread; B 16 bytes per copy (b16) or 4. Rows below M and columns right of N copy 0
     * bytes from a pointer kept inside the operand. */
    struct copy_plan p;
    const int a_row = tid / BK, a_kk = tid % BK;
    const float *a_row_ptr[A_ROWS]; /* A[row][0] of each of this thread's rows */
#pragma unroll
    for (int i = 0; i < A_ROWS; ++i) {
        const int row = a_row + i * A_ROW_STEP(threads);
        const int inside = row < rows_left;
        a_row_ptr[i] = g->A + (size_t)(tile_m * bm + (inside ? row : 0)) * g->lda;
        p.a_bytes[i] = inside ? 4 : 0;
    }
    p.a_dst = smem_addr + 4u * (unsigned)(a_kk * a_ld + a_row);
    int b_col, b_kr;
    if (b16) {
        b_col = 4 * (tid % (bn / 4));
        b_kr = tid / (bn / 4);
        p.b_bytes = b_col < cols_left; /* 1: copy, 0: zero-fill */
    } else {
        b_col = tid % bn;
        b_kr = tid / bn; /* 0: bn == threads (256) */
        p.b_bytes = b_col < cols_left ? 4 : 0;
    }
    const float *b_col_ptr = g->B + (size_t)tile_n * bn + (p.b_bytes ? b_col : 0);
    p.b_dst = smem_addr + 4u * (unsigned)(BK * a_ld + b_kr * bn + b_col);
    p.b_row_gap = (long long)B_ROW_STEP(b16, bn, threads) * g->ldb;
    p.b_tile_step = (long long)BK * g->ldb;

    int row0, col0;
    thread_patch(sh, &row0, &col0);
    const float *a_frag = smem + row0;             /* + stage + k*a_ld + 16*s */
    const float *b_frag = smem + BK * a_ld + col0; /* + stage + k*bn + 32*q */

    float acc[TM_MAX][TN];
#pragma unroll
    for (int i = 0; i < tm; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;
    float frag_a[2][TM_MAX], frag_b[2][TN]; /* [k & 1]: one in use, one being loaded */

    const int K = g->K;
    const int j0 = 0, j1 = (K - 1) / BK + 1; /* K tiles */
    const int k_first = (K % BK == 0) ? 0 : K % BK - BK;
    const unsigned stage_bytes = 4u * (unsigned)STAGE_FLOATS(bm, bn);
    const unsigned last_stage = (unsigned)(stages - 1) * stage_bytes;

    /* ---- prologue: K tiles j0 .. j0+stages-2 in flight, one commit group per tile ---- */
    {
        /* Tile 0 by hand: a slot with k < 0 copies 0 bytes from a pointer clamped to k = 0. */
        const int k = k_first + a_kk;
#pragma unroll
        for (int i = 0; i < A_ROWS; ++i) {
            cp_async_4(p.a_dst + 4u * (unsigned)(i * A_ROW_STEP(threads)),
                       a_row_ptr[i] + max(k, 0), k >= 0 ? p.a_bytes[i] : 0);
            p.a_src[i] = a_row_ptr[i] + (k + BK); /* tile 1: k + 8 >= 1 */
        }
#pragma unroll
        for (int j = 0; j < B_LOADS(b16, bn, threads); ++j) {
            const int kb = k_first + b_kr + j * B_ROW_STEP(b16, bn, threads);
            const unsigned dst = p.b_dst + 4u * (unsigned)(j * B_ROW_STEP(b16, bn, threads) * bn);
            const float *src = b_col_ptr + (long long)max(kb, 0) * g->ldb;
            if (b16)
                cp_async_16(dst, src, kb >= 0 ? p.b_bytes : 0); /* k < 0: zero-fill */
            else
                cp_async_4(dst, src, kb >= 0 ? p.b_bytes : 0);
        }
        p.b_src = b_col_ptr + (long long)(k_first + BK + b_kr) * g->ldb; /* tile 1 */
    }
    cp_async_commit();
#pragma unroll
    for (int s = 1; s < stages - 1; ++s) {
        if (j0 + s < j1)
            copy_tile(&p, (unsigned)s * stage_bytes, bn, threads, b16);
        cp_async_commit(); /* an empty group when the range is short: the counting stays uniform */
    }
    cp_async_wait(stages - 2);
    __syncthreads();
    load_frags(frag_a[0], frag_b[0], a_frag, b_frag, sh.sub_m);

    unsigned read_stage = 0;           /* byte offset of the stage holding tile t */
    unsigned write_stage = last_stage; /* byte offset of the stage receiving tile t+stages-1 */

    for (int t = j0; t < j1; ++t) {
        if (t + stages - 1 < j1)
            copy_tile(&p, write_stage, bn, threads, b16);
        cp_async_commit();
        write_stage = (write_stage == last_stage) ? 0u : write_stage + stage_bytes;

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int cur = k % 2, nxt = cur ^ 1;
            int next_k = k + 1;
            if (k == BK - 1) {
                cp_async_wait(stages - 2);
                __syncthreads();
                read_stage = (read_stage == last_stage) ? 0u : read_stage + stage_bytes;
                next_k = 0;
            }
            const float *a_k = (const float *)((const char *)a_frag + read_stage) + next_k * a_ld;
            const float *b_k = (const float *)((const char *)b_frag + read_stage) + next_k * bn;
            load_frags(frag_a[nxt], frag_b[nxt], a_k, b_k, sh.sub_m);
            /* The outer product of this k step, row by row (rung 09's order). */
#pragma unroll
            for (int i = 0; i < tm; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] = fmaf(frag_a[cur][i], frag_b[cur][j], acc[i][j]);
        }
    }
    cp_async_wait_all(); /* only empty groups can be left; leave nothing in flight anyway */

    store_c(sh, g, tile_m, tile_n, row0, col0, acc);
}

#endif /* sm_80+ device code */

/* Block b computes C tile b. One block of 256 threads per SM: 128 accumulators + 48 fragment
 * floats need 233 registers. Below sm_80 it traps; the launcher never gets there. */
template <int B16>
static __global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_cp_async(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                   int ldb, float beta, float *C, int ldc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const struct shape sh = {L_WARPS_N, L_SUB_M, L_STAGES, B16};
    tile_product(sh, &g, (int)blockIdx.x);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

/* a >= 1; (a + b - 1) / b could overflow for a near INT_MAX */
static long long ceil_div(long long a, long long b)
{
    return (a - 1) / b + 1;
}

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    cudaError_t err = sgemm_prologue(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, &done);
    if (err != cudaSuccess || done)
        return err;
    if (sgemm_current_cc() < 80)
        return cudaErrorInvalidDevice; /* cp.async needs sm_80 or newer */

    /* 16-byte copies of B need 16-byte aligned row starts (ldb % 4 == 0, B aligned) and
     * N % 4 == 0, so that no 4-float segment straddles column N; otherwise 4-byte copies. */
    const int b16 = (ldb % 4 == 0) && (N % 4 == 0) && sgemm_aligned16(B);
    /* One 1-D grid, a block per tile: C spans <= INT_MAX floats, so the count fits gridDim.x
     * and no row slabs are needed. 37,248 bytes of dynamic shared memory: under the 48 KB
     * that needs no opt-in. */
    const long long tiles = ceil_div(M, L_BM) * ceil_div(N, L_BN);
    const int smem = SMEM_BYTES(L_STAGES, L_BM, L_BN);
    if (b16)
        sgemm_cp_async<1><<<(unsigned)tiles, L_THREADS, smem, stream>>>(M, N, K, alpha, A, lda, B,
                                                                    ldb, beta, C, ldc);
    else
        sgemm_cp_async<0><<<(unsigned)tiles, L_THREADS, smem, stream>>>(M, N, K, alpha, A, lda, B,
                                                                    ldb, beta, C, ldc);
    return cudaGetLastError();
}

extern "C" const struct step step_11 = {
    11, "cp_async", "cp.async: multi-stage copies that skip registers, 128x256 block tiles", 80,
    launch,
};
