/*
 * tma.cuh - mbarriers and TMA, sm_90's asynchronous copies of whole tiles, as inline PTX
 * (PTX ISA: mbarrier, cp.async.bulk.tensor, fence.proxy.async).
 *
 * Rung 23 includes this inside its sm_90a device code. Every address is a shared-memory one
 * (32 bits, from __cvta_generic_to_shared) but the tensor map's, which is a __grid_constant__
 * kernel parameter. An mbarrier counts arrivals and, for TMA, bytes still to land; a phase
 * completes when both reach zero, and a waiter names the phase by its parity.
 */
#ifndef SGEMM_LADDER_TMA_CUH
#define SGEMM_LADDER_TMA_CUH

#include <cuda.h> /* CUtensorMap (a type only: no libcuda link) */

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

/* This thread's generic-proxy writes to shared memory, visible to the async proxy (wgmma). */
static __device__ __forceinline__ void fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

#endif /* __CUDA_ARCH__ >= 900 */

#endif /* SGEMM_LADDER_TMA_CUH */
