/*
 * Rung 06 - A transposed in shared memory, and 16-byte accesses everywhere.
 *
 * What changes from rung 05
 *   Same tiles (128x128x8), same 256 threads, same 8x8 patch of C per thread.  The memory
 *   instructions become 16 bytes wide, and to allow it A is stored TRANSPOSED:
 *
 *     rung 05: a_tile[m][k]  ->  rung 06: a_tile[k][m]   (a_tile_offset(k, m) = k*BM + m)
 *
 *   - global -> registers: each thread reads ONE float4 of A (4 consecutive k of one row)
 *     and ONE float4 of B (4 consecutive n of one row) per K tile, instead of 4 + 4 floats.
 *   - registers -> shared: B's float4 is one STS.128.  A's float4 runs along k, which is
 *     now the slow index of a_tile, so it is written as 4 scalar STS into 4 rows of a_tile.
 *   - shared -> registers, per k: the thread's 8 rows of A at that k are 8 CONSECUTIVE
 *     floats, read as 2 x LDS.128; its 8 cols of B are 2 x LDS.128 as before.
 *   - C is written (and, for beta != 0, read) as float4s: 16 STG.128 per thread, not 64.
 *
 * Why the hardware rewards it
 *   Look at rung 05's SASS: the compiler had already turned its reads of A into LDS.128, but
 *   the only 4 neighbours it could find were 4 consecutive k of one row of A, so it loads a
 *   whole K tile of A fragments (8 rows x 8 k) ahead and keeps them live: 128 registers.
 *   With a_tile[k][m] the 4 neighbours are 4 rows at one k, so one k of A (8 floats) is
 *   live at a time: 107 registers, with the same 32 LDS.128 per K tile.  The global side
 *   moves the same bytes with 4x fewer instructions (2 LDG.128 per tile instead of 8 LDG,
 *   16 STG.128 instead of 64 STG), and the K loop shrinks from 627 to about 570 instructions
 *   per tile (512 FFMA: 82% -> 90% of the issue slots).  The transposition costs 4 scalar STS
 *   per thread per tile, once per 512 FMAs.
 *
 * Bank conflicts (replayed by tests/test_banks.c; 32 banks of 4 bytes; a 4-byte access is
 * one transaction of 32 lanes, a 16-byte access four transactions of 8 lanes)
 *   - A's transposed store: 2-way.  Lanes 2i and 2i+1 copy the two halves (k = 0..3 and
 *     4..7) of the same row m of A, so their floats land in a_tile rows k and k+4, column m:
 *     512 bytes apart, the same bank.  The 32 lanes hit only 16 banks, each twice.
 *   - B's fragment load: 2-way (as in rung 05).  In each quarter-warp, thread_col t and t+4
 *     read float4s 32 floats apart, which fall on the same 4 banks.
 *   - conflict-free: B's STS.128 (a quarter-warp writes 32 consecutive floats) and A's
 *     fragment load (the 8 lanes of a quarter-warp share thread_row: one address, broadcast).
 *   Rung 07 removes both conflicts with an XOR swizzle.
 *
 * Edges and alignment
 *   A float4 access needs a 16-byte aligned address: the launcher sets vec_a only when
 *   lda % 4 == 0 and A is 16-byte aligned (vec_b, vec_c likewise), and then every float4 a
 *   thread touches starts on a multiple of 4 floats.  load4() reads the float4 at once only
 *   when vec is set and all four floats are inside the matrix; at the K edge of A, the N edge
 *   of B, or for every load when vec is 0, it reads float by float what exists and puts 0.0f
 *   in the rest, so nothing at or past (rows-1)*ld + cols, nor in the padding, is read.
 *   Rows of A beyond M and of B beyond K count as empty.  store4() treats C the same way,
 *   and beta == 0 never reads C.
 *
 * Expected speed (written before measuring): 0.58-0.64x cuBLAS at 4096, about 1.03x rung 05:
 * the K loop issues 9% fewer instructions, but shared memory, still 2-way on B, sets the pace
 * as in rung 05, and each tile's loads are still waited for between two barriers.
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 35,252 GFLOP/s at 4096, 0.690x
 * cuBLAS (0.338 / 0.688 / 0.690 / 0.688 at 1024 / 2048 / 4096 / 8192), 1.12x rung 05: above the
 * prediction.  Why it missed: the prediction took shared memory to set the pace, so that
 * fewer instructions would barely count.  Shared memory did not change (Nsight Compute: 5.0
 * wavefronts per shared load in both rungs, and the A store exactly 2-way: 50.3M store
 * wavefronts against 33.6M ideal), but the gain follows the instruction count: 627 -> ~570
 * per tile is 1.10x, the kernel ran 1.11x faster under Nsight Compute (4.374 -> 3.932 ms),
 * the FMA pipe 50.5% -> 53.9% busy.  Rung 05, at half the FMA rate against a shared-memory
 * bound of 76%, was held back by issue and latency more than by shared-memory bandwidth.
 *
 * Resources (ptxas -v, sm_90): 107 registers, 8192 bytes smem, 0 spills; two blocks (16 warps)
 * per SM, as in rung 05 whose 128 registers sat exactly on that limit.
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
 * of a_tile / b_tile. A is stored transposed: one row of a_tile per k, BM floats long. */
static __host__ __device__ inline int a_tile_offset(int k, int m)
{
    return k * BM + m;
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
    sgemm_a_transpose(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
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
        sgemm_a_transpose<<<grid, THREADS, 0, stream>>>(rows, N, K, alpha, A + (size_t)row0 * lda,
                                                        lda, B, ldb, beta, C + (size_t)row0 * ldc,
                                                        ldc, vec_a, vec_b, vec_c);
        err = cudaGetLastError();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" const struct step step_06 = {
    6, "a_transpose", "A transposed in shared memory: 16-byte loads of A, B and C", 0, launch,
};

#endif /* SGEMM_LAYOUT_ONLY */
