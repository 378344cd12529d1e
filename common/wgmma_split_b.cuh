/*
 * wgmma_split_b.cuh - rung 26's idea, written once for rungs 26 and 27: B split and transposed
 * once, before the product, into memory from the rung's own pool.
 *
 *   split_b_transposed()  kernel: B^T big and small, rows of k_pad floats, in the tile's K order
 *   split_b_first()       the split queued on the stream, where it pays (memory: rung_pool.cuh)
 */
#ifndef SGEMM_LADDER_WGMMA_SPLIT_B_CUH
#define SGEMM_LADDER_WGMMA_SPLIT_B_CUH

#include "plan_costs.h"   /* SPLIT_B_MIN_M, SPLIT_B_MAX_BYTES */
#include "rung_pool.cuh"  /* struct rung_pool, rung_memory */
#include "wgmma.cuh"      /* BK, BN, split, b_tile_row */

/* B split once, before the product: bt[n][k] big and bt[n_pad + n][k] small, rows of k_pad
 * floats, k in the tile's K order (b_tile_row()), zeros outside K and N. A 32 x 32 block of B
 * through shared memory, read along B's rows and written along bt's (no bank conflicts). */
#define SPLIT_B_TILE 32
static __global__ void __launch_bounds__(SPLIT_B_TILE * 8)
    split_b_transposed(int K, int N, const float *B, int ldb, int k_pad, int n_pad, unsigned *bt)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ float block[SPLIT_B_TILE][SPLIT_B_TILE + 1]; /* [k][n] */
    const int n0 = (int)blockIdx.x * SPLIT_B_TILE, k0 = (int)blockIdx.y * SPLIT_B_TILE;
    const int x = (int)threadIdx.x, y = (int)threadIdx.y;
#pragma unroll
    for (int r = y; r < SPLIT_B_TILE; r += 8)
        block[r][x] = k0 + r < K && n0 + x < N ? B[(size_t)(k0 + r) * ldb + n0 + x] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int r = y; r < SPLIT_B_TILE; r += 8) { /* row n0 + r of bt, position k0 + x */
        unsigned big, small;
        split(block[b_tile_row(x / 4, x % 4)][r], &big, &small);
        const size_t at = (size_t)(n0 + r) * k_pad + k0 + x;
        bt[at] = big;
        bt[(size_t)n_pad * k_pad + at] = small;
    }
#elif defined(__CUDA_ARCH__)
    __trap(); /* as the product: launch() never gets here without the sm_90a image */
#endif
}

/* Whether B's split pays (min_m rows or more: each row of tiles would split all of B again;
 * SPLIT_B_MIN_M, or SPLIT_B_COPIED_MIN_M where B would be copied otherwise) and fits
 * (SPLIT_B_MAX_BYTES, 1 GiB: K x N = 2^27), for whole tiles. */
static inline int split_b_pays(int M, int N, int K, int min_m)
{
    const size_t k_pad = (size_t)((K - 1) / BK * BK + BK), n_pad = (size_t)((N - 1) / BN * BN + BN);
    return M >= min_m && 2 * sizeof(unsigned) * k_pad * n_pad <= SPLIT_B_MAX_BYTES;
}

/* B split once, queued on the stream: *bt := B^T big (rows 0..n_pad - 1) and small (from row
 * n_pad), rows of k_pad floats. NULL where it does not pay or fit (split_b_pays()), the stream
 * captures (a graph would own the memory) or there is no memory: then the producers split B.
 * The caller gives it back with rung_memory() after the product. */
static cudaError_t split_b_first(struct sgemm_rung_facts *table, struct rung_pool *pools, int M,
                                 int N, int K, int min_m, const float *B, int ldb, unsigned **bt,
                                 int *k_pad, int *n_pad, cudaStream_t stream)
{
    *bt = NULL;
    *k_pad = (K - 1) / BK * BK + BK;
    *n_pad = (N - 1) / BN * BN + BN;
    const size_t bytes = 2 * sizeof(unsigned) * (size_t)*k_pad * (size_t)*n_pad;
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t err = cudaSuccess;
    if (!split_b_pays(M, N, K, min_m) ||
        (err = cudaStreamIsCapturing(stream, &capture)) || capture != cudaStreamCaptureStatusNone)
        return err;
    if (rung_memory(table, pools, bytes, (void **)bt, stream) != cudaSuccess) {
        *bt = NULL; /* no memory, or no pool on this device: the producers split B */
        (void)cudaGetLastError();
        return cudaSuccess;
    }
    /* grid.y: k_pad / 32 <= 2^30 / (8 x 128 x 32) = 32768, within its 65535 */
    const dim3 grid(*n_pad / SPLIT_B_TILE, *k_pad / SPLIT_B_TILE), block(SPLIT_B_TILE, 8);
    split_b_transposed<<<grid, block, 0, stream>>>(K, N, B, ldb, *k_pad, *n_pad, *bt);
    if ((err = cudaGetLastError()) != cudaSuccess) {
        (void)rung_memory(table, pools, 0, (void **)bt, stream);
        *bt = NULL;
    }
    return err;
}

#endif /* SGEMM_LADDER_WGMMA_SPLIT_B_CUH */
