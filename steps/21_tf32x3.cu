/*
 * Rung 21 - 3xTF32: FP32 accuracy from three TF32 products (common/tf32x3.cuh).
 *
 * What changes from rung 20
 *   Rung 20 rounds each operand to TF32 and loses up to 2^-11 of it. Here each operand is split
 *   in two TF32 numbers (split(), as CUTLASS's sm80 3xTF32 kernels do), and each product is
 *   three TF32 products:
 *
 *     x = big + small,   big = tf32(x),   small = x - big   (|small| <= 2^-11 |x|)
 *     a b = a_big b_big + a_big b_small + a_small b_big + a_small b_small
 *
 *   The last term (below 2^-22 |a b|) is dropped, and small reaches the tensor core cut to TF32:
 *   a product errs by up to ~2^-20 |a b|, but those errors cancel in a sum (see Measured).
 *   The split costs two instructions an element on sm_90 (cvt.rn.tf32.f32, then a subtraction),
 *   three below: adding 0x1000, half of the last kept bit, before the tensor core cuts the low
 *   13 bits rounds to nearest (+16% at 4096 against cvt.rna's nine).
 *
 * Where the products are summed: the tensor core truncates
 *   The tensor core aligns the terms it adds to the largest and cuts the bits below, where FFMA
 *   rounds each addition: run into one accumulator over all of K, as rung 20 does, the three
 *   products lose bits against a growing sum (59.5 u at 4096; cuBLAS SGEMM ~5.6 u). As Ootomo
 *   and Yokota (2022), the long sum stays out of the tensor core, here once a 64-deep K tile:
 *   a K tile's products run into a zeroed `chunk` (small terms first: a truncating sum loses
 *   least when it starts with them), which joins the FP32 `acc` by FADD, rounded to nearest.
 *   The truncation then cuts 2^-23 of a 64-term partial sum: 1.37 u at 4096 (the paper's FADD
 *   per k8 step: 2.1 u, with 8x the FADDs).
 *
 * Inf, NaN and the tail of the float range
 *   For x = +-Inf, small = Inf - Inf = NaN: the cross terms turn an Inf that SGEMM returns into
 *   NaN; a finite x within 2^-12 of FLT_MAX rounds up to an Inf big part. Both leave a sum that
 *   is not finite, as does every input that makes SGEMM's answer Inf or NaN, so rung 20's
 *   epilogue recomputes it with a sequential FP32 loop, at no cost when C is finite. The small
 *   part of an x below ~2^-115 is subnormal and may be lost: an error below 2^-126 |b| a term.
 *   The cross terms stay TF32: in one bf16 mma (~1.7x) they failed the checks.
 *
 * Why the hardware rewards it
 *   Three mma.sync where rung 20 issues one, plus two splits an element and 64 FADDs a thread
 *   every K tile: the tensor cores' rate over three, still above the FFMA peak.
 *
 * Prediction: the HMMAs alone ran 1.46-1.53x cuBLAS SGEMM with three products (255 TFLOP/s of
 *   TF32 for this operand pattern); with the loads, splits and FADDs ~1.4x at 4096 and 8192,
 *   and below rung 20's TF32 error by some 300x: ~1.5 u against FP64 where cuBLAS has ~5 u.
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): ratio to cuBLAS
 *   SGEMM 0.987 / 1.418 / 1.435 / 1.445x at 1024 / 2048 / 4096 / 8192, as predicted, 57% of
 *   rung 20's speed; 1.79 / 1.43 / 1.52 / 1.06 u against FP64 where cuBLAS SGEMM has 4.7 / 4.9
 *   / 6.8 / 6.5 u: 340-520x below rung 20's error, and below cuBLAS's. At 1024 the 64 tiles
 *   leave half of 132 SMs idle: rung 22's subject. 217-224 registers (sm_90), 0 spills.
 */
#include "../common/step.h"
#include "../common/mma_tile.cuh"     /* the 128x128 tile, load_tile, mma_tf32, k_range */
#include "../common/mma_epilogue.cuh" /* store_c, sequential_dot */
#include "../common/tf32x3.cuh"       /* split, tile_products, tf32x3_products */
#include "../common/mma_whole.cuh"    /* sgemm_mma, launch_whole, mma_start */

/* The prologue, the device's facts once, then whole tiles (common/mma_whole.cuh). */
static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    return launch_whole_rung<tf32x3_products>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

extern "C" const struct step step_21 = {
    21, "tf32x3", "3xTF32 with mma.sync: FP32 accuracy from three TF32 products",
    80, launch,
};
