/*
 * mma_split_k.cuh - split-K for the mma.sync rungs (22, 23): where a round of 128x128 tiles
 * leaves SMs idle, each tile's K is cut into slices, one block a slice (sgemm_mma_slice); each
 * block writes its raw sums to the stream's workspace and sum_slices() adds them in slice
 * order, so the floats do not depend on which block ran first (split_sum.cuh, with the plan,
 * split_slices()); launch_slices() runs it. Include after mma_whole.cuh.
 */
#ifndef SGEMM_LADDER_MMA_SPLIT_K_CUH
#define SGEMM_LADDER_MMA_SPLIT_K_CUH

#include "split_sum.cuh" /* sum_slices, launch_sum_slices, split_slices */

static_assert(BM == SPLIT_TILE && BN == SPLIT_TILE, "split_sum.cuh's tile is this one");

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
    k_range<BK, VA, VB, Products>(smem, A, lda, B, ldb, M, N, K, m0, n0, j0, j1, acc);
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
    return launch_sum_slices(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slices, work, stream);
}

#endif /* SGEMM_LADDER_MMA_SPLIT_K_CUH */
