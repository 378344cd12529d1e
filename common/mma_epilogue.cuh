/*
 * mma_epilogue.cuh - the end of a C tile in the mma.sync rungs (20-22): alpha acc + beta C
 * written through shared memory in whole rows, and SGEMM's own answer for the sums that are not
 * finite. Include after mma_tile.cuh.
 */
#ifndef SGEMM_LADDER_MMA_EPILOGUE_CUH
#define SGEMM_LADDER_MMA_EPILOGUE_CUH

#include "c_tile.cuh" /* write_c_tile */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
/* C tile (m0, n0) := alpha acc + beta C, by way of shared memory. Lane (g, t) holds, of each
 * 16x8 fragment, (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1): written to C from the
 * registers, a warp's store would fill half of each 32-byte sector it touches. Through a BM x
 * C_LD tile in the stages' memory, each warp writes one row of 128 floats as 32 float4s: whole
 * sectors, and a quarter of the store instructions. A sum that is not finite is not written
 * here but recomputed below. The caller refills the stages only after a barrier (the stream-K
 * kernel has one between pieces). */
#define C_LD (BN + 8) /* rows 8 banks apart: a half warp's float2 stores hit 32 banks (by the
                       * addresses; not counted) */
static_assert(BM * C_LD * (int)sizeof(float) <= SMEM_BYTES(BK_LOW), "the C tile fits the stages");
static __device__ __forceinline__ void store_c(float *smem, int M, int N, int K, float alpha,
                                               const float *A, int lda, const float *B, int ldb,
                                               float beta, float *C, int ldc, int m0, int n0,
                                               float acc[MI][NI][4])
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int g = lane / 4, t = lane % 4;
    float *c_tile = smem;
    __syncthreads(); /* every warp is done with the last K tile's stage */
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                *(float2 *)(c_tile + (wm * WM + i * 16 + g + 8 * h) * C_LD + wn * WN + j * 8 +
                            2 * t) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
    __syncthreads();
    /* Thread: float4 c4 of rows r0, r0 + 8, ..., r0 + 120 (a warp: one row) */
    write_c_tile<BM, BN, C_LD, THREADS>(c_tile, threadIdx.x, M, N, K, alpha, A, lda, B, ldb, beta,
                                        C, ldc, m0, n0);
}

#endif

#endif /* SGEMM_LADDER_MMA_EPILOGUE_CUH */
