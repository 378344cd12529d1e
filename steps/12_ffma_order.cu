/*
 * Rung 12 - the order of the FFMAs: the same 128 multiply-adds per k step, in an order that
 * lets the operand reuse cache serve them.
 *
 * What changes from rung 11
 *   The order of the 128 FFMAs of a k step (FFMA_ORDER_16x8 in common/ffma_tile.cuh, applied in
 *   tile_product() below), and the
 *   thread's share of C that it is written for: 16 rows of 8 (rung 11: 8 rows of 16; the
 *   warps 2 x 4 of 64x64 instead of 4 x 2 of 32x128, the same 128x256 block tile). Rung 11's
 *   row-by-row order gains from long rows (a[i] is reused along a row); the serpentine below
 *   shares an operand between each FFMA and the next, so the row length no longer matters: on
 *   8x16 a plain serpentine runs level with this rung ("measured" below). The order was
 *   searched on 16x8, the shape rungs 13-19 build on, so this rung keeps it. Rung 11's tile,
 *   copies, fragments and epilogue in their 16x8 form live in common/ffma_tile.cuh, which
 *   every FFMA rung from here on includes.
 *   Each accumulator still adds k = 0, 1, ..., K-1 in order, so the floats in C are the same;
 *   what changes is the machine code: ptxas schedules the loop and allocates its registers
 *   from the order it is given.
 *
 * Why the hardware rewards it: register banks and the operand reuse cache
 *   An FFMA reads three registers. The register file has banks (on sm_90, two per
 *   scheduler's slice: a register's bank is its number mod 2 in the published
 *   microbenchmarks), and an instruction whose sources collide in a bank waits a cycle to
 *   read them: in Nsight Compute a "dispatch stall". Each source slot also has a small
 *   operand reuse cache: an operand marked .reuse in SASS is kept for the next instruction
 *   that reads the same register in the same slot, and is not read from the file again.
 *   The row-by-row order on 16x8 (rung 11's first form: acc[i][0..7] += a[i] * b[0..7]) reuses a[i]
 *   seven times in a row, then switches. Column by column with the rows snaking down and up (the
 *   "serpentine" order of CUTLASS's warp-level FFMA loops), every FFMA shares an operand with the
 *   one before it, at the turns too, so ptxas can mark most of them .reuse: fewer reads from the
 *   banks, fewer conflicts. Measured on an H200 at 4096: the dispatch stalls sampled on the FFMAs
 *   fell from 0.22 to 0.15 per instruction, +6-7% over the row-by-row order.
 *   Reuse alone is not enough. Column by column without the snake (b[j] reused down each
 *   column, both operands switched at the 7 turns) cuts the bank stalls as much, yet its
 *   warps then wait longer for the LDS.128 fragments and it runs no faster than row by row
 *   (H100, 4096, Nsight Compute, stalls per issued instruction; ratio to cuBLAS):
 *       order               dispatch  short scoreboard  barrier  issue slots busy  ratio
 *       row by row, 16x8      0.24          0.09          0.04         81.5%        0.946
 *       row by row, 8x16 (11) 0.20          0.26          0.10        ~84.5%        0.962
 *       column by column      0.14          0.29          0.12         81.3%        0.950
 *       plain serpentine      0.16          0.16          0.06         85.4%        1.001
 *       measured order (12)   0.16          0.19          0.06         86.3%        1.014
 *   (The 8x16 issue-slot figure is estimated as FMA pipe 77.5% / 92% FFMA share; all other
 *   rows are 16x8 builds.)
 *
 * The order is measured, not derived
 *   Which column comes first, and in which order the rows run down it, changes nothing in
 *   the sums and everything in the schedule. 160 random serpentine-like orders ran from 0.91
 *   to 1.03x cuBLAS at 4096 on an H200; none of the static counts tried (register reads,
 *   bank conflicts, how early each LDS.128 issues) ranks them. The order below is the
 *   fastest of them, with rows 10 and 12 then swapped (the best of 52 neighbours on an H100):
 *   +2.0-2.3% (H200, in the whole-tile kernel of rungs 13-19) at 2048-8192 over the plain
 *   serpentine (columns 0..7, rows 0..15 down and up). It is tuned to this compiler (CUDA 13.0);
 *   another ptxas may schedule it differently; results/notes/step_12.md keeps the plain serpentine
 *   to compare.
 *
 * Edges, alignment, the pipeline and the copies: exactly rung 11's.
 *
 * Prediction: +5-8% over rung 11 (its 16x8 form) at 2048-8192 (the dispatch stalls of the
 * row-by-row order are ~0.22 cycles per instruction, the serpentine's ~0.15).
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 0.375 / 1.026 / 1.024 / 1.032 at
 * 1024 / 2048 / 4096 / 8192: +4-6% over rung 11 (8x16, row by row) in the same run; on an H100
 * +4-6%, and +7% over the same tile in 16x8 row by row. The plain serpentine in this kernel: 1.014
 * / 1.002 / 1.007 at 2048-8192 (+1.1-1.5% for the measured order here; +2.0-2.6% in the whole-tile
 * kernel of rungs 13-19, whose SASS is the one the order was searched on). On rung 11's 8x16 (two
 * short runs): columns outer with the 8 rows snaking 1.026-1.027 / 1.015-1.017 / 1.024-1.026 at
 * 2048-8192, level with this rung in the same runs (1.024-1.025 / 1.014 / 1.022-1.024); rows outer
 * with the 16 columns snaking 0.941-0.951. 210 registers (sm_90), 0 spills.
 */
#include <stdint.h>

#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/ffma_tile.cuh" /* rung 11's tile, copies, fragments and epilogue, as 16x8;
                                    * NEW there: FFMA_ORDER_16x8, the order of this rung */

/* Everything from here to the kernel is sm_80+ device code: cp.async does not exist below. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800

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
    load_frags(frag_a[0], frag_b[0], a_frag, b_frag, sh.sub_m, sh.sub_n);

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
            load_frags(frag_a[nxt], frag_b[nxt], a_k, b_k, sh.sub_m, sh.sub_n);
            /* NEW: the 128 FFMAs in the measured order (FFMA_ORDER_16x8 above) */
#define X(i, j) acc[i][j] = fmaf(frag_a[cur][i], frag_b[cur][j], acc[i][j]);
            FFMA_ORDER_16x8
#undef X
        }
    }
    cp_async_wait_all(); /* only empty groups can be left; leave nothing in flight anyway */

    store_c(sh, g, tile_m, tile_n, row0, col0, acc);
}

#endif /* sm_80+ device code */

/* Block b computes C tile b. One block of 256 threads per SM: 128 accumulators + 48 fragment
 * floats need 210 registers. Below sm_80 it traps; the launcher never gets there. */
template <int B16>
static __global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_ffma_order(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                     int ldb, float beta, float *C, int ldc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const struct shape sh = {L_WARPS_N, L_SUB_M, L_STAGES, B16, SUB_N};
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
        sgemm_ffma_order<1><<<(unsigned)tiles, L_THREADS, smem, stream>>>(M, N, K, alpha, A, lda, B,
                                                                    ldb, beta, C, ldc);
    else
        sgemm_ffma_order<0><<<(unsigned)tiles, L_THREADS, smem, stream>>>(M, N, K, alpha, A, lda, B,
                                                                    ldb, beta, C, ldc);
    return cudaGetLastError();
}

extern "C" const struct step step_12 = {
    12, "ffma_order", "FFMA order: the operand reuse cache and register banks", 80, launch,
};
