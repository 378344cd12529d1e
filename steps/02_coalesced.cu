/*
 * Rung 02 - coalesced: the same work as rung 01, with lanes walking ALONG a row.
 *
 * What changes from rung 01
 *   Two lines: threadIdx.x now picks the COLUMN and threadIdx.y the row.
 *   Every thread still computes one element of C, with the same loop; only
 *   which thread owns which element changes.
 *
 *            row = blockIdx.y*32 + threadIdx.y  (same for the whole warp)
 *
 *             C                      A                     B
 *          +--------------+       +-----------+        +--------------+
 *   row -> | 0 1 2 ... 31 |       |===>       |        | 0 1 2 ... 31 | <- row k
 *          |              |       | one row:  |        |              |
 *          +--------------+       | broadcast |        +--------------+
 *      32 lanes, 32 neighbouring  +-----------+        32 neighbouring floats
 *      floats: one 128-byte                            of row k: 128 bytes
 *      store                                           in 4 sectors
 *
 * Why the hardware rewards it
 *   The load/store unit merges the 32 addresses of a warp instruction into as
 *   few 32-byte sectors as cover them ("coalescing").  At each step k:
 *     rung 01: A -> 32 sectors (one per row), B -> 1 float broadcast
 *     rung 02: A -> 1 float broadcast,        B -> 4 sectors, all bytes used
 *   and each warp's store of C becomes 4 sectors instead of 32.  Instruction
 *   replays drop by up to 32x for those accesses, and the sector bytes moved
 *   per useful byte by 8x (a count derived from the addresses above, not a
 *   counter; the caches absorb most of the rest before DRAM).  Nsight Compute
 *   measures the sectors per request: stores 32 -> 4, loads 16.5 -> 2.5.
 *
 * Edges: as rung 01 (out-of-range threads return; any sizes, any ld).
 *
 * Expected speed: bound by the L1/L2 bandwidth of re-reading A and B (each
 * element of B is fetched by every row-block, each A row by every warp):
 * roughly 10x rung 01, about 10-15% of cuBLAS (the same kernel of Simon Boehm's
 * SGEMM_CUDA: 0.122x on an H200).
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 6,205 GFLOP/s at 4096, 0.121x
 * cuBLAS (0.191 / 0.129 / 0.121 / 0.114 at 1024 / 2048 / 4096 / 8192), 12.4x rung 01: as predicted.
 * The top stall is now the wait for loads from L1/L2 (long_scoreboard, 14.7 warps per issue;
 * lg_throttle 416 -> 8.8): the re-reads are the bound.
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"

#define TILE 32 /* a block of TILE x TILE threads computes a TILE x TILE tile of C */

static __global__ void sgemm_coalesced(int M, int N, int K, float alpha, const float *A, int lda,
                                const float *B, int ldb, float beta, float *C, int ldc)
{
    /* threadIdx.x -> col: neighbouring lanes of a warp are neighbouring COLUMNS. */
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
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
        sgemm_coalesced<<<grid, block, 0, stream>>>(rows, N, K, alpha, A + (size_t)row0 * lda, lda,
                                                    B, ldb, beta, C + (size_t)row0 * ldc, ldc);
        err = cudaGetLastError();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" const struct step step_02 = {
    2, "coalesced", "coalesced: lanes walk along a row of C", 0, launch,
};
