/*
 * Rung 07 - XOR swizzle: rung 06 with its two shared-memory bank conflicts removed.
 *
 * What changes from rung 06
 *   Two functions: a_tile_offset() and b_tile_offset(), which say where element (k, m) of
 *   the A tile and (k, n) of the B tile live.  Each now XORs one bit into the column index.
 *   Every access to the tiles goes through them, so nothing else changes.
 *
 * Deriving the swizzle, bit by bit
 *   A row of either tile is 128 floats = 4 x 32 banks, so the bank of (k, col) is just the
 *   low 5 bits of col: the row adds nothing.  A conflict means lanes of one transaction
 *   share those 5 bits but not the address.  So look at which bits vary across the lanes.
 *
 *   A, the transposed store (4-byte STS, one transaction = the 32 lanes of a warp):
 *     lane L writes m = 16*warp + L/2 and k = c + 4*(L%2)   (c = 0..3, one STS per c)
 *     m: bits 0-3 take all 16 values, bit 4 is the same for the whole warp
 *     k: only bit 2 varies (c or c+4), and k does not reach the bank at all
 *     -> bank bits 0-3 take 16 values, bank bit 4 is stuck: 16 banks, 2 floats each.
 *     Fix: feed the varying bit of k into the stuck bank bit:  m' = m ^ ((k & 4) << 2).
 *     Now the k = c lanes use banks with bit 4 = b and the k = c+4 lanes those with bit 4 =
 *     !b: 32 lanes, 32 banks.  The fragment load reads m = 4j .. 4j+3 at one k; flipping
 *     bit 4 moves the four floats together, so it is still one aligned LDS.128 (and still a
 *     broadcast: the 8 lanes of a quarter-warp share it).
 *
 *   B, the fragment load (16-byte LDS, one transaction = a quarter-warp of 8 lanes):
 *     thread_col t = 0..7 (or 8..15) reads n = 8t + 4h .. +3 at one k   (h = 0, 1)
 *     n: bits 3-5 vary with t, bit 2 is fixed (= h), bits 0-1 are the float inside the float4
 *     -> bits 3-4 give 4 distinct groups of 4 banks; bit 5 (t >= 4) does not reach the bank,
 *        so t and t+4 read the same 4 banks: 2-way.
 *     Fix: feed bit 5 into the fixed bit 2:  n' = n ^ ((n & 32) >> 3).
 *     Now t and t+4 read opposite halves of their group of 8 banks: 8 float4s, 32 banks.
 *     The store of B (lanes 8q .. 8q+7 write n = 32q .. 32q+31, one value of bit 5) only
 *     sees its 8 float4s permuted among themselves: still 32 banks.
 *
 *   Result (tests/test_banks.c replays every warp): all four accesses, the A store, the
 *   B store and both fragment loads, are conflict-free.  Padding (a row of 132 floats
 *   instead of 128) would fix the A store too, but not the B load, and would break the
 *   power-of-two row length.  The XOR costs nothing in the loop: a thread's swizzled
 *   column is computed once, and the k-dependent part becomes immediate offsets in SASS.
 *
 * Why the hardware rewards it
 *   A conflict serializes: a 2-way access takes twice the shared-memory cycles.  The B
 *   fragment loads are half of the 32 LDS.128 each thread issues per K tile, in the inner
 *   loop, and the SM's one shared-memory unit serves the four schedulers at once: with them
 *   2-way, rungs 05 and 06 asked shared memory for more cycles per tile than their FMAs take
 *   (results/notes/step_05.md estimates shared memory caps rung 05 near 76% of the FMA
 *   rate, below its 82% issue limit).  Conflict-free, shared memory needs fewer cycles than
 *   the FMAs and stops being a limit.  The A store conflict cost little (4 STS per 512
 *   FMAs); it goes because it is free to remove.
 *
 * Edges and alignment: exactly as rung 06 (vec_a/vec_b/vec_c chosen at launch, load4/store4
 * read and write only what exists, beta == 0 never reads C).
 *
 * Expected speed (written before measuring): 0.66-0.72x cuBLAS at 4096, about 1.12x rung 06.
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 37,588 GFLOP/s at 4096, 0.735x
 * cuBLAS (0.329 / 0.738 / 0.735 / 0.732 at 1024 / 2048 / 4096 / 8192), 1.07x rung 06: above the
 * range because rung 06 landed above its own, below the predicted step.  The conflicts are
 * gone (Nsight Compute: 3.0 wavefronts per shared load instead of 5.0, the conflict-free
 * count for this ownership; stores at the ideal 33.6M), but the FMA pipe is only 57.5% busy,
 * far below the issue limit: what is left is the load latency each tile waits for between
 * its two barriers, which rung 09 hides.
 *
 * Resources (ptxas -v, sm_90): 105 registers, 8192 bytes smem, 0 spills; about 571 instructions
 * per K tile on the fast path, 512 FFMA (90%), 32 LDS.128, 4 STS + 1 STS.128, 2 LDG.E.128.
 */
#define BM      128 /* rows of the C tile (and of the A tile) one block computes */
#define BN      128 /* cols of the C tile (and of the B tile) one block computes */
#define BK      8   /* K depth of one A tile and one B tile in shared memory */
#define TM      8   /* rows of C per thread */
#define TN      8   /* cols of C per thread */
#define THREADS ((BM / TM) * (BN / TN)) /* 16 x 16 = 256 threads, a 1-D block */

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

/* Where element (k, m) of the A tile and (k, n) of the B tile live, in floats from the start
 * of a_tile / b_tile: row k of the tile as in rung 06, but the column is swizzled by an XOR.
 * Each XOR flips one bit of the column, chosen by a bit it leaves alone (bit 2 of k for A,
 * bit 5 of n for B), so it undoes itself: it only permutes the columns of a row, and no two
 * elements collide.  Neither touches bits 0-1 of the column, so an aligned group of four
 * floats stays four consecutive floats: the 16-byte accesses still work.
 *   A: bit 2 of k flips bit 4 of m (the transposed store's k and k+4 leave each other's bank)
 *   B: bit 5 of n flips bit 2 of n (the fragment loads at n = 8t and 8t+32 leave each other's
 *      banks) */
static __host__ __device__ inline int a_tile_offset(int k, int m)
{
    return k * BM + (m ^ ((k & 4) << 2));
}
static __host__ __device__ inline int b_tile_offset(int k, int n)
{
    return k * BN + (n ^ ((n & 32) >> 3));
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
 * frag_b_col(tid, h) + 0..3 for h = 0, 1 (an 8x8 patch, as in rung 05); per k it reads
 * each group of four with one float4. */
static __host__ __device__ inline int frag_a_row(unsigned tid, int h)
{
    return (tid / (BN / TN)) * TM + 4 * h;
}
static __host__ __device__ inline int frag_b_col(unsigned tid, int h)
{
    return (tid % (BN / TN)) * TN + 4 * h;
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
    sgemm_xor_swizzle(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                      int ldb, float beta, float *C, int ldc, int vec_a, int vec_b, int vec_c)
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
        sgemm_xor_swizzle<<<grid, THREADS, 0, stream>>>(rows, N, K, alpha, A + (size_t)row0 * lda,
                                                        lda, B, ldb, beta, C + (size_t)row0 * ldc,
                                                        ldc, vec_a, vec_b, vec_c);
        err = cudaGetLastError();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" const struct step step_07 = {
    7, "xor_swizzle", "XOR swizzle: conflict-free shared-memory stores and loads", 0, launch,
};

#endif /* SGEMM_LAYOUT_ONLY */
