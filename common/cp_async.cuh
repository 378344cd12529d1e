/*
 * cp_async.cuh - cp.async, the sm_80+ copy from global to shared memory, as inline PTX.
 *
 * The rungs from 11 on include this inside their sm_80+ device code. dst is a shared-memory
 * address (32 bits, from __cvta_generic_to_shared), src a global one. A copy of src_bytes <
 * its size copies src_bytes and zero-fills the rest; src_bytes == 0 reads nothing at all, so a
 * tile edge becomes zeros in shared memory without a branch and without reading outside A or B.
 */
#ifndef SGEMM_LADDER_CP_ASYNC_CUH
#define SGEMM_LADDER_CP_ASYNC_CUH

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800

/* 4 bytes; .ca: 4-byte copies go through L1 (.cg only exists for 16 bytes). */
static __device__ __forceinline__ void cp_async_4(unsigned dst, const float *src, int src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}

/* 16 bytes of a segment wholly inside the operand (copy != 0) or wholly outside (copy == 0:
 * the ignore-src predicate writes 16 zeros and reads nothing). The predicate form needs no
 * zero-fill byte count, which ptxas would fold into the address with 4 extra integer
 * instructions per copy. .cg: L2 only; each 16 bytes lands in shared memory once per block. */
static __device__ __forceinline__ void cp_async_16(unsigned dst, const float *src, int copy)
{
    asm volatile("{\n"
                 " .reg .pred skip;\n"
                 " setp.eq.s32 skip, %2, 0;\n"
                 " cp.async.cg.shared.global [%0], [%1], 16, skip;\n"
                 "}\n" ::"r"(dst),
                 "l"(src), "r"(copy)
                 : "memory");
}

/* Closes the group of copies this thread issued since the last commit. */
static __device__ __forceinline__ void cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most `pending` (a constant 0..3) of this thread's groups are in flight.
 * wait_group takes an immediate: one asm per value. The "memory" clobber keeps the compiler
 * from hoisting shared-memory reads above the wait. */
static __device__ __forceinline__ void cp_async_wait(const int pending)
{
    if (pending <= 0)
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    else if (pending == 1)
        asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    else if (pending == 2)
        asm volatile("cp.async.wait_group 2;\n" ::: "memory");
    else
        asm volatile("cp.async.wait_group 3;\n" ::: "memory");
}

static __device__ __forceinline__ void cp_async_wait_all(void)
{
    asm volatile("cp.async.wait_all;\n" ::: "memory");
}

#endif /* sm_80+ */
#endif /* SGEMM_LADDER_CP_ASYNC_CUH */
