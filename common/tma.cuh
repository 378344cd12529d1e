/*
 * tma.cuh - mbarriers and TMA, sm_90's asynchronous copies of whole tiles, as inline PTX
 * (PTX ISA: mbarrier, cp.async.bulk.tensor), and on the host the tensor maps TMA reads
 * (tensor_map(): cuTensorMapEncodeTiled, found in the driver at run time).
 *
 * Rungs 25-27 include this. Every device address is a shared-memory one
 * (32 bits, from __cvta_generic_to_shared) but the tensor map's, which is a __grid_constant__
 * kernel parameter. An mbarrier counts arrivals and, for TMA, bytes still to land; a phase
 * completes when both reach zero, and a waiter names the phase by its parity.
 */
#ifndef SGEMM_LADDER_TMA_CUH
#define SGEMM_LADDER_TMA_CUH

#include <pthread.h>

#include <cuda.h>         /* CUtensorMap and its enums (types only: no libcuda link) */
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeTiled */

#include "sgemm_common.h" /* sgemm_aligned16 */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

static __device__ __forceinline__ void bar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

static __device__ __forceinline__ void bar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* Arrives and tells the barrier that `bytes` more will land through TMA in this phase. */
static __device__ __forceinline__ void bar_arrive_expect(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}

/* Waits until the phase of parity `parity` has completed. On a fresh barrier the phase before
 * the first (parity 1) counts as completed: a producer's first wait for an empty buffer passes. */
static __device__ __forceinline__ void bar_wait(unsigned bar, unsigned parity)
{
    unsigned done;
    do {
        asm volatile("{\n.reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}

/* A box of a 2-D tensor (tmap) at coordinates (c0 inner, c1) into shared memory at dst; the
 * bytes count on `bar`'s transaction count. Outside the tensor TMA writes zeros. */
static __device__ __forceinline__ void tma_load_2d(unsigned dst, const CUtensorMap *tmap, int c0,
                                                   int c1, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
                 "l"((unsigned long long)tmap), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

#endif /* __CUDA_ARCH__ >= 900 */

/* ---- Host: the tensor maps ---- */

/* cuTensorMapEncodeTiled, from the driver, once per process (no libcuda link). */
static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled;
static pthread_once_t encode_once = PTHREAD_ONCE_INIT;
static void find_encode_tiled(void)
{
    void *fn = NULL;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) == cudaSuccess &&
        found == cudaDriverEntryPointSuccess)
        encode_tiled = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    (void)cudaGetLastError(); /* a failed lookup is not this call's error */
}

/* A row-major matrix (rows x cols, leading dimension ld) as a TMA tensor: boxes of box_rows x
 * box_cols, zeros outside. 0 when TMA cannot describe it: ld not a multiple of 16 bytes, a base
 * not 16-byte aligned, or no cuTensorMapEncodeTiled. A plain host-side encode: no stream work. */
static int tensor_map(CUtensorMap *map, const float *base, int rows, int cols, int ld,
                      int box_rows, int box_cols, CUtensorMapSwizzle swizzle)
{
    pthread_once(&encode_once, find_encode_tiled);
    if (!encode_tiled || ld % 4 != 0 || !sgemm_aligned16(base))
        return 0;
    const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)ld * sizeof(float)};
    const cuuint32_t box[2] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows};
    const cuuint32_t steps[2] = {1, 1};
    return encode_tiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)base, dims, strides, box,
                        steps, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

#endif /* SGEMM_LADDER_TMA_CUH */
