/*
 * Rung 20 - TF32 on tensor cores with mma.sync: several times the FFMA rate, and TF32's error.
 * Opens Part II: read against rung 18, the FFMA rung whose kernels rung 19 keeps where rows are
 * aligned (its diff is the whole of the change).
 *
 * What changes from rung 18
 *   The multiply-adds move to the tensor cores: mma.sync.m16n8k8 with TF32 operands multiplies
 *   16x8 of A by 8x8 of B into 16x8 of C in one warp instruction, the work of 32 FFMAs a lane.
 *   The tensor core reads an operand's top 19 bits, TF32: float's sign and exponent and 10 of
 *   its 23 fraction bits. Each operand is rounded to TF32 first (to_tf32(): cvt.rn.tf32.f32 on
 *   sm_90, cvt.rna below), so it moves by at most 2^-11 of itself and a product by 2^-10:
 *   16384 times float's u = 2^-24. That is the lesson of this rung: the speed of the tensor
 *   cores, and an error no SGEMM caller would accept. Its `struct step` says so (STEP_TF32) and
 *   the harness holds it to that bound (harness/verify.h), not to an SGEMM's. Rung 21 removes
 *   the error.
 *
 * The tile (common/mma_tile.cuh)
 *   A block of 8 warps (2 x 4) computes 128x128 of C; a warp 64x32 as 4 x 4 fragments of 16x8,
 *   64 floats of acc a thread. K tiles of 64 in two cp.async stages (144 KB; 32 deep, 80 KB, on
 *   sm_86 and sm_89), one block an SM. Each thread's fragments are converted to TF32 as they
 *   are loaded from shared memory.
 *
 * The traps
 *   ldmatrix moves 16-bit elements: it cannot transpose 32-bit TF32 operands, so B's fragments
 *   are read with plain LDS, A's with LDS.128. Taken literally (lane (g, t): k = t and t + 4), a
 *   lane's A elements lie four floats apart. An mma sums its eight k at once, so which k a
 *   lane's slots hold is free while A's and B's agree: here lane t holds k = 4t..4t+3 of two k8
 *   steps, one LDS.128 a row for both (tf32_products), a K tile 1131 -> 1061 instructions in
 *   the 3xTF32 build (sm_90). B follows the same k, XOR-swizzled against bank conflicts (the
 *   layout comment in mma_tile.cuh): 0 bank conflicts, counted by Nsight Compute.
 *
 * The epilogue, through shared memory (common/mma_epilogue.cuh)
 *   A lane's sums of a fragment are two adjacent floats: stored from registers, a warp fills
 *   half of each of 8 sectors. acc goes to the stages' memory first (128 x 136 floats), then
 *   each warp writes a row of C as 32 float4s: whole sectors, a quarter of the stores. A sum
 *   that is not finite (an Inf or NaN in A or B, or a finite operand within 2^-12 of FLT_MAX
 *   that rounded up to Inf) is recomputed by a sequential FP32 loop: SGEMM's answer.
 *
 * Why the hardware rewards it
 *   An H200 SM issues 128 FFMAs a clock (256 flops); its tensor cores run dense TF32 at ~495
 *   TFLOP/s over 132 SMs, ~7.5x the FFMA peak. mma.sync reaches less than that: measured with
 *   this rung's 4 A x 4 B fragments a warp, the HMMAs alone run 255 TFLOP/s (results/notes/
 *   step_21.md), and the loads and conversions beside them cost more.
 *
 * Prediction: ~2.2x cuBLAS SGEMM at 4096 and 8192 (the 3xTF32 build with only the big x big
 *   product ran 2.245x), ~450 u against FP64 at 4096 where cuBLAS has ~5 u: the sum of 4096
 *   products, each off by up to 2^-10 of itself, in random directions.
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): ratio to cuBLAS
 *   SGEMM 1.643 / 2.446 / 2.533 / 2.552x at 1024 / 2048 / 4096 / 8192 (rung 18 in the same run:
 *   1.146 / 1.036 / 1.058 / 1.064), above the prediction: the 3xTF32 build it came from still
 *   split and summed a chunk a K tile. Error against FP64: 922 / 703 / 514 / 363 u where cuBLAS
 *   has 4.7-6.8 u, an rms of 2.6e-4 against cuBLAS's 1.1e-6.
 *   The figure is in u of (|A||B|)_ij, which grows as K while the rounding errors, of random
 *   sign, grow as sqrt(K): so it falls with K. Within the TF32 bound at every check; outside an
 *   SGEMM's at every random one. 148-152 registers (sm_90), 0 spills.
 */
#include "../common/step.h"
#include "../common/mma_tile.cuh"     /* the 128x128 tile, load_tile, mma_tf32, k_range */
#include "../common/mma_epilogue.cuh" /* store_c, sequential_dot */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
/* x rounded to TF32, to nearest: the register the mma reads, which ignores its low 13 bits.
 * sm_90: cvt.rn.tf32.f32 (ties to even, one F2FP.TF32); sm_80-89 have only cvt.rna (ties away
 * from zero). Inf and NaN stay what they are; a finite x within 2^-12 of FLT_MAX becomes Inf. */
static __device__ __forceinline__ unsigned to_tf32(float x)
{
    unsigned r;
#if __CUDA_ARCH__ >= 900
    asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
#else
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
#endif
    return r;
}
#endif

/* One K tile's products into acc, two k8 steps at a time, each mma summing into acc itself: the
 * tensor core's own FP32 accumulator over all of K. The mma sums its eight k in one step, so
 * which eight k a step takes, and in which slots, is free as long as A's and B's fragments
 * agree: lane t takes k = 4t..4t+3 of the 16-deep pair, the first step 4t and 4t + 1 (as the
 * mma's k = t and t + 4), the second 4t + 2 and 4t + 3. A lane's A elements of both steps are
 * then four consecutive floats of its row: one LDS.128 per row (rows g and g + 8) where the
 * literal layout takes eight LDS.32. B's fragment reads rows 4t + 2h and 4t + 2h + 1 of column
 * g, at its swizzled column (b_col). */
struct tf32_products {
    template <int BK>
    static __device__ __forceinline__ void add_tile(const float *a_tile, const float *b_tile,
                                                    int wn0, float acc[MI][NI][4], int g, int t)
    {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#pragma unroll
        for (int kp = 0; kp < BK / 16; ++kp) {
            unsigned b[2][NI][2]; /* [step of the pair][fragment][k slot] */
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int j = 0; j < NI; ++j) {
                    const int k = kp * 16 + 4 * t + 2 * h;
                    const float *p = b_tile + k * B_LD + b_col(k, wn0 + j * 8 + g);
                    b[h][j][0] = to_tf32(p[0]);
                    b[h][j][1] = to_tf32(p[B_LD]); /* k + 1: the same swizzle */
                }
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const float *p = a_tile + (i * 16 + g) * A_LD(BK) + kp * 16 + 4 * t;
                const float4 row_g = *(const float4 *)p;
                const float4 row_g8 = *(const float4 *)(p + 8 * A_LD(BK));
                /* Fragment layout (PTX ISA, mma.m16n8k8 .tf32): a0 = (g, k slot t), a1 = (g + 8,
                 * t), a2 = (g, t + 4), a3 = (g + 8, t + 4). */
                const unsigned a[2][4] = {
                    {to_tf32(row_g.x), to_tf32(row_g8.x), to_tf32(row_g.y), to_tf32(row_g8.y)},
                    {to_tf32(row_g.z), to_tf32(row_g8.z), to_tf32(row_g.w), to_tf32(row_g8.w)}};
#pragma unroll
                for (int h = 0; h < 2; ++h)
#pragma unroll
                    for (int j = 0; j < NI; ++j)
                        mma_tf32(acc[i][j], a[h], b[h][j]);
            }
        }
#endif
    }
};

#include "../common/mma_whole.cuh" /* sgemm_mma, launch_whole, mma_start */

/* The prologue, the device's facts once, then whole tiles (common/mma_whole.cuh). */
static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    return launch_whole_rung<tf32_products>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

extern "C" const struct step step_20 = {
    20, "tf32_mma", "TF32 on tensor cores with mma.sync: fast, with TF32's error",
    80, launch, NULL, STEP_TF32,
};
