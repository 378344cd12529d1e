/*
 * flags.cuh - one block hands a partial tile to another through a flag in global memory
 * (stream-K: rungs 15-18, through ffma_stream_k.cuh).
 *
 * raise_flag(): every thread's earlier stores (the partial sums) are made visible GPU-wide
 * (fence, barrier), then one thread stores 1 with release semantics. wait_flag(): one thread
 * spins on an acquire load until the flag is up, clears it (so the next launch finds the
 * workspace clean), and a barrier lets the block read the sums (with .cg loads: L2, not a
 * stale L1). The waiter must be co-resident with the raiser (a cooperative launch).
 */
#ifndef SGEMM_LADDER_FLAGS_CUH
#define SGEMM_LADDER_FLAGS_CUH

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 /* sm_80+ device code */
static __device__ __forceinline__ void raise_flag(unsigned *flag)
{
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(1u) : "memory");
}
static __device__ __forceinline__ void wait_flag(unsigned *flag)
{
    if (threadIdx.x == 0) {
        unsigned up = 0;
        for (;;) {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(up) : "l"(flag) : "memory");
            if (up)
                break;
            __nanosleep(256);
        }
        *(volatile unsigned *)flag = 0u;
    }
    __syncthreads();
}
#endif /* sm_80+ device code */

#endif /* SGEMM_LADDER_FLAGS_CUH */
