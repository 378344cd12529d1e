/* cublas_ref.c - cuBLAS as the reference and the speed to beat. */
#include "cublas_ref.h"

#include "gpu.h"

cublasHandle_t ref_create(cudaStream_t stream)
{
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    CUBLAS_CHECK(cublasSetStream(h, stream));
    CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    /* The default math mode computes cublasSgemm in FP32 (TF32 tensor cores only
     * with CUBLAS_TF32_TENSOR_OP_MATH): the speed users get, on the same arithmetic. */
    CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    return h;
}

void ref_destroy(cublasHandle_t h) { CUBLAS_CHECK(cublasDestroy(h)); }

void ref_sgemm(cublasHandle_t h, int m, int n, int k, float alpha, const float *A, int lda,
               const float *B, int ldb, float beta, float *C, int ldc)
{
    CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, B, ldb, A, lda, &beta,
                             C, ldc));
}

void ref_dgemm(cublasHandle_t h, int m, int n, int k, const double *A, int lda, const double *B,
               int ldb, double *C, int ldc)
{
    const double one = 1.0, zero = 0.0;
    CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, ldb, A, lda, &zero, C,
                             ldc));
}
