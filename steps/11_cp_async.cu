/*
 * Rung 11 - cp.async: global -> shared copies that skip the registers, a multi-stage
 * pipeline, and a 128x256 block tile (with a 64x128 one for small C, chosen by size).
 *
 * What changes from rung 10
 *   1. Copies. Rung 10 loads a tile into registers (LDG, or a texture fetch) and stores it to
 *      shared memory (STS) after the load returns. Here one instruction, cp.async (SASS:
 *      LDGSTS), moves the bytes from L2 straight into shared memory: no staging registers,
 *      no store instruction, and the thread never waits for the data, it only waits (later,
 *      cp.async.wait_group) until a whole tile has landed. B moves 16 bytes per copy
 *      (.cg, L2 only). A moves 4 bytes per copy (.ca): A is transposed on the way in
 *      (a_tile[k][m]), and a 16-byte copy cannot scatter 4 floats of a row into 4 rows.
 *      With one float per copy, rows of BM+4 floats (padding) spread those transposing
 *      writes over all 32 banks, where rung 07's XOR swizzle would leave 2-way conflicts. One
 *      copy instruction of a warp covers 4 rows x 8 consecutive floats (4 whole 32-byte
 *      sectors): Nsight Compute showed that 8 rows x every other float cost 8 shared-memory
 *      wavefronts per copy instead of 1 (A_WHOLE_SECTORS below). Measured on an H200 at
 *      4096, the copies are still not free of conflicts: the instruction-level counter
 *      smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts reports 25.2M
 *      extra wavefronts on top of the 25.2M the copies need (results/NOTES.md); which of
 *      the A or B copies pays them is not yet separated.
 *   2. A pipeline of L_STAGES (default 3) shared-memory stages instead of 2: up to
 *      L_STAGES-1 tiles are in flight while one is computed. Fragments are still double
 *      buffered in registers (LDS.128 of step k+1 is issued before the FMAs of step k).
 *   3. A 128x256 block tile: 8 warps (2 x 4) of 64x64, 16x8 of C per thread (rung 10: 8x8).
 *      Per k step a thread issues 128 FFMA for 6 LDS.128 (rung 10: 64 for 4), and the
 *      block does 128*256/(128+256) = 85 FMAs per float it copies (rung 10: 64).
 *   4. Dispatch. 128x256 tiles at 1024^2 give only 32 blocks for 132 SMs, so the launcher
 *      also has a 64x128 kernel (4 warps of 32x64, 8x8 per thread: rung 10's warp tile)
 *      and picks whichever makes the busiest SM finish first (use_large_tile() below).
 *      Measured on the H200 (same FFMA order): at 1024 the 64x128 kernel runs 1.16x cuBLAS
 *      where 128x256 would leave 100 SMs idle; at 2048-8192 the 128x256 kernel wins
 *      (forced 64x128: 0.95 / 0.97 / 0.99 at 2048 / 4096 / 8192).
 *   5. Block rasterization: blocks walk RASTER_GROUP (8) tile rows down a column before
 *      moving right, so the blocks resident together share A and B panels in L2.
 *   6. FFMA order: column by column with the rows snaking down and up, so that neighbouring
 *      FFMAs share an operand that ptxas serves from the operand reuse cache (.reuse)
 *      instead of the register file. Row by row, Nsight Compute showed 0.22 dispatch stalls
 *      per instruction, sampled on the FFMAs (cuBLAS: none); this order cut them to 0.15
 *      and was the largest single gain on the H200 (+6-7%, results/notes/step_11.md).
 *
 * Why the hardware rewards it
 *   An FP32 GEMM on an SM is bounded by issue slots: each of the 4 schedulers issues one
 *   instruction per clock and the FP32 pipe takes one warp FFMA per clock, so every LDG,
 *   STS, address add or barrier displaces an FFMA. The K loop of the 128x256 kernel is
 *   1111 SASS instructions per tile, 1024 of them FFMA (92.2%); LDGSTS replaces the
 *   rung-10 pair LDG + STS and needs no registers to hold a tile in flight, which is what
 *   lets 216 registers go to 128 accumulators + 48 fragment floats. The deeper pipeline
 *   matters because one block of 8 warps fills an SM (2 warps per scheduler): there are few
 *   other warps to run while a copy is late, so the copy must have been issued tiles ago.
 *
 * Predicted speed (written before measuring), ratio to cuBLAS on the H200 of ANCHORS.md:
 *   4096: 1.04x (~53 TFLOP/s), 8192: 1.04x, 2048: 1.05x (128 blocks, one wave),
 *   1024: 1.15x (64x128 kernel, 128 blocks on 132 SMs, vs cuBLAS at 33.7 TFLOP/s).
 *   Reasoning: 92% FFMA issue share, minus barrier and bank stalls (~5%), times 97% wave
 *   quantization (512 blocks = 3.88 waves at 4096) gives ~84% of the 64.1 TFLOP/s FFMA peak.
 *
 * Measured (NVIDIA H200, 1980 MHz, ratio to cuBLAS timed in the same process):
 *   first version (row-by-row FFMAs): 1.07 / 0.94 / 0.94 / 0.95 at 1024 / 2048 / 4096 / 8192.
 *   this version: 1.16 / 1.01 / 1.01 / 1.02 (51.9 TFLOP/s at 8192; runs vary by ~0.7%);
 *   the final `make step=11 run`: 1.149 / 1.010 / 1.009 / 1.017 (results/NOTES.md).
 *   The prediction missed at 4096 because the issue slots were not all lost where assumed:
 *   the FMA pipe runs 80% busy (cuBLAS 79%), 87% of issue slots are used, and most of the
 *   rest are the first FFMAs of each k step waiting for their LDS.128 fragments (short
 *   scoreboard 0.28 and dispatch 0.15 stalls per instruction, both at those FFMAs): ptxas
 *   issues each LDS only ~40 instructions before its use. Tried and lost: BK = 16, a
 *   128x128 tile with 2 blocks per SM (4 or 8 warps each), 3 fragment buffers, 4 stages.
 *
 * The pipeline (stages = L_STAGES or S_STAGES; tile t is commit group t)
 *   prologue: copy tiles 0..stages-2, one commit each; wait_group(stages-2); barrier.
 *   iteration t: copy tile t+stages-1 into the stage tile t-1 used (its last reads came
 *   before the barrier that ended iteration t-1), commit (an empty group past the end keeps
 *   the count uniform); k steps 0..6; then wait_group(stages-2) (groups 0..t+1 complete)
 *   and a barrier (everyone's copies visible) before the fragments of tile t+1 are read.
 *   With stages = 2 the wait covers the copy issued at the top of the same iteration.
 *
 * Edges and alignment (correct for any M, N, K >= 1, any ld, any 4-byte aligned pointers)
 *   - Zero-fill without reading: a 4-byte cp.async with src-size 0, or a 16-byte one with
 *     its ignore-src predicate set, reads nothing and writes zeros. Rows below M and columns
 *     right of N become zeros in shared memory, and their source pointers are clamped inside
 *     the operand anyway (row 0 / column 0 of the tile).
 *   - K: the FIRST K tile is the partial one (k = K-8*ntiles .. , slots k < 0 zero-filled),
 *     so every later tile is full and the main loop has no K test; the order of the FMAs
 *     is still k = 0, 1, ..., K-1 (the zero slots come first, adding exact zeros to 0).
 *   - A is always copied 4 bytes at a time: legal for any lda and alignment.
 *   - B: 16-byte copies need ldb % 4 == 0, N % 4 == 0 and B 16-byte aligned (checked at
 *     launch); otherwise the *_b4 kernels copy B 4 bytes at a time. With N % 4 == 0 a
 *     4-float segment is wholly inside N or wholly outside (zero-filled, nothing read).
 *   - C: float4 stores (and loads when beta != 0) where ldc % 4 == 0, C is 16-byte
 *     aligned and all 4 columns are inside N; scalar stores otherwise. beta == 0 never
 *     reads C. With this lane layout each warp store already covers 4 rows x 128 contiguous
 *     bytes, so no staging through shared memory is needed to coalesce.
 *   - Grid: one dimension, block -> tile computed in the kernel (C spans <= INT_MAX floats,
 *     so the block count fits gridDim.x); no row slabs needed.
 *   - Below sm_80 there is no cp.async: the launcher returns cudaErrorInvalidDevice.
 *
 * Resources (ptxas -v, sm_90, CUDA 13.0, defaults L_STAGES=3, S_STAGES=4), 0 spills:
 *   sgemm_cp_async_128x256, _b4: 216 / 216 registers, 1 barrier, 0 stack; dynamic shared
 *     memory 3 x 12,416 = 37,248 bytes; 1 block (8 warps) per SM.
 *   sgemm_cp_async_64x128, _b4: 128 / 124 registers (launch bound 128), 1 barrier, 0 stack;
 *     dynamic shared memory 4 x 6,272 = 25,088 bytes; up to 4 blocks per SM.
 *   (sm_80: 207 and 128; sm_86 / sm_89: 212 and 126; all 0 spills, 0 stack.)
 *   Above 48 KB of dynamic shared memory (L_STAGES >= 4) the launcher opts in with
 *   cudaFuncSetAttribute.
 *
 * Knobs (-D): L_STAGES, S_STAGES (or STAGES for both), RASTER_GROUP, LARGE_TILE_GAIN,
 * A_WHOLE_SECTORS (0: the first A copy layout), FORCE_KERNEL (1: always 128x256, 2: always
 * 64x128). See results/notes/step_11.md.
 */
#include <stdint.h>

#include "../common/step.h"
#include "../common/sgemm_common.h"

/* ---- Knobs for experiments (-DSTAGES=4 etc.; results/notes/step_11.md) ---------------- */
/* Pipeline depth = K tiles resident in shared memory per block (2 = plain double buffering).
 * -DSTAGES=n sets both kernels; -DL_STAGES / -DS_STAGES set one. The small kernel runs one
 * warp per scheduler at 1024, so it has no other warps to hide a late copy: it gets more. */
#ifdef STAGES
#ifndef L_STAGES
#define L_STAGES STAGES
#endif
#ifndef S_STAGES
#define S_STAGES STAGES
#endif
#endif
#ifndef L_STAGES
#define L_STAGES 3 /* 128x256 kernel */
#endif
#ifndef S_STAGES
#define S_STAGES 4 /* 64x128 kernel */
#endif
#ifndef RASTER_GROUP
#define RASTER_GROUP 8 /* block tiles walked down a column before moving right; 1 = row order */
#endif
/* Dispatch: one 128x256 block does the work of four 64x128 blocks in 100/LARGE_TILE_GAIN of
 * their time (110: 10% faster). See use_large_tile(). */
#ifndef LARGE_TILE_GAIN
#define LARGE_TILE_GAIN 110
#endif
/* A copy layout: 1 (default) = a warp's 4-byte copies of A cover 4 rows x 8 consecutive k,
 * i.e. 4 whole 32-byte sectors; 0 = the first layout, 8 rows x every other k (8 sectors per
 * copy instruction, which Nsight Compute shows costing 8 shared-memory wavefronts, not 1). */
#ifndef A_WHOLE_SECTORS
#define A_WHOLE_SECTORS 1
#endif
#ifndef FORCE_KERNEL
#define FORCE_KERNEL 0 /* 0: choose by size; 1: always 128x256; 2: always 64x128 */
#endif
#if L_STAGES < 2 || L_STAGES > 6 || S_STAGES < 2 || S_STAGES > 6
#error "stage counts must be 2..6"
#endif
#if RASTER_GROUP < 1
#error "RASTER_GROUP must be >= 1"
#endif

/* ---- The shape shared by both kernels ---------------------------------------------------- */
#define BK        8  /* K depth of one shared-memory tile */
#define WARPS_M   2  /* warps stacked along M in a block */
#define WARP_N    64 /* cols of C one warp computes */
#define LANES_M   4  /* a warp's 32 lanes form a 4 x 8 grid over its warp tile */
#define LANES_N   8
#define SUB       4 /* a thread's C is made of SUB x SUB sub-tiles, each read with LDS.128 */
#define SUB_N     2 /* sub-tiles per thread along N, LANES_N*SUB = 32 cols apart */
#define TN        (SUB_N * SUB) /* 8 cols of C per thread */
#define MAX_SUB_M 4 /* sub-tiles per thread along M in the large kernel (16 rows apart) */
#define TM_MAX    (MAX_SUB_M * SUB) /* 16 rows of C per thread in the large kernel */
#define A_PAD     4 /* a_tile rows are BM+4 floats long: conflict-free transposing copies */
/* Per K tile each thread copies 4 floats of A (BM*BK = 4 * threads in both kernels):
 * A_PAIR neighbouring floats of each of A_ROWS rows. */
#define A_PAIR    (A_WHOLE_SECTORS ? 1 : 2)
#define A_ROWS    (4 / A_PAIR)

/* Large kernel: 128x256 block tile, 8 warps (2 x 4) of 64x64, 16x8 of C per thread. */
#define L_WARPS_N 4
#define L_SUB_M   4
#define L_BM      (WARPS_M * LANES_M * SUB * L_SUB_M) /* 128 */
#define L_BN      (L_WARPS_N * WARP_N)                /* 256 */
#define L_THREADS (32 * WARPS_M * L_WARPS_N)          /* 256 */

/* Small kernel: 64x128 block tile, 4 warps (2 x 2) of 32x64, 8x8 of C per thread. */
#define S_WARPS_N 2
#define S_SUB_M   2
#define S_BM      (WARPS_M * LANES_M * SUB * S_SUB_M) /* 64 */
#define S_BN      (S_WARPS_N * WARP_N)                /* 128 */
#define S_THREADS (32 * WARPS_M * S_WARPS_N)          /* 128 */

/* One pipeline stage: a_tile[BK][BM + A_PAD] (A transposed) then b_tile[BK][BN]. */
#define STAGE_FLOATS(bm, bn)       (BK * ((bm) + A_PAD) + BK * (bn))
#define SMEM_BYTES(stages, bm, bn) ((stages)*STAGE_FLOATS(bm, bn) * (int)sizeof(float))

/* Everything from here to the kernels is sm_80+ device code: cp.async does not exist below
 * sm_80, so those builds compile only the trapping kernel stubs further down. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800

/* ---- cp.async, as inline PTX (sm_80+) ------------------------------------------------------
 * dst is a shared-memory address (32 bits), src a global one. src_bytes < cp-size copies
 * src_bytes and zero-fills the rest; src_bytes == 0 reads nothing at all, so a tile edge
 * becomes zeros in shared memory without a branch and without reading outside A or B. */
static __device__ __forceinline__ void cp_async_4(unsigned dst, const float *src, int src_bytes)
{
    /* .ca: 4-byte copies must go through L1 (.cg only exists for 16 bytes) */
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}

/* 16-byte copy of a segment that lies wholly inside B (copy != 0) or wholly outside it
 * (copy == 0: the "ignore-src" predicate writes 16 zeros and reads nothing). The predicate
 * form needs no zero-fill byte count, which ptxas would otherwise fold into the address
 * with 4 extra integer instructions per copy per tile. */
static __device__ __forceinline__ void cp_async_16(unsigned dst, const float *src, int copy)
{
    /* .cg: cache in L2 only; each 16 bytes lands in shared memory exactly once per block */
    asm volatile("{\n"
                 " .reg .pred skip;\n"
                 " setp.eq.s32 skip, %2, 0;\n"
                 " cp.async.cg.shared.global [%0], [%1], 16, skip;\n"
                 "}\n" ::"r"(dst),
                 "l"(src), "r"(copy)
                 : "memory");
}

/* Closes the group of copies this thread issued since the last commit. */
static __device__ __forceinline__ void cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most `pending` (a constant 0..4) of this thread's groups are still in flight.
 * The "memory" clobber keeps the compiler from hoisting shared-memory reads above the wait. */
static __device__ __forceinline__ void cp_async_wait(const int pending)
{
    /* wait_group takes an immediate: one asm per value, the constant picks one */
    if (pending <= 0)
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    else if (pending == 1)
        asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    else if (pending == 2)
        asm volatile("cp.async.wait_group 2;\n" ::: "memory");
    else if (pending == 3)
        asm volatile("cp.async.wait_group 3;\n" ::: "memory");
    else
        asm volatile("cp.async.wait_group 4;\n" ::: "memory");
}

static __device__ __forceinline__ void cp_async_wait_all(void)
{
    asm volatile("cp.async.wait_all;\n" ::: "memory");
}

/* ---- Where each thread copies from and to ----------------------------------------------- */
struct copy_plan {
    const float *a_src[A_ROWS]; /* this thread's first A float in each of its rows, next K tile */
    const float *b_src;         /* this thread's first B float (row b_kr), next K tile */
    long long b_row_gap;        /* floats between this thread's B rows: b_row_step * ldb */
    long long b_tile_step;      /* floats from one K tile of B to the next: BK * ldb */
    int a_bytes[A_ROWS];        /* 4, or 0 for a row below M: zero-fill, nothing read */
    int b_bytes;                /* b16: 1 if the 16-byte segment is inside N, else 0; b4: 4 or 0 */
    unsigned a_dst, b_dst;      /* shared addresses of this thread's first A, B float (stage 0) */
};

/* Copies per thread and the row steps between them (same in both kernels: A 4 x 4 bytes;
 * B 2 x 16 bytes, rows b_kr and b_kr+4, or 8 x 4 bytes, rows 0..7). A's rows are
 * A_ROW_STEP apart: a warp's copies cover 32 / (BK / A_PAIR) consecutive rows. */
#define A_ROW_STEP(threads)          ((threads) / (BK / A_PAIR))
#define B_LOADS(b16, bn, threads)    ((b16) ? BK * (bn) / (4 * (threads)) : BK * (bn) / (threads))
#define B_ROW_STEP(b16, bn, threads) (BK / B_LOADS(b16, bn, threads))

/*
 * Issues this thread's copies of one FULL K tile into the stage at byte offset `stage`, then
 * steps the sources on to the next K tile. (Only tile 0 can be partial; it is copied by hand
 * in the kernel.) Per tile: 6 LDGSTS and 5 pointer additions, no bounds tests.
 */
static __device__ __forceinline__ void copy_tile(struct copy_plan *p, unsigned stage, int a_ld,
                                                 int bn, int threads, int b16)
{
#pragma unroll
    for (int i = 0; i < A_ROWS; ++i) {
#pragma unroll
        for (int e = 0; e < A_PAIR; ++e) /* A[row][k+e] -> a_tile[kk+e][row] */
            cp_async_4(p->a_dst + stage + 4u * (unsigned)(i * A_ROW_STEP(threads) + e * a_ld),
                       p->a_src[i] + e, p->a_bytes[i]);
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

/* The fragments of one k step: TM_MAX (or 8) values of A's column, 8 of B's row, by LDS.128. */
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

/*
 * The whole kernel, for both tile shapes. warps_n, sub_m, stages and b16 are constants
 * at each call (the function is inlined into four small __global__ wrappers), so every loop
 * below is fully unrolled and every array lives in registers.
 *   warps_n: warps along N (4: BN = 256, 2: BN = 128)
 *   sub_m:   4x4 sub-tiles per thread along M (4: 16 rows per thread, BM = 128; 2: 8, BM = 64)
 *   b16:     1 when B may be copied 16 bytes at a time (ldb % 4 == 0, N % 4 == 0, B 16-byte
 *            aligned)
 *   stages:  K tiles resident in shared memory (L_STAGES / S_STAGES)
 */
static __device__ __forceinline__ void sgemm_cp_async_body(const int warps_n, const int sub_m,
                                                           const int stages, const int b16, int M,
                                                           int N, int K, float alpha,
                                                           const float *A, int lda, const float *B,
                                                           int ldb, float beta, float *C, int ldc)
{
    const int threads = 32 * WARPS_M * warps_n;
    const int bm = WARPS_M * LANES_M * SUB * sub_m;
    const int bn = warps_n * WARP_N;
    const int a_ld = bm + A_PAD;
    const int stage_floats = STAGE_FLOATS(bm, bn);
    const int tm = sub_m * SUB;

    extern __shared__ float4 smem_f4[]; /* float4: the stages start 16-byte aligned */
    float *smem = (float *)smem_f4;
    const unsigned smem_addr = (unsigned)__cvta_generic_to_shared(smem);

    /* Block -> tile, walked in groups of RASTER_GROUP tile rows: the blocks running at the
     * same time share a few A row panels and B column panels, which then stay in L2. */
    const int tiles_m = (M - 1) / bm + 1, tiles_n = (N - 1) / bn + 1;
    const int per_group = RASTER_GROUP * tiles_n;
    const int group = (int)blockIdx.x / per_group;
    const int in_group = (int)blockIdx.x - group * per_group;
    const int group_m0 = group * RASTER_GROUP;
    const int group_rows = min(tiles_m - group_m0, RASTER_GROUP);
    const int tile_m = group_m0 + in_group % group_rows;
    const int tile_n = in_group / group_rows;
    const int rows_left = M - tile_m * bm; /* >= 1: rows of C in this tile (if < bm) */
    const int cols_left = N - tile_n * bn; /* >= 1 */

    const int tid = threadIdx.x;

    /* ---- copy plan: A (transposed on the way in) by 4-byte copies ----
     * A_WHOLE_SECTORS: thread tid copies float kk = tid % 8 of 4 rows, tid/8 + 0, 32, 64, 96
     * (16 apart in the small kernel). One copy instruction of a warp then reads 4 rows x 8
     * consecutive floats = 4 whole 32-byte sectors, and shared memory takes it in one
     * wavefront. (The first layout, kk = 2*(tid % 4) and kk+1 of 2 rows, read 8 rows x every
     * other float per instruction: 8 sectors, and Nsight Compute counted 8 wavefronts per
     * copy instead of 1, 28 extra wavefronts per warp and tile beside the 96 of the LDS.128.)
     * In shared memory A[row][kk] goes to a_tile[kk][row]; rows are bm+4 floats long, so lane
     * (row r, slot kk) hits bank (4*kk + r) % 32 = 4*(lane % 8) + lane / 8 (+ const): 32 lanes,
     * 32 banks. A 4-byte copy is legal for any lda and any alignment, so A needs no slow path. */
    struct copy_plan p;
    const int a_row = tid / (BK / A_PAIR), a_kk = A_PAIR * (tid % (BK / A_PAIR));
    const float *a_row_ptr[A_ROWS]; /* A[row][0] of each of this thread's rows */
#pragma unroll
    for (int i = 0; i < A_ROWS; ++i) {
        const int row = a_row + i * A_ROW_STEP(threads);
        const int inside = row < rows_left;
        /* a row below M reads nothing; its pointer still stays inside A (row 0 of the tile) */
        a_row_ptr[i] = A + (size_t)(tile_m * bm + (inside ? row : 0)) * lda;
        p.a_bytes[i] = inside ? 4 : 0;
    }
    p.a_dst = smem_addr + 4u * (unsigned)(a_kk * a_ld + a_row);

    /* ---- copy plan: B ----
     * b16: a warp copies 32 x 16 = 512 consecutive bytes of one row. N % 4 == 0 (checked at
     *      launch), so a 4-float segment is wholly inside N or wholly outside (then it is
     *      zero-filled and nothing is read).
     * else: 4-byte copies, a warp takes 32 consecutive floats of one row. */
    int b_col, b_kr;
    if (b16) {
        b_col = 4 * (tid % (bn / 4));
        b_kr = tid / (bn / 4);
        p.b_bytes = b_col < cols_left; /* 1: copy, 0: zero-fill */
    } else {
        b_col = tid % bn;
        b_kr = tid / bn; /* 0: bn == threads in both kernels */
        p.b_bytes = b_col < cols_left ? 4 : 0;
    }
    /* B[0][col]; a segment wholly right of N reads nothing, its pointer stays at the tile's col 0
     */
    const float *b_col_ptr = B + (size_t)tile_n * bn + (p.b_bytes ? b_col : 0);
    p.b_dst = smem_addr + 4u * (unsigned)(BK * a_ld + b_kr * bn + b_col);
    p.b_row_gap = (long long)B_ROW_STEP(b16, bn, threads) * ldb;
    p.b_tile_step = (long long)BK * ldb;

    /* ---- the thread's patch of C ----
     * Lanes form a 4 x 8 grid (lane_m, lane_n) interleaved so that each 8-lane quarter of a
     * warp reads 4 distinct A float4s and 2 distinct B float4s per LDS.128 (each broadcast to
     * at most 4 lanes). Thread rows: row0 + 16*s + 0..3 (s < sub_m); cols: col0 + 32*q + 0..3. */
    const int lane = tid % 32, warp = tid / 32;
    const int warp_m = warp / warps_n, warp_n = warp % warps_n;
    const int lane_m = (lane / 2) % LANES_M;
    const int lane_n = (lane / 8) * 2 + lane % 2;
    const int row0 = warp_m * (bm / WARPS_M) + lane_m * SUB;
    const int col0 = warp_n * WARP_N + lane_n * SUB;
    const float *a_frag = smem + row0;             /* + stage + k*a_ld + 16*s */
    const float *b_frag = smem + BK * a_ld + col0; /* + stage + k*bn + 32*q */

    float acc[TM_MAX][TN];
#pragma unroll
    for (int i = 0; i < tm; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;
    float frag_a[2][TM_MAX], frag_b[2][TN]; /* [k & 1]: one in use, one being loaded */

    /* K tiles: the FIRST one is the partial one. It covers k = k_first .. k_first+7 with
     * k_first = K - 8*ntiles in (-8, 0]; slots k < 0 are zero-filled. So the accumulation
     * order is still k = 0, 1, ..., K-1 (the zero slots come first and add exact zeros to a
     * zero accumulator), and every later tile is full: the main loop has no K test. */
    const int ntiles = (K - 1) / BK + 1;
    const int k_first = (K % BK == 0) ? 0 : K % BK - BK;
    const unsigned stage_bytes = 4u * (unsigned)stage_floats;
    const unsigned last_stage = (unsigned)(stages - 1) * stage_bytes;

    /* ---- prologue: tiles 0 .. stages-2 in flight, one commit group per tile ---- */
    {
        /* Tile 0 by hand: a slot with k < 0 copies 0 bytes from a pointer clamped to k = 0. */
        const int k = k_first + a_kk;
#pragma unroll
        for (int i = 0; i < A_ROWS; ++i) {
#pragma unroll
            for (int e = 0; e < A_PAIR; ++e)
                cp_async_4(p.a_dst + 4u * (unsigned)(i * A_ROW_STEP(threads) + e * a_ld),
                           a_row_ptr[i] + max(k + e, 0), k + e >= 0 ? p.a_bytes[i] : 0);
            p.a_src[i] = a_row_ptr[i] + (k + BK); /* tile 1: k + 8 >= 1 */
        }
#pragma unroll
        for (int j = 0; j < B_LOADS(b16, bn, threads); ++j) {
            const int kb = k_first + b_kr + j * B_ROW_STEP(b16, bn, threads);
            const unsigned dst = p.b_dst + 4u * (unsigned)(j * B_ROW_STEP(b16, bn, threads) * bn);
            const float *src = b_col_ptr + (long long)max(kb, 0) * ldb;
            if (b16)
                cp_async_16(dst, src, kb >= 0 ? p.b_bytes : 0); /* k < 0: zero-fill */
            else
                cp_async_4(dst, src, kb >= 0 ? p.b_bytes : 0);
        }
        p.b_src = b_col_ptr + (long long)(k_first + BK + b_kr) * ldb; /* tile 1 */
        cp_async_commit();
    }
#pragma unroll
    for (int s = 1; s < stages - 1; ++s) {
        if (s < ntiles)
            copy_tile(&p, (unsigned)s * stage_bytes, a_ld, bn, threads, b16);
        cp_async_commit(); /* an empty group when K is short: the counting stays uniform */
    }
    /* Tile t is group t. Committed: stages-1; allowing stages-2 in flight means group 0 is
     * complete for this thread, and the barrier makes every thread's copies visible. */
    cp_async_wait(stages - 2);
    __syncthreads();
    load_frags(frag_a[0], frag_b[0], a_frag, b_frag, sub_m);

    unsigned read_stage = 0;           /* byte offset of the stage holding tile t */
    unsigned write_stage = last_stage; /* byte offset of the stage receiving tile t+stages-1 */

    for (int t = 0; t < ntiles; ++t) {
        /* Refill the stage that tile t-1 used. Safe: every thread finished reading it before
         * the barrier at the end of iteration t-1 (its last fragments, k = 7, were loaded at
         * step k = 6, before that barrier). */
        if (t + stages - 1 < ntiles)
            copy_tile(&p, write_stage, a_ld, bn, threads, b16);
        cp_async_commit();
        write_stage = (write_stage == last_stage) ? 0u : write_stage + stage_bytes;

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int cur = k % 2, nxt = cur ^ 1;
            int next_k = k + 1;
            if (k == BK - 1) {
                /* Tile t+1 must be in shared memory. Committed so far: stages-1 + (t+1)
                 * groups; at most stages-2 in flight => groups 0..t+1 are complete. With
                 * stages = 2 this waits for the copy issued at the top of this iteration. */
                cp_async_wait(stages - 2);
                __syncthreads();
                read_stage = (read_stage == last_stage) ? 0u : read_stage + stage_bytes;
                next_k = 0;
            }
            /* Fragments for the next k step while this one's FMAs run (after the last
             * tile this reads a stale stage: harmless, inside shared memory, never used). */
            const float *a_k = (const float *)((const char *)a_frag + read_stage) + next_k * a_ld;
            const float *b_k = (const float *)((const char *)b_frag + read_stage) + next_k * bn;
            load_frags(frag_a[nxt], frag_b[nxt], a_k, b_k, sub_m);
            /* Column by column, the rows snaking down and up (CUTLASS's "serpentine" order):
             * consecutive FFMAs share an operand, which ptxas marks .reuse so that it is
             * read from the operand cache instead of the register file. ptxas re-schedules
             * the FFMAs anyway, so this is a hint; measured on the H200 it cut the dispatch
             * stalls sampled on the FFMAs from 0.22 to 0.15 per instruction and gained 6-7%
             * over the row-by-row order (results/notes/step_11.md). */
#pragma unroll
            for (int j = 0; j < TN; ++j)
#pragma unroll
                for (int r = 0; r < tm; ++r) {
                    const int i = (j % 2) ? tm - 1 - r : r;
                    acc[i][j] = fmaf(frag_a[cur][i], frag_b[cur][j], acc[i][j]);
                }
        }
    }
    cp_async_wait_all(); /* only empty groups can be left; leave nothing in flight anyway */

    /* ---- epilogue: straight from registers ----
     * Per store instruction the 32 lanes write 4 rows x 8 lanes x 16 bytes: four full
     * 128-byte rows of C, so no staging through shared memory is needed for coalescing.
     * float4 stores need ldc % 4 == 0, a 16-byte aligned C, and 4 columns inside N;
     * otherwise scalar stores. beta == 0 never reads C. */
    const int c_vec = ((ldc & 3) == 0) && ((((uintptr_t)C) & 15u) == 0);
#pragma unroll
    for (int s = 0; s < sub_m; ++s) {
#pragma unroll
        for (int r = 0; r < SUB; ++r) {
            const int row = row0 + s * LANES_M * SUB + r;
            if (row >= rows_left)
                continue;
            float *c_row = C + (size_t)(tile_m * bm + row) * ldc + tile_n * bn;
#pragma unroll
            for (int q = 0; q < SUB_N; ++q) {
                const int col = col0 + q * LANES_N * SUB;
                const float *v = &acc[s * SUB + r][q * SUB];
                if (c_vec && col + 3 < cols_left) {
                    float4 *c4 = (float4 *)(c_row + col);
                    float4 out =
                        make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
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
        }
    }
}

#endif /* sm_80+ device code */

/* ---- The four kernels: two tile shapes x two ways of copying B ---------------------------
 * Below sm_80 there is no cp.async: those bodies trap, and the launcher never gets there
 * (it returns cudaErrorInvalidDevice first). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define BODY(warps_n, sub_m, stages, b16)                                                          \
    sgemm_cp_async_body(warps_n, sub_m, stages, b16, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)
#elif defined(__CUDA_ARCH__)
#define BODY(warps_n, sub_m, stages, b16) __trap()
#else
#define BODY(warps_n, sub_m, stages, b16)
#endif

/* 1 block of 256 threads per SM: 128 accumulators + 48 fragment floats -> 217 registers. */
__global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_cp_async_128x256(int M, int N, int K, float alpha, const float *A, int lda,
                           const float *B, int ldb, float beta, float *C, int ldc)
{
    BODY(L_WARPS_N, L_SUB_M, L_STAGES, 1);
}

__global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_cp_async_128x256_b4(int M, int N, int K, float alpha, const float *A, int lda,
                              const float *B, int ldb, float beta, float *C, int ldc)
{
    BODY(L_WARPS_N, L_SUB_M, L_STAGES, 0);
}

/* Up to 4 blocks of 128 threads per SM (<= 128 registers each), so mid sizes fill the SM. */
__global__ void __launch_bounds__(S_THREADS, 4)
    sgemm_cp_async_64x128(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc)
{
    BODY(S_WARPS_N, S_SUB_M, S_STAGES, 1);
}

__global__ void __launch_bounds__(S_THREADS, 4)
    sgemm_cp_async_64x128_b4(int M, int N, int K, float alpha, const float *A, int lda,
                             const float *B, int ldb, float beta, float *C, int ldc)
{
    BODY(S_WARPS_N, S_SUB_M, S_STAGES, 0);
}

typedef void (*gemm_kernel)(int, int, int, float, const float *, int, const float *, int, float,
                            float *, int);

/* a >= 1; (a + b - 1) / b could overflow for a near INT_MAX */
static long long ceil_div(int a, int b)
{
    return (a - 1) / b + 1;
}

/*
 * Dispatch: which tile shape finishes first on this GPU?
 * Count the blocks the busiest SM must run (ceil(blocks / SMs)); one 128x256 block is four
 * 64x128 blocks of work, done LARGE_TILE_GAIN% as fast. Examples on 132 SMs:
 *   1024^2: large 32 blocks (1 round: 400)  vs small 128  (1 round: 110)  -> 64x128
 *   2048^2: large 128       (1 round: 400)  vs small 512  (4 rounds: 440) -> 128x256
 *   4096^2: large 512       (4 rounds: 1600) vs small 2048 (16: 1760)     -> 128x256
 *   3072^2: large 288       (3 rounds: 1200) vs small 1152 (9: 990)       -> 64x128
 */
static int use_large_tile(int M, int N, int sms)
{
    if (FORCE_KERNEL == 1)
        return 1;
    if (FORCE_KERNEL == 2)
        return 0;
    const long long large = ceil_div(M, L_BM) * ceil_div(N, L_BN);
    const long long small = ceil_div(M, S_BM) * ceil_div(N, S_BN);
    const long long large_rounds = (large - 1) / sms + 1;
    const long long small_rounds = (small - 1) / sms + 1;
    return 4 * large_rounds * 100 <= small_rounds * LARGE_TILE_GAIN;
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

    int dev = 0, sms = 0;
    err = cudaGetDevice(&dev);
    if (err != cudaSuccess)
        return err;
    err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (err != cudaSuccess)
        return err;

    /* 16-byte copies of B need 16-byte aligned row starts (ldb % 4 == 0, B aligned) and
     * N % 4 == 0, so that no 4-float segment straddles column N. */
    const int b16 = (ldb % 4 == 0) && (N % 4 == 0) && sgemm_aligned16(B);
    const int large = use_large_tile(M, N, sms > 0 ? sms : 1);
    gemm_kernel kernel;
    int threads, smem;
    long long blocks;
    if (large) {
        kernel = b16 ? sgemm_cp_async_128x256 : sgemm_cp_async_128x256_b4;
        threads = L_THREADS;
        smem = SMEM_BYTES(L_STAGES, L_BM, L_BN);
        blocks = ceil_div(M, L_BM) * ceil_div(N, L_BN);
    } else {
        kernel = b16 ? sgemm_cp_async_64x128 : sgemm_cp_async_64x128_b4;
        threads = S_THREADS;
        smem = SMEM_BYTES(S_STAGES, S_BM, S_BN);
        blocks = ceil_div(M, S_BM) * ceil_div(N, S_BN);
    }
    /* One 1-D grid (the kernel maps block -> tile): C spans <= INT_MAX floats, so the block
     * count fits gridDim.x (2^31 - 1) and no slabs are needed. */
    if (blocks > 0x7fffffffLL)
        return cudaErrorInvalidValue;
    if (smem > 48 * 1024) { /* above 48 KB a kernel must opt in to dynamic shared memory */
        err = cudaFuncSetAttribute((const void *)kernel,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (err != cudaSuccess)
            return err;
    }
    kernel<<<(unsigned)blocks, threads, smem, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C,
                                                        ldc);
    err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    return cudaSuccess;
}

extern "C" const struct step step_11 = {
    11, "cp_async", "cp.async: multi-stage copies that skip registers, 128x256 block tiles",
    80, launch,
};
