/*
 * mma_whole.cuh - whole tiles for the mma.sync rungs (20-22): one block a 128x128 tile of C and
 * all of its K, the products of a K tile left to the rung's Products (rung 20: TF32; from rung
 * 21: 3xTF32, tf32x3.cuh), and what every launch of these rungs does before it plans.
 *   sgemm_mma<Products, BK, VA, VB>  the kernel;
 *   whole_kernel<Products>()         the one for a K depth and the copies the operands allow;
 *   mma_deep(), mma_smem()           the K depth a device's shared memory allows, its bytes;
 *   prepare_whole<Products>()        per device, once: the opt-in above 48 KB for those kernels
 *                                    (an attribute of the kernel in that device's context, no
 *                                    stream work, so it may run while a stream captures);
 *   mma_start()                      the prologue, the device check, the rung's device facts,
 *                                    the copies and the tiles;
 *   launch_whole<Products>()         whole tiles on the stream;
 *   launch_whole_rung<Products>()    the launch of a rung of whole tiles alone (20, 21), its
 *                                    device facts kept per device, once (device_facts.h).
 * Include after mma_tile.cuh, mma_epilogue.cuh and the header of the Products.
 */
#ifndef SGEMM_LADDER_MMA_WHOLE_CUH
#define SGEMM_LADDER_MMA_WHOLE_CUH

#include "sgemm_common.h" /* sgemm_prologue, sgemm_current_cc, sgemm_aligned16 */
#include "device_facts.h" /* struct sgemm_device */

/* C tile `blockIdx.x` (row by row) := alpha A B + beta C, every K tile in order. */
template <class Products, int BK, int VA, int VB>
static __global__ void __launch_bounds__(THREADS, 1)
    sgemm_mma(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
              int ldb, float beta, float *C, int ldc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    extern __shared__ __align__(16) float smem[];
    const int tiles_n = (N - 1) / BN + 1;
    const int tile = (int)blockIdx.x;
    const int m0 = (tile / tiles_n) * BM, n0 = (tile % tiles_n) * BN;

    float acc[MI][NI][4];
    clear(acc);
    k_range<BK, VA, VB, Products>(smem, A, lda, B, ldb, M, N, K, m0, n0, 0, (K - 1) / BK + 1,
                                  acc);
    store_c(smem, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, m0, n0, acc);
#elif defined(__CUDA_ARCH__)
    __trap(); /* mma_start() refuses devices below sm_80 */
#endif
}

typedef void (*mma_kernel)(int, int, int, float, const float *, int, const float *, int, float,
                           float *, int);

/* deep: K tiles of BK_DEEP (else BK_LOW); va, vb: 16-byte copies of A, B. */
template <class Products>
static mma_kernel whole_kernel(int deep, int va, int vb)
{
    static const mma_kernel kernels[2][2][2] = {
        {{sgemm_mma<Products, BK_LOW, 0, 0>, sgemm_mma<Products, BK_LOW, 0, 1>},
         {sgemm_mma<Products, BK_LOW, 1, 0>, sgemm_mma<Products, BK_LOW, 1, 1>}},
        {{sgemm_mma<Products, BK_DEEP, 0, 0>, sgemm_mma<Products, BK_DEEP, 0, 1>},
         {sgemm_mma<Products, BK_DEEP, 1, 0>, sgemm_mma<Products, BK_DEEP, 1, 1>}},
    };
    return kernels[deep][va][vb];
}

/* 64-deep K tiles where the device holds their stages: 227 KB on sm_90, 163 on sm_80, 99 on
 * sm_86 and sm_89. */
static inline int mma_deep(const struct sgemm_device *d)
{
    return d->smem_optin >= SMEM_BYTES(BK_DEEP);
}
static inline int mma_smem(int deep) { return deep ? SMEM_BYTES(BK_DEEP) : SMEM_BYTES(BK_LOW); }

template <class Products>
static cudaError_t prepare_whole(int deep)
{
    cudaError_t err = cudaSuccess;
    for (int i = 0; i < 4 && err == cudaSuccess; ++i)
        err = cudaFuncSetAttribute((const void *)whole_kernel<Products>(deep, i / 2, i % 2),
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, mma_smem(deep));
    return err;
}

/* What a launch knows before it plans. */
struct mma_shape {
    int va, vb;      /* 16-byte copies of A, of B */
    long long tiles; /* 128x128 tiles of C: one 1-D grid (C spans <= INT_MAX floats) */
};

/* The prologue (common/sgemm_common.h: *done when nothing is left to launch), the device check,
 * the rung's facts for the device (common/device_facts.h: *d and *entry), then the shape. */
static inline cudaError_t mma_start(int M, int N, int K, float alpha, const float *A, int lda,
                                    const float *B, int ldb, float beta, float *C, int ldc,
                                    cudaStream_t stream, struct sgemm_rung_facts *table,
                                    struct sgemm_device *d, void *entry, int *done,
                                    struct mma_shape *s)
{
    cudaError_t err = sgemm_prologue(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, done);
    if (err != cudaSuccess || *done)
        return err;
    if (sgemm_current_cc() < 80)
        return cudaErrorInvalidDevice; /* mma.sync with TF32 and cp.async need sm_80 */
    if ((err = sgemm_rung_facts(table, d, entry)) != cudaSuccess)
        return err;
    /* 16-byte copies need 16-byte aligned rows and no 4-float segment across the edge. */
    s->va = (lda % 4 == 0) && (K % 4 == 0) && sgemm_aligned16(A);
    s->vb = (ldb % 4 == 0) && (N % 4 == 0) && sgemm_aligned16(B);
    s->tiles = (long long)((M - 1) / BM + 1) * ((N - 1) / BN + 1);
    return cudaSuccess;
}

template <class Products>
static cudaError_t launch_whole(int deep, const struct mma_shape *s, int M, int N, int K,
                                float alpha, const float *A, int lda, const float *B, int ldb,
                                float beta, float *C, int ldc, cudaStream_t stream)
{
    whole_kernel<Products>(deep, s->va, s->vb)<<<(unsigned)s->tiles, THREADS, mma_smem(deep),
                                                 stream>>>(M, N, K, alpha, A, lda, B, ldb, beta,
                                                           C, ldc);
    return cudaGetLastError();
}

/* Per device, once, for a rung of whole tiles alone: the K depth and the kernels' opt-in. */
struct whole_facts {
    int deep;
};
template <class Products>
static cudaError_t ask_whole(const struct sgemm_device *d, void *entry)
{
    struct whole_facts *f = (struct whole_facts *)entry;
    f->deep = mma_deep(d);
    return prepare_whole<Products>(f->deep);
}

template <class Products>
static cudaError_t launch_whole_rung(int M, int N, int K, float alpha, const float *A, int lda,
                                     const float *B, int ldb, float beta, float *C, int ldc,
                                     cudaStream_t stream)
{
    /* one table per Products in each rung (a static in a template of a static function) */
    static struct whole_facts facts_of[SGEMM_MAX_DEVICES];
    static struct sgemm_rung_facts facts_table = SGEMM_RUNG_FACTS(facts_of, ask_whole<Products>);
    int done = 0;
    struct mma_shape s;
    struct sgemm_device d;
    struct whole_facts f;
    const cudaError_t err = mma_start(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream,
                                      &facts_table, &d, &f, &done, &s);
    if (err != cudaSuccess || done)
        return err;
    return launch_whole<Products>(f.deep, &s, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                                  stream);
}

#endif /* SGEMM_LADDER_MMA_WHOLE_CUH */
