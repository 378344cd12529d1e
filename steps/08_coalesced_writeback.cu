/*
 * Rung 08 - coalesced write-back: each warp's stores to C cover whole 128-byte lines.
 *
 * What changes from rung 07
 *   Which part of C each thread owns: the two functions frag_a_row() and frag_b_col().
 *   The kernel body is untouched; its fragment loads and its epilogue follow them.
 *
 *   rung 07: thread t owns the 8x8 patch at rows 8*(t/16), cols 8*(t%16).  A warp is two
 *            rows of 16 threads: a 16 x 128 strip of C.
 *   rung 08: the 8 warps form a 4 x 2 grid of 32 x 64 warp tiles; inside one, the 32 lanes
 *            form a 4 x 8 grid (lane_m, lane_n), and each thread owns FOUR 4x4 sub-tiles,
 *            16 rows and 32 cols apart:
 *
 *                     <---------- 64 cols of one warp ---------->
 *                     lane_n: 0  1  2  3  4  5  6  7 | 0  1  2 ... 7
 *           lane_m 0        [t0][t1][t8][t9]...       [t0][t1]...        rows  0..3
 *           lane_m 1        [t2][t3] ...               [t2]...            rows  4..7
 *           lane_m 2        ...                                           rows  8..11
 *           lane_m 3        ...                                           rows 12..15
 *           then the same 4 x 8 grid again for rows 16..31
 *
 * Why the hardware rewards it
 *   A store instruction writes one row of one 4x4 sub-tile per thread, a float4.  In rung 07
 *   the 16 lanes of a row sit 8 floats apart: each of their 16-byte pieces fills half of a
 *   32-byte sector, the other half comes from the next instruction, so every instruction
 *   touches 32 half-filled sectors.  Now the 8 lanes with one lane_m write 8 ADJACENT
 *   float4s, 128 contiguous bytes, and the 4 lane_m values write 4 rows: every STG.128 (and,
 *   for beta != 0, every LDG.128 of C) moves 4 whole 128-byte lines, 16 full sectors.
 *   The stores are a small part of the run at large sizes; the same ownership also helps
 *   the main loop: per k a warp now reads 32 rows of A and 64 cols of B from shared memory
 *   (128 + 256 = 384 distinct bytes) instead of 16 and 128 (64 + 512 = 576), and the 8
 *   lanes of a quarter-warp share each float4 by 2 (A) or by 4 (B) instead of one float4 of
 *   A shared by all 8 - the interleaved lane order of salykova's 'Advanced Matrix
 *   Multiplication Optimization on NVIDIA GPUs' (and of CUTLASS), whose author reports
 *   that broadcasting a 16-byte value to more than 4 lanes costs extra.
 *
 * Bank conflicts (tests/test_banks.c): none.  A's store and fragment load are unchanged
 *   from rung 07 (the fragment load now reads 16 consecutive floats per quarter-warp).  B's
 *   fragment load reads two adjacent float4s per quarter-warp, conflict-free on a plain row,
 *   so rung 07's swizzle of B is dropped: b_tile_offset is k*BN + n again.
 *
 * Edges and alignment: as rung 06.  The 16-byte stores of C need vec_c (ldc % 4 == 0 and a
 * 16-byte aligned C, checked at launch); a float4 that crosses N, or any store when vec_c
 * is 0, goes float by float; rows beyond M are skipped; beta == 0 never reads C.
 *
 * Expected speed (written before measuring): about 1.04x rung 07, 0.69-0.75x cuBLAS at
 * 4096: the write-back is a small share of the run, the fewer distinct shared-memory bytes
 * per warp help the main loop a little.  The load latency each K tile still exposes (one
 * buffer: load, wait, compute) is rung 09's business.
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 39,048 GFLOP/s at 4096, 0.763x
 * cuBLAS (0.349 / 0.768 / 0.763 / 0.756 at 1024 / 2048 / 4096 / 8192), 1.04x rung 07 as predicted.
 * Nsight Compute: 16 store sectors per request instead of 32 (4 whole lines per STG.128),
 * 2.0 wavefronts per shared load (the floor for LDS.128, 3.0 in rung 07), FMA pipe 57.5% ->
 * 59.9%.  A goal of 0.80 assumed a larger share for the write-back and was missed.
 *
 * Resources (ptxas -v, sm_90): 107 registers, 8192 bytes smem, 0 spills; about 570 instructions
 * per K tile on the fast path, 512 FFMA (90%); the epilogue is 16 STG.128 per thread.
 */
#define BM      128 /* rows of the C tile (and of the A tile) one block computes */
#define BN      128 /* cols of the C tile (and of the B tile) one block computes */
#define BK      8   /* K depth of one A tile and one B tile in shared memory */
#define TM      8   /* rows of C per thread */
#define TN      8   /* cols of C per thread */
#define THREADS ((BM / TM) * (BN / TN)) /* 256 threads = 8 warps, a 1-D block */

/* ==== Shared-memory layout ===================================================================
 * Plain C from here to the #ifndef below: tests/test_banks.c includes this part of the file
 * (with SGEMM_LAYOUT_ONLY defined) and replays every warp's shared-memory addresses. */
#ifndef __CUDACC__
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#endif

/* The 8 warps form a 4 x 2 grid over the C tile, each warp a WARP_M x WARP_N tile; a warp's
 * 32 lanes form a LANES_M x LANES_N grid over it. */
#define WARPS_N 2                               /* warps side by side along N */
#define WARP_M  (BM / (THREADS / 32 / WARPS_N)) /* 32 rows of C per warp */
#define WARP_N  (BN / WARPS_N)                  /* 64 cols of C per warp */
#define LANES_M 4
#define LANES_N 8

/* Where element (k, m) of the A tile and (k, n) of the B tile live, in floats from the start
 * of a_tile / b_tile.  A keeps rung 07's swizzle (bit 2 of k flips bit 4 of m): the
 * transposed store is unchanged and still needs it.  B needs none any more: the new
 * fragment loads below are conflict-free on a plain row. */
static __host__ __device__ inline int a_tile_offset(int k, int m)
{
    return k * BM + (m ^ ((k & 4) << 2));
}
static __host__ __device__ inline int b_tile_offset(int k, int n)
{
    return k * BN + n;
}

/* Copying in: thread tid reads one float4 of A (tile row a_load_row, k = a_load_col .. +3)
 * and one float4 of B (k = b_load_row, tile cols b_load_col .. +3) per K tile. */
static __host__ __device__ inline int a_load_row(unsigned tid)
{
    return tid / (BK / 4);
}
static __host__ __device__ inline int a_load_col(unsigned tid)
{
    return (tid % (BK / 4)) * 4;
}
static __host__ __device__ inline int b_load_row(unsigned tid)
{
    return tid / (BN / 4);
}
static __host__ __device__ inline int b_load_col(unsigned tid)
{
    return (tid % (BN / 4)) * 4;
}

/* Computing: thread tid owns tile rows frag_a_row(tid, h) + 0..3 and tile cols
 * frag_b_col(tid, h) + 0..3 for h = 0, 1: four 4x4 sub-tiles of C, 16 rows and 32 cols
 * apart, inside its warp's 32x64 tile.  Lane (lane_m, lane_n) of the 4 x 8 lane grid is
 *     lane_m = (lane / 2) % 4,   lane_n = (lane / 8) * 2 + lane % 2
 * so that the 8 lanes of one quarter-warp form a 4 x 2 block of the grid (the interleaving
 * of seed 000 and CUTLASS): per LDS.128 they read 4 distinct float4s of A, each shared by 2
 * lanes, and 2 of B, each shared by 4. */
static __host__ __device__ inline int frag_a_row(unsigned tid, int h)
{
    const unsigned warp_m = (tid / 32) / WARPS_N, lane_m = (tid % 32 / 2) % LANES_M;
    return warp_m * WARP_M + lane_m * 4 + h * (LANES_M * 4);
}
static __host__ __device__ inline int frag_b_col(unsigned tid, int h)
{
    const unsigned warp_n = (tid / 32) % WARPS_N, lane_n = (tid % 32 / 8) * 2 + tid % 2;
    return warp_n * WARP_N + lane_n * 4 + h * (LANES_N * 4);
}
/* ==== End of the shared-memory layout ======================================================= */

#ifndef SGEMM_LAYOUT_ONLY

#include "../common/step.h"
#include "../common/sgemm_common.h"

/* p[0..3] as one 16-byte load when `vec` allows it and all four floats exist (count >= 4);
 * otherwise one load per float that exists (i < count), 0.0f for the rest (count <= 0: p is
 * never dereferenced). `vec` is the same for every thread (chosen at launch) and count < 4
 * happens only at the matrix edges, so almost every thread takes the 16-byte side. */
static __device__ __forceinline__ float4 load4(const float *p, int count, int vec)
{
    if (vec && count >= 4)
        return *(const float4 *)p;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (count > 0)
        v.x = p[0];
    if (count > 1)
        v.y = p[1];
    if (count > 2)
        v.z = p[2];
    if (count > 3)
        v.w = p[3];
    return v;
}

/* row[first .. first+3] := alpha*acc + beta*row[...] for the floats that exist (i < count);
 * beta == 0 never reads C. One 16-byte store (and load) when `vec` allows it and all four
 * exist, else one float at a time. */
static __device__ __forceinline__ void store4(float *row, int first, int count, int vec, float4 acc,
                                              float alpha, float beta)
{
    if (vec && count >= 4) {
        float4 *c = (float4 *)(row + first);
        if (beta == 0.0f) {
            *c = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
        } else {
            const float4 old = *c;
            *c = make_float4(alpha * acc.x + beta * old.x, alpha * acc.y + beta * old.y,
                             alpha * acc.z + beta * old.z, alpha * acc.w + beta * old.w);
        }
        return;
    }
    const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        if (j < count) {
            float *c = &row[first + j];
            *c = (beta == 0.0f) ? alpha * v[j] : alpha * v[j] + beta * *c;
        }
    }
}

/* Four floats of a tile in shared memory; the offset is a multiple of 4 (16-byte aligned). */
static __device__ __forceinline__ float4 lds4(const float *tile, int offset)
{
    return *(const float4 *)&tile[offset];
}

static __global__ void __launch_bounds__(THREADS)
    sgemm_coalesced_writeback(int M, int N, int K, float alpha, const float *A, int lda,
                              const float *B, int ldb, float beta, float *C, int ldc, int vec_a,
                              int vec_b, int vec_c)
{
    /* a_tile holds A transposed (k-major), so a thread's 4 consecutive rows of A at one k are
     * 4 consecutive floats: one LDS.128. 16-byte alignment makes every float4 access legal. */
    __shared__ __align__(16) float a_tile[BK * BM];
    __shared__ __align__(16) float b_tile[BK * BN];

    const unsigned tid = threadIdx.x;
    const int block_row0 = blockIdx.y * BM;
    const int block_col0 = blockIdx.x * BN;

    /* Copy-in sources, moved one tile along K per iteration. A float outside A or B is
     * counted out (count <= 0) and never read, though its pointer may lie past the matrix. */
    const int a_row = block_row0 + a_load_row(tid);
    const float *a_src = A + (size_t)a_row * lda + a_load_col(tid);
    const int a_k_left = (a_row < M) ? K - a_load_col(tid) : 0; /* floats of A from a_src on */
    const int b_col = block_col0 + b_load_col(tid);
    const float *b_src = B + (size_t)b_load_row(tid) * ldb + b_col;
    const int b_k_left = K - b_load_row(tid); /* rows of B from b_src down */
    const int b_n_left = N - b_col;           /* floats of B's row from b_src on */

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;
    float frag_a[TM], frag_b[TN];

    for (int k0 = 0; k0 < K; k0 += BK) {
        /* Global -> registers: one float4 of A and one of B per thread. Floats outside A or B
         * become 0.0f, so the inner loop needs no bounds checks. */
        const float4 a_ld = load4(a_src, a_k_left - k0, vec_a);
        const float4 b_ld = load4(b_src, (b_k_left - k0 > 0) ? b_n_left : 0, vec_b);

        /* Registers -> shared memory. A's float4 holds k .. k+3 of one row m; transposed, that
         * is four scalar stores into four rows of a_tile, (k+j, m) = (k, m) + j*BM (the layout
         * keeps that true; tests/test_banks.c checks it). B keeps its layout: one STS.128. */
        float *a_dst = &a_tile[a_tile_offset(a_load_col(tid), a_load_row(tid))];
        a_dst[0 * BM] = a_ld.x;
        a_dst[1 * BM] = a_ld.y;
        a_dst[2 * BM] = a_ld.z;
        a_dst[3 * BM] = a_ld.w;
        *(float4 *)&b_tile[b_tile_offset(b_load_row(tid), b_load_col(tid))] = b_ld;
        __syncthreads(); /* the tiles are complete */

        /* One outer product per k: two LDS.128 of A and two of B give 64 FMAs. */
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float4 a4 = lds4(a_tile, a_tile_offset(k, frag_a_row(tid, h)));
                const float4 b4 = lds4(b_tile, b_tile_offset(k, frag_b_col(tid, h)));
                frag_a[4 * h + 0] = a4.x;
                frag_a[4 * h + 1] = a4.y;
                frag_a[4 * h + 2] = a4.z;
                frag_a[4 * h + 3] = a4.w;
                frag_b[4 * h + 0] = b4.x;
                frag_b[4 * h + 1] = b4.y;
                frag_b[4 * h + 2] = b4.z;
                frag_b[4 * h + 3] = b4.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += frag_a[i] * frag_b[j];
        }
        __syncthreads(); /* everyone is done reading before the next tile overwrites them */
        a_src += BK;
        b_src += (size_t)BK * ldb;
    }

    /* Epilogue: acc[4*hm + i][4*hn + j] is C(row0(hm) + i, col0(hn) + j). Each row of four is
     * one 16-byte store (and, for beta != 0, one 16-byte load); rows outside C are skipped. */
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = block_row0 + frag_a_row(tid, i / 4) + i % 4;
        if (row < M) {
            float *c_row = C + (size_t)row * ldc;
#pragma unroll
            for (int hn = 0; hn < 2; ++hn) {
                const int col = block_col0 + frag_b_col(tid, hn);
                const float4 acc4 = make_float4(acc[i][4 * hn + 0], acc[i][4 * hn + 1],
                                                acc[i][4 * hn + 2], acc[i][4 * hn + 3]);
                store4(c_row, col, N - col, vec_c, acc4, alpha, beta);
            }
        }
    }
}

static int ceil_div(int a, int b)
{
    return (a + b - 1) / b;
}

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    cudaError_t err = sgemm_prologue(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, &done);
    if (err != cudaSuccess || done)
        return err;

    /* 16-byte accesses need a 16-byte aligned base and rows a multiple of 4 floats apart;
     * otherwise the kernel reads (writes) that operand one float at a time. A slab's base,
     * A + row0*lda, keeps A's alignment when lda % 4 == 0. */
    const int vec_a = (lda % 4 == 0) && sgemm_aligned16(A);
    const int vec_b = (ldb % 4 == 0) && sgemm_aligned16(B);
    const int vec_c = (ldc % 4 == 0) && sgemm_aligned16(C);

    /* gridDim.y is capped at 65535: taller matrices run as slabs of rows. */
    const int slab_rows = SGEMM_MAX_GRID_Y * BM;
    for (int row0 = 0; row0 < M; row0 += slab_rows) {
        const int rows = (M - row0 < slab_rows) ? M - row0 : slab_rows;
        const dim3 grid(ceil_div(N, BN), ceil_div(rows, BM));
        sgemm_coalesced_writeback<<<grid, THREADS, 0, stream>>>(
            rows, N, K, alpha, A + (size_t)row0 * lda, lda, B, ldb, beta, C + (size_t)row0 * ldc,
            ldc, vec_a, vec_b, vec_c);
        err = cudaGetLastError();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" const struct step step_08 = {
    8,
    "coalesced_writeback",
    "coalesced write-back: 32x64 warp tiles, whole 128-byte lines of C",
    0,
    launch,
};

#endif /* SGEMM_LAYOUT_ONLY */
