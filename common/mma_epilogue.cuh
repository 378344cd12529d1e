/*
 * mma_epilogue.cuh - the end of a C tile in the mma.sync rungs (19-21): alpha acc + beta C
 * written through shared memory in whole rows, and SGEMM's own answer for the sums that are not
 * finite. Include after mma_tile.cuh.
 */
#ifndef SGEMM_LADDER_MMA_EPILOGUE_CUH
#define SGEMM_LADDER_MMA_EPILOGUE_CUH

#include <math.h>   /* isfinite */
#include <stdint.h> /* uintptr_t */

#include "sequential_dot.cuh"

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
    const int c4 = threadIdx.x % (BN / 4), r0 = threadIdx.x / (BN / 4);
    const int rows_per_pass = THREADS / (BN / 4), col = n0 + 4 * c4;
    const int vec = ldc % 4 == 0 && (uintptr_t)C % 16 == 0 && col + 3 < N;
    int redo = 0;
#pragma unroll 8 /* in full, the stream-K kernel spilled on sm_80-89 */
    for (int p = 0; p < BM / rows_per_pass; ++p) {
        const int row = m0 + r0 + p * rows_per_pass;
        if (row >= M)
            break;
        const float4 v = *(const float4 *)(c_tile + (r0 + p * rows_per_pass) * C_LD + 4 * c4);
        float *c = C + (size_t)row * ldc + col;
        if (vec && isfinite(v.x) && isfinite(v.y) && isfinite(v.z) && isfinite(v.w)) {
            float4 out = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
            if (beta != 0.0f) {
                const float4 old = *(const float4 *)c;
                out = make_float4(out.x + beta * old.x, out.y + beta * old.y,
                                  out.z + beta * old.z, out.w + beta * old.w);
            }
            *(float4 *)c = out;
        } else {
            const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                if (col + q >= N)
                    continue;
                if (!isfinite(e[q]))
                    redo = 1;
                else
                    c[q] = (beta == 0.0f) ? alpha * e[q] : alpha * e[q] + beta * c[q];
            }
        }
    }
    /* Rare: the sums that are not finite, found again in c_tile; the loop stays rolled (a K
     * loop in each of 64 copies would only bloat the kernel). */
#pragma unroll 1
    for (int e = 0; redo && e < 4 * (BM / rows_per_pass); ++e) {
        const int lr = r0 + (e / 4) * rows_per_pass, row = m0 + lr, cq = col + e % 4;
        if (row >= M || cq >= N || isfinite(c_tile[lr * C_LD + 4 * c4 + e % 4]))
            continue;
        const float v = sequential_dot(A, lda, B, ldb, K, row, cq);
        float *c = C + (size_t)row * ldc + cq;
        *c = (beta == 0.0f) ? alpha * v : alpha * v + beta * *c;
    }
}

#endif

#endif /* SGEMM_LADDER_MMA_EPILOGUE_CUH */
