/*
 * mma_split_k.cuh - split-K for the mma.sync rungs (21, 22): where a round of 128x128 tiles
 * leaves SMs idle, each tile's K is cut into slices, one block a slice (sgemm_mma_slice); each
 * block writes its raw sums to the stream's workspace and sum_slices() adds them in slice
 * order, so the floats do not depend on which block ran first. split_slices() plans the cut,
 * launch_slices() runs it. Include after mma_whole.cuh.
 */
#ifndef SGEMM_LADDER_MMA_SPLIT_K_CUH
#define SGEMM_LADDER_MMA_SPLIT_K_CUH

#include "plan_costs.h"      /* SUM_KERNEL_COST, MMA_SPLIT_TILE_COST */
#include "sgemm_workspace.h" /* SGEMM_WORKSPACE_FLOATS_PER_SM */

/* Split-K: a slice is at least this many K tiles deep; sum_slices() blocks are 32 x SUM_ROWS. */
#define SLICE_MIN_K_TILES 8
#define SUM_ROWS          8

/* Block b: tile b / slices (row by row), K slice b % slices, the K tiles [j0, j1) of an even
 * cut; its raw sums, unscaled, to its slot work[b][BM][BN], the whole tile, edges too (zeros
 * there), so that sum_slices() reads in range. */
template <class Products, int BK, int VA, int VB>
static __global__ void __launch_bounds__(THREADS, 1)
    sgemm_mma_slice(int M, int N, int K, const float *A, int lda, const float *B, int ldb,
                    int slices, float *work)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    extern __shared__ __align__(16) float smem[];
    const int tiles_n = (N - 1) / BN + 1;
    const int tile = (int)blockIdx.x / slices, slice = (int)blockIdx.x % slices;
    const int m0 = (tile / tiles_n) * BM, n0 = (tile % tiles_n) * BN;
    const int all_k_tiles = (K - 1) / BK + 1;
    const int j0 = (int)((long long)slice * all_k_tiles / slices);
    const int j1 = (int)((long long)(slice + 1) * all_k_tiles / slices);

    float acc[MI][NI][4];
    clear(acc);
    k_range<BK, VA, VB, Products>(smem, A, lda, B, ldb, M, N, K, m0, n0, j0, j1, acc, NULL,
                                  NULL);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int g = lane / 4, t = lane % 4;
    float *out = work + (size_t)blockIdx.x * (BM * BN);
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = wm * WM + i * 16 + g + 8 * h, col = wn * WN + j * 8 + 2 * t;
                *(float2 *)(out + row * BN + col) =
                    make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
            }
#elif defined(__CUDA_ARCH__)
    __trap(); /* mma_start() refuses devices below sm_80 */
#endif
}

typedef void (*mma_slice_kernel)(int, int, int, const float *, int, const float *, int, int,
                                 float *);

/* As whole_kernel() (mma_whole.cuh). */
template <class Products>
static mma_slice_kernel slice_kernel(int deep, int va, int vb)
{
    static const mma_slice_kernel kernels[2][2][2] = {
        {{sgemm_mma_slice<Products, BK_LOW, 0, 0>, sgemm_mma_slice<Products, BK_LOW, 0, 1>},
         {sgemm_mma_slice<Products, BK_LOW, 1, 0>, sgemm_mma_slice<Products, BK_LOW, 1, 1>}},
        {{sgemm_mma_slice<Products, BK_DEEP, 0, 0>, sgemm_mma_slice<Products, BK_DEEP, 0, 1>},
         {sgemm_mma_slice<Products, BK_DEEP, 1, 0>, sgemm_mma_slice<Products, BK_DEEP, 1, 1>}},
    };
    return kernels[deep][va][vb];
}

template <class Products>
static cudaError_t prepare_slices(int deep)
{
    cudaError_t err = cudaSuccess;
    for (int i = 0; i < 4 && err == cudaSuccess; ++i)
        err = cudaFuncSetAttribute((const void *)slice_kernel<Products>(deep, i / 2, i % 2),
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, mma_smem(deep));
    return err;
}

/* Split-K's second half: C = alpha (the slices' partial sums, added in slice order) + beta C,
 * one thread per element of C; a sum that is not finite recomputed as in the kernel above. */
static __global__ void sum_slices(int M, int N, int K, float alpha, const float *A, int lda,
                           const float *B, int ldb, float beta, float *C, int ldc, int slices,
                           const float *work)
{
    const int col = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int row = (int)blockIdx.y * SUM_ROWS + (int)threadIdx.y;
    if (row >= M || col >= N)
        return;
    const int tiles_n = (N - 1) / BN + 1;
    const long long tile = (long long)(row / BM) * tiles_n + col / BN;
    const float *p = work + (size_t)tile * slices * (BM * BN) + (row % BM) * BN + col % BN;
    float v = 0.0f;
    for (int s = 0; s < slices; ++s)
        v += p[(size_t)s * (BM * BN)];
    if (!isfinite(v))
        v = sequential_dot(A, lda, B, ldb, K, row, col);
    float *c = C + (size_t)row * ldc + col;
    *c = (beta == 0.0f) ? alpha * v : alpha * v + beta * *c;
}

/* Split-K on the stream: `slices` blocks a tile into the workspace, then sum_slices(). */
template <class Products>
static cudaError_t launch_slices(int deep, const struct mma_shape *s, int slices, float *work,
                                 int M, int N, int K, float alpha, const float *A, int lda,
                                 const float *B, int ldb, float beta, float *C, int ldc,
                                 cudaStream_t stream)
{
    slice_kernel<Products>(deep, s->va, s->vb)<<<(unsigned)(s->tiles * slices), THREADS,
                                                 mma_smem(deep), stream>>>(M, N, K, A, lda, B,
                                                                           ldb, slices, work);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    const dim3 sum_block(32, SUM_ROWS), sum_grid((N - 1) / 32 + 1, (M - 1) / SUM_ROWS + 1);
    sum_slices<<<sum_grid, sum_block, 0, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                                                   slices, work);
    return cudaGetLastError();
}

/* The workspace (common/sgemm_workspace.h): its floats hold WORK_TILES_PER_SM partial tiles of
 * 128x128 per SM (the most split_slices() plans for; stream-K: one slot per block), then its
 * flags (stream-K: one per block). */
#define WORK_TILES_PER_SM (SGEMM_WORKSPACE_FLOATS_PER_SM / (BM * BN))
static_assert(WORK_TILES_PER_SM <= SGEMM_WORKSPACE_FLAGS_PER_SM, "a flag for every slot");

/* The plans, in units of one block's K tile (~4 us on an H100) on the busiest SM.
 * Whole tiles: ceil(tiles / SMs) rounds of all k_tiles K tiles of a tile.
 * Split-K: K slices per tile, whole rounds of blocks, ceil(tiles s / sms), times each block's
 * K tiles plus, when split, the partial tile written and read back (MMA_SPLIT_TILE_COST) and the
 * sum kernel. Considered up to two rounds of whole tiles (beyond, the last round is a small
 * part of the time), each slice at least SLICE_MIN_K_TILES deep, within the workspace.
 * Examples on 132 SMs: 64 tiles of 16 K tiles (1024^3) split 2; 144 tiles of 24 (1536^3)
 * split 3, 4 rounds of 8 K tiles instead of 2 rounds of 24, the second nearly empty. The
 * constants were set for 32-deep K tiles (the partial tile then cost ~1.3 of them) and
 * measured there; kept with 64. split_slices() returns the slices (1: no split), *cost the
 * cost of the plan. */
static int split_slices(long long tiles, int K, int bk, int sms, double *cost)
{
    const long long k_tiles = (K - 1) / bk + 1;
    int best = 1;
    double best_cost = (double)((tiles - 1) / sms + 1) * (double)k_tiles;
    const long long most = WORK_TILES_PER_SM * (long long)sms / tiles; /* the workspace's room */
    for (long long s = 2; tiles < 2LL * sms && s <= k_tiles / SLICE_MIN_K_TILES && s <= most;
         ++s) {
        const double rounds = (double)((tiles * s - 1) / sms + 1);
        const double sum_kernel =
            SUM_KERNEL_COST + SUM_KERNEL_COST_PER_BLOCK * (double)(tiles * s);
        const double c =
            rounds * ((double)((k_tiles - 1) / s + 1) + MMA_SPLIT_TILE_COST) + sum_kernel;
        if (c < best_cost) {
            best_cost = c;
            best = (int)s;
        }
    }
    *cost = best_cost;
    return best;
}

#endif /* SGEMM_LADDER_MMA_SPLIT_K_CUH */
