/*
 * sequential_dot.cuh - SGEMM's own answer for one element of C, a sequential FP32 loop: what the
 * tensor-core rungs (20-27) write where their sum is not finite (an Inf or NaN in A or B, or a
 * finite operand whose TF32 part overflowed), at no cost when C is finite.
 */
#ifndef SGEMM_LADDER_SEQUENTIAL_DOT_CUH
#define SGEMM_LADDER_SEQUENTIAL_DOT_CUH

/* SGEMM's own answer for one element, as a sequential FP32 loop: for a sum that is not finite
 * (its Inf or NaN, or a finite value where only the big parts overflowed). */
static __device__ float sequential_dot(const float *A, int lda, const float *B, int ldb, int K,
                                       int row, int col)
{
    float v = 0.0f;
#pragma unroll 1
    for (int k = 0; k < K; ++k)
        v = fmaf(A[(size_t)row * lda + k], B[(size_t)k * ldb + col], v);
    return v;
}

#endif /* SGEMM_LADDER_SEQUENTIAL_DOT_CUH */
