/*
 * Rung 01 - naive: one thread per element of C, straight from global memory.
 *
 * What it does
 *   The grid covers C with 32x32 tiles, one block of 32x32 threads per tile,
 *   and each thread computes one element c(row, col) as a dot product of row
 *   `row` of A with column `col` of B, read directly from global memory:
 *
 *       acc = sum over k of A[row][k] * B[k][col]
 *       C[row][col] = alpha * acc + beta * C[row][col]
 *
 * The mapping (the point of this rung, and the one thing rung 02 changes)
 *   threadIdx.x is the fastest-varying thread index: the 32 threads of a warp
 *   have threadIdx.x = 0..31 and the same threadIdx.y.  Here threadIdx.x picks
 *   the ROW, so a warp walks DOWN one column of C:
 *
 *            col = blockIdx.x*32 + threadIdx.y  (same for the whole warp)
 *                     |
 *             C       v                A                     B
 *          +--------------+       +-----------+        +--------------+
 *   row -> | lane 0  #    |       | lane 0 ==>|        |        #     |
 *          | lane 1  #    |       | lane 1 ==>|        |        #     |
 *          | lane 2  #    |       | lane 2 ==>|        |        #     |
 *          |  ...    #    |       |  ...      |        |        #     |
 *          | lane 31 #    |       | lane 31==>|        |        #     |
 *          +--------------+       +-----------+        +--------------+
 *   each lane its own row:        32 rows, lda apart     one column: all 32
 *   32 stores, ldc floats apart                           lanes read the same
 *                                                         float (a broadcast)
 *
 *   Global memory is served in 32-byte sectors.  At each step k the warp's 32
 *   loads of A hit 32 different sectors (rows are lda floats apart) and use 4
 *   bytes of each: 1/8 of the bytes moved are useful.  The final stores to C
 *   are scattered the same way.  Caches hide part of it (the next 7 values of
 *   each A row arrive in the same sector), but the load/store units still
 *   replay each warp instruction 32 times.
 *
 * Edges: threads whose (row, col) fall outside C return at once, so any M, N,
 * K and any leading dimensions work; no alignment beyond 4 bytes is needed.
 * beta == 0 writes C without reading it.
 *
 * Expected speed: a few hundred GFLOP/s, about 1% of cuBLAS (the naive kernel of Simon
 * Boehm's SGEMM_CUDA, the most-cited tutorial ladder, measured 0.010x on an H200).
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 498 GFLOP/s at 4096, 0.010x
 * cuBLAS (0.015 / 0.010 / 0.010 at 1024 / 2048 / 4096), as expected. Nsight Compute
 * (results/nvidia-h200/PROFILE.md): 32 sectors per store request and 16.5 per load request; the top
 * stall is the full load/store queue (lg_throttle, 416 warps per issue).
 * The ceilings it is measured against: results/NOTES.md.
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"

#define TILE 32 /* a block of TILE x TILE threads computes a TILE x TILE tile of C */

static __global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A, int lda,
                            const float *B, int ldb, float beta, float *C, int ldc)
{
    /* threadIdx.x -> row: neighbouring lanes of a warp are neighbouring ROWS. */
    const int row = blockIdx.y * TILE + threadIdx.x;
    const int col = blockIdx.x * TILE + threadIdx.y;
    if (row >= M || col >= N)
        return;

    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc += A[row * lda + k] * B[k * ldb + col];

    float *c = &C[row * ldc + col];
    *c = (beta == 0.0f) ? alpha * acc : alpha * acc + beta * *c;
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
    const int slab_rows = SGEMM_MAX_GRID_Y * TILE;
    for (int row0 = 0; row0 < M; row0 += slab_rows) {
        const int rows = (M - row0 < slab_rows) ? M - row0 : slab_rows;
        const dim3 block(TILE, TILE);
        const dim3 grid(ceil_div(N, TILE), ceil_div(rows, TILE));
        sgemm_naive<<<grid, block, 0, stream>>>(rows, N, K, alpha, A + (size_t)row0 * lda, lda,
                                                B, ldb, beta, C + (size_t)row0 * ldc, ldc);
        err = cudaGetLastError();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" const struct step step_01 = {
    1, "naive", "naive: one thread per C element, lanes walk down a column", 0, launch,
};
