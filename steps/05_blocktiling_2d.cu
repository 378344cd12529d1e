/*
 * Rung 05 - blocktiling_2d: each thread computes an 8x8 patch of C as a sum of outer products.
 *
 * What changes from rung 04
 *   In rung 04 a thread owned a COLUMN of 16 results: per k it read 1 value of B and 16 of A
 *   and did 16 FMAs.  Here a thread owns a SQUARE of TM x TN = 8 x 8 results: per k it reads
 *   a column of 8 values of A (frag_a) and a row of 8 values of B (frag_b) into registers and
 *   multiplies every one with every other, the outer product, 64 FMAs from 16 values:
 *
 *               frag_b[0..7]  = b_tile[k][thread_col*8 + 0..7]
 *                  b0 b1 .. b7
 *        a0   [ a0b0 a0b1 .. a0b7 ]
 *        a1   [ a1b0  ...         ]      acc[i][j] += frag_a[i] * frag_b[j]
 *        ..   [       ...         ]      for i, j in 0..7, every k in order
 *        a7   [ a7b0  ...    a7b7 ]
 *     frag_a[0..7] = a_tile[thread_row*8 + 0..7][k]
 *
 *   The block tile grows to BM x BN = 128 x 128 of C (16 x 16 threads, 256 in all), the K depth
 *   stays BK = 8; the copy, the barriers and the zero-fill are those of rung 04.
 *
 * Why the hardware rewards it
 *   Register reuse now works in both directions: each A value feeds 8 FMAs and so does each
 *   B value.  Per thread and 8-deep tile, ptxas emits 512 FFMA and 32 LDS.128: 16 for a_tile
 *   (the 8 k-values of a row are 32 contiguous bytes) and 16 for b_tile.  Shared memory returns
 *   128 bytes per clock to an SM, one 4-byte register for each lane of a warp; counted per warp
 *   in those clocks:
 *     a_tile: lanes 0-15 read one address, lanes 16-31 another (thread_row 2w and 2w+1): a
 *             near-uniform 16-byte load, 2 clocks -> 32
 *     b_tile: 16 addresses 32 bytes apart, each read by lanes t and t+16.  16-byte loads are
 *             served a quarter-warp at a time and its 8 lanes hit 16 banks twice each: 2 clocks
 *             per quarter, 8 per load (Nsight Compute reports 8 wavefronts for this pattern) -> 128
 *     copies: 8 conflict-free STS -> 8
 *   168 clocks per 512 warp-FFMA, which the SM's FP32 units need 128 clocks for: shared memory
 *   would now allow them 76% busy (rung 04: 42%, rung 03: 16%).  Instruction issue allows 82%
 *   (627 instructions per tile, 512 of them FFMA; rung 04: 60%), and latency is hidden by only
 *   16 warps per SM.  Global memory: a block copies 2048 floats per 131072 FMAs, 64 FMAs per
 *   float (rung 04: 32).
 *   Registers: 64 accumulators, the fragments (a_tile is read 4 k at a time, so up to 32 A
 *   values are live) and addresses come to 128 (ptxas, below): 2 blocks of 256 threads fit in
 *   an SM's 65536 registers, so one can compute while the other copies; 129 would leave one.
 *
 * Edges and alignment (as rung 04)
 *   Copies are scalar and coalesced; an element outside A or B is stored as 0.0f in shared
 *   memory, so the inner loop has no predicates, and padded k's add 0*0 = +0, which leaves the
 *   sum exact.  Only elements inside A and B are read (row < M and k < K, k < K and col < N),
 *   so any M, N, K >= 1, any lda/ldb/ldc and any 4-byte-aligned pointers work.  The epilogue
 *   stores only row < M and col < N; beta == 0 never reads C.  For beta != 0 the 8 old values
 *   of a row of the patch are loaded before any of them is stored, so their latencies overlap.
 *
 * Expected speed (predicted before measuring): 0.60 of cuBLAS at 4096, in 0.52-0.66.
 *   Simon Boehm's SGEMM_CUDA kernel of the same shape measured 0.510 on an H200.  Its k loop
 *   is not unrolled, so
 *   it reads A with 8 scalar LDS per k (2-way conflicts: 128 clocks per tile, 264 in all, FP32
 *   at most 48% busy) and spends 728 instructions per tile.  Here the bounds are 76% (shared
 *   memory) and 82% (issue), close enough to get in each other's way, with 16 warps per SM;
 *   reaching ~63% of the lower bound, as 2-blocks-per-SM kernels of SGEMM_CUDA do, gives
 *   48% of the FP32 peak: 0.60 of cuBLAS.
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 31,573 GFLOP/s at 4096, 0.618 of
 *   cuBLAS (0.303 / 0.601 / 0.618 / 0.621 at 1024 / 2048 / 4096 / 8192), on the prediction.  Nsight
 *   Compute: FMA pipe 50.5% busy (predicted 48%), 5.0 wavefronts per shared load (the mean
 *   of A's 2 and the 2-way B fragment load's 8), 128 registers, 16 warps per SM.  At 1024
 *   the grid is 64 tiles of 128 x 128 for 132 SMs: 68 of them idle.
 *
 * Resources (ptxas -v, sm_90): 128 registers, 8192 bytes smem, 0 bytes spill stores, 0 bytes
 *   spill loads (128 registers and no spills on sm_75/80/86/89 too).
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"

#define BM 128 /* rows of the C tile (and of the A tile) one block computes */
#define BN 128 /* cols of the C tile (and of the B tile) one block computes */
#define BK 8   /* K depth of one A tile and one B tile in shared memory */
#define TM 8   /* rows of C per thread */
#define TN 8   /* cols of C per thread */
#define THREADS ((BM / TM) * (BN / TN)) /* 16 x 16 = 256 threads, a 1-D block */

/* Each thread copies BM*BK/THREADS = 4 floats of A and BK*BN/THREADS = 4 of B per K tile. */
#define A_LOADS (BM * BK / THREADS)
#define B_LOADS (BK * BN / THREADS)
#define A_ROW_STEP (THREADS / BK) /* 32: rows of A copied by one pass of the block */
#define B_ROW_STEP (THREADS / BN) /* 2: rows of B copied by one pass of the block */

static __global__ void __launch_bounds__(THREADS)
sgemm_blocktiling_2d(int M, int N, int K, float alpha, const float *A, int lda,
                     const float *B, int ldb, float beta, float *C, int ldc)
{
    /* 16-byte aligned so that four neighbouring floats of a row can be read with one LDS.128. */
    __shared__ __align__(16) float a_tile[BM][BK];
    __shared__ __align__(16) float b_tile[BK][BN];

    const int tid = threadIdx.x;
    const int block_row0 = blockIdx.y * BM;
    const int block_col0 = blockIdx.x * BN;

    /* The 8x8 patch of C this thread owns inside the block tile. */
    const int thread_row = tid / (BN / TN); /* 0..15 */
    const int thread_col = tid % (BN / TN); /* 0..15 */

    /* Where this thread copies from: A rows a_load_row + 0/32/64/96, B rows b_load_row + 0/2/4/6.
     * Consecutive threads take consecutive addresses of a row, so the copies coalesce. */
    const int a_load_row = tid / BK, a_load_col = tid % BK;
    const int b_load_row = tid / BN, b_load_col = tid % BN;
    const int b_col = block_col0 + b_load_col;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;
    float frag_a[TM], frag_b[TN];

    for (int k0 = 0; k0 < K; k0 += BK) {
        /* Global -> registers: every load of the tile is issued before any is stored, so their
         * latencies overlap.  Elements outside A or B become 0.0f: no checks in the inner loop. */
        float a_ld[A_LOADS], b_ld[B_LOADS];
        const int a_k = k0 + a_load_col;
#pragma unroll
        for (int r = 0; r < A_LOADS; ++r) {
            const int row = block_row0 + a_load_row + r * A_ROW_STEP;
            a_ld[r] = (row < M && a_k < K) ? A[row * lda + a_k] : 0.0f;
        }
#pragma unroll
        for (int r = 0; r < B_LOADS; ++r) {
            const int b_k = k0 + b_load_row + r * B_ROW_STEP;
            b_ld[r] = (b_k < K && b_col < N) ? B[b_k * ldb + b_col] : 0.0f;
        }
        /* Registers -> shared memory. */
#pragma unroll
        for (int r = 0; r < A_LOADS; ++r)
            a_tile[a_load_row + r * A_ROW_STEP][a_load_col] = a_ld[r];
#pragma unroll
        for (int r = 0; r < B_LOADS; ++r)
            b_tile[b_load_row + r * B_ROW_STEP][b_load_col] = b_ld[r];
        __syncthreads(); /* the tiles are complete */

        /* One outer product per k: 8 values of A and 8 of B give 64 FMAs. */
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i)
                frag_a[i] = a_tile[thread_row * TM + i][k];
#pragma unroll
            for (int j = 0; j < TN; ++j)
                frag_b[j] = b_tile[k][thread_col * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += frag_a[i] * frag_b[j];
        }
        __syncthreads(); /* everyone is done reading before the next tile overwrites them */
    }

    /* Epilogue, one row of the 8x8 patch at a time: only elements inside C are touched, and
     * beta == 0 never reads C.  The 8 old values of a row are all loaded before any store, so
     * their latencies overlap instead of adding up. */
    const int col0 = block_col0 + thread_col * TN;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = block_row0 + thread_row * TM + i;
        if (row >= M)
            break;
        float c_old[TN];
#pragma unroll
        for (int j = 0; j < TN; ++j)
            c_old[j] = (beta != 0.0f && col0 + j < N) ? C[row * ldc + col0 + j] : 0.0f;
#pragma unroll
        for (int j = 0; j < TN; ++j)
            if (col0 + j < N)
                C[row * ldc + col0 + j] = (beta == 0.0f) ? alpha * acc[i][j]
                                                         : alpha * acc[i][j] + beta * c_old[j];
    }
}

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda,
                          const float *B, int ldb, float beta, float *C, int ldc,
                          cudaStream_t stream)
{
    int done = 0;
    cudaError_t err = sgemm_prologue(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, &done);
    if (err != cudaSuccess || done)
        return err;

    /* gridDim.y is capped at 65535: taller matrices run as slabs of rows. */
    const int slab_rows = SGEMM_MAX_GRID_Y * BM;
    for (int row0 = 0; row0 < M; row0 += slab_rows) {
        const int rows = (M - row0 < slab_rows) ? M - row0 : slab_rows;
        const dim3 grid(ceil_div(N, BN), ceil_div(rows, BM));
        sgemm_blocktiling_2d<<<grid, THREADS, 0, stream>>>(rows, N, K, alpha,
                                                            A + (size_t)row0 * lda, lda, B, ldb,
                                                            beta, C + (size_t)row0 * ldc, ldc);
        err = cudaGetLastError();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" const struct step step_05 = {
    5, "blocktiling_2d", "2-D blocktiling: each thread an 8x8 tile of C as outer products", 0,
    launch,
};
