/*
 * Rung 04 - blocktiling_1d: each thread computes a column of 16 results, reusing B from a register.
 *
 * What changes from rung 03
 *   In rung 03 every FMA needed its own read of b_tile.  Here a thread owns TM = 16 results
 *   down ONE column of C.  At each k it reads its value of B once into a register, b_val, and
 *   feeds it to 16 FMAs, one per row:
 *
 *        b_val = b_tile[k][thread_col]              a_tile          acc
 *                                            row r+0  [ .. a .. ] -> acc[0]  += a * b_val
 *                                            row r+1  [ .. a .. ] -> acc[1]  += a * b_val
 *                                              ...                     ...
 *                                            row r+15 [ .. a .. ] -> acc[15] += a * b_val
 *                                                         ^ column k       (r = thread_row*16)
 *
 *   The tiles change shape to fit: a block computes BM x BN = 64 x 64 of C with 256 threads
 *   (4 groups of 16 rows x 64 columns), and walks K BK = 8 at a time, so a_tile is 64 x 8 and
 *   b_tile is 8 x 64.  The block is 1-D and each thread copies 2 floats of A and 2 of B per tile.
 *
 * Why the hardware rewards it
 *   Shared memory returns 128 bytes per clock to an SM: one 4-byte register for each lane of a
 *   warp.  In rung 03 every FFMA needed its own B value that way (plus half a clock for A),
 *   while the SM's FP32 units run 4 warp-FFMA per clock: they were at most 16% busy.  Here,
 *   per warp and 8-deep tile, in the SASS ptxas emits:
 *     b_tile: 8 LDS of 32 neighbouring floats, 1 clock each, each value then used 16 times -> 8
 *     a_tile: all 32 lanes of a warp have the same thread_row (a row group is 64 threads wide),
 *             so every A read is a broadcast, and the 8 k-values of a row are 32 contiguous
 *             bytes, which the compiler reads as two LDS.128; a uniform 16-byte load takes
 *             2 clocks: 32 LDS.128 -> 64
 *     copies: 4 conflict-free STS -> 4
 *   76 clocks per 128 FFMA, which need 32 clocks of FP32 work: at most 42% busy now.  A is the
 *   bigger cost: each A value still feeds a single FMA per thread (rung 05 changes that).
 *   Instruction issue allows 60% (213 instructions per tile, 128 FFMA).  Global memory: a
 *   block copies 1024 floats per 32768 FMAs, 32 per float (rung 03: 16).
 *
 * Why these parameters
 *   TM = 16, not the 8 of Simon Boehm's SGEMM_CUDA: per FFMA, A costs half a clock whatever TM
 *   is and B costs 1/TM, so TM = 16 costs 0.56 clocks where 8 costs 0.63, and 16 accumulators
 *   are cheap.
 *   BM = BN = 64 with TM = 16 makes 256 threads, which ptxas fits in 64 registers: 4 blocks
 *   (32 warps) share an SM, so while some wait at a barrier for their copies others compute.
 *   A 128 x 64 tile (512 threads) took 82 registers and left one block per SM.  BK = 8 makes a
 *   row of a_tile exactly two LDS.128 and keeps each tile at 2 KB.
 *
 * Edges and alignment
 *   As in rung 03, only elements inside A and B are read and the rest are stored as 0.0f in
 *   shared memory (padded k's add 0*0 = +0: the sum stays exact); a warp copies 4 row pieces
 *   of 32 bytes of A and 32 neighbouring floats of B.  Any M, N, K >= 1, any lda/ldb/ldc, any
 *   4-byte-aligned pointers.  Every thread copies and reaches both barriers; after the K loop
 *   threads whose column is outside C leave and the rows are stored only where row < M.
 *   beta == 0 never reads C; for beta != 0 the thread loads its 16 old values of C before
 *   storing any, so their latencies overlap.
 *
 * Expected speed (predicted before measuring): 0.38 of cuBLAS at 4096, in 0.34-0.42.
 *   The bound above is 42% of the FP32 peak, 0.53 of cuBLAS.  SGEMM_CUDA's 1-D kernel
 *   (64 x 64, TM = 8, 512 threads, 3 blocks per SM) has a bound of 38% (42 clocks per 64
 *   FFMA) and measured 0.330 on an H200, 69% of it; 4 smaller blocks per SM should wait less
 *   at the barriers: 70-75% of our bound gives 0.37-0.40.
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 21,742 GFLOP/s at 4096, 0.425 of
 *   cuBLAS (0.503 / 0.414 / 0.425 / 0.440 at 1024 / 2048 / 4096 / 8192), above the predicted range:
 *   80% of the bound, not 70-75%.  The model underrated TM = 16 with 4 blocks per SM: the
 *   stalls it expected stay small (Nsight Compute: short_scoreboard 2.9, long_scoreboard 2.8,
 *   mio_throttle 2.1 warps per issue), FMA pipe 36.7% busy against the 42% bound.
 *
 * Resources (ptxas -v, sm_90): 64 registers, 4096 bytes smem, 0 bytes spill stores, 0 bytes
 *   spill loads (64 registers on sm_80/86/89, 73 on sm_75; no spills anywhere).
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"

#define BM 64  /* rows of the C tile (and of the A tile) one block computes */
#define BN 64  /* cols of the C tile (and of the B tile) one block computes */
#define BK 8   /* K depth of one A tile and one B tile in shared memory */
#define TM 16  /* rows of C per thread: a column of TM results */
#define THREADS ((BM / TM) * BN) /* 4 x 64 = 256 threads, a 1-D block */

/* Each thread copies BM*BK/THREADS = 2 floats of A and BK*BN/THREADS = 2 of B per K tile. */
#define A_LOADS (BM * BK / THREADS)
#define B_LOADS (BK * BN / THREADS)
#define A_ROW_STEP (THREADS / BK) /* 32: rows of A copied by one pass of the block */
#define B_ROW_STEP (THREADS / BN) /* 4: rows of B copied by one pass of the block */

static __global__ void __launch_bounds__(THREADS)
sgemm_blocktiling_1d(int M, int N, int K, float alpha, const float *A, int lda,
                     const float *B, int ldb, float beta, float *C, int ldc)
{
    /* 16-byte aligned so that four neighbouring floats of a row can be read with one LDS.128. */
    __shared__ __align__(16) float a_tile[BM][BK];
    __shared__ __align__(16) float b_tile[BK][BN];

    const int tid = threadIdx.x;
    const int block_row0 = blockIdx.y * BM;
    const int block_col0 = blockIdx.x * BN;

    /* The thread owns TM results down one column: rows thread_row*TM + 0..TM-1, col thread_col. */
    const int thread_row = tid / BN; /* 0..3 */
    const int thread_col = tid % BN; /* 0..63 */

    /* Where this thread copies from: A rows a_load_row + 0/32, B rows b_load_row + 0/4.
     * Consecutive threads take consecutive addresses of a row, so the copies coalesce. */
    const int a_load_row = tid / BK, a_load_col = tid % BK;
    const int b_load_row = tid / BN, b_load_col = tid % BN;
    const int b_col = block_col0 + b_load_col;

    float acc[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i)
        acc[i] = 0.0f;

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

        /* k outside, rows inside: one B value, read once into a register, feeds TM FMAs. */
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float b_val = b_tile[k][thread_col];
#pragma unroll
            for (int i = 0; i < TM; ++i)
                acc[i] += a_tile[thread_row * TM + i][k] * b_val;
        }
        __syncthreads(); /* everyone is done reading before the next tile overwrites them */
    }

    /* Epilogue: only elements inside C are touched; beta == 0 never reads C.  The old values of
     * C are all loaded before any store, so their latencies overlap instead of adding up. */
    const int col = block_col0 + thread_col;
    const int row0 = block_row0 + thread_row * TM;
    if (col >= N)
        return;
    float c_old[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i)
        c_old[i] = (beta != 0.0f && row0 + i < M) ? C[(row0 + i) * ldc + col] : 0.0f;
#pragma unroll
    for (int i = 0; i < TM; ++i)
        if (row0 + i < M)
            C[(row0 + i) * ldc + col] = (beta == 0.0f) ? alpha * acc[i]
                                                       : alpha * acc[i] + beta * c_old[i];
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
        sgemm_blocktiling_1d<<<grid, THREADS, 0, stream>>>(rows, N, K, alpha,
                                                            A + (size_t)row0 * lda, lda, B, ldb,
                                                            beta, C + (size_t)row0 * ldc, ldc);
        err = cudaGetLastError();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" const struct step step_04 = {
    4, "blocktiling_1d", "1-D blocktiling: 16 results down a column per thread, B reused", 0,
    launch,
};
