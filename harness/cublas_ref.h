/* cublas_ref.h - the reference: cuBLAS SGEMM on row-major operands. */
#ifndef HARNESS_CUBLAS_REF_H
#define HARNESS_CUBLAS_REF_H

#include <cublas_v2.h>

/* A handle on `stream`, the default math mode (FP32, no TF32), host pointer mode. */
cublasHandle_t ref_create(cudaStream_t stream);
void ref_destroy(cublasHandle_t h);

/*
 * C := alpha*A*B + beta*C with row-major A (M x K, lda), B (K x N, ldb), C (M x N, ldc).
 * cuBLAS is column-major; a row-major matrix read column-major is its
 * transpose, and C^T = B^T A^T, so the operands go in swapped: cuBLAS computes
 * the N x M product of B^T and A^T, which is our C, in place.
 */
void ref_sgemm(cublasHandle_t h, int m, int n, int k, float alpha, const float *A, int lda,
               const float *B, int ldb, float beta, float *C, int ldc);

/* C := A*B in FP64, the same operand order: the reference the precision figures are measured
 * against (harness/precision.h). */
void ref_dgemm(cublasHandle_t h, int m, int n, int k, const double *A, int lda, const double *B,
               int ldb, double *C, int ldc);

#endif
