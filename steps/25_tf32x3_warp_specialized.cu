/*
 * Rung 25 - warp specialization: a producer warpgroup feeds the tiles through TMA and splits B,
 * two consumer warpgroups split A and issue wgmma, and they meet only at mbarriers.
 *
 * What changes from rung 24
 *   The roles. Rung 24's 256 threads each copy, split and issue, and meet at two barriers a
 *   tile. Here the block is three warpgroups (the kernel: common/wgmma_roles.cuh). Warpgroup
 *   0, the producer, brings raw tiles and splits B into B^T; warpgroups 1 and 2, the
 *   consumers, split A and issue rung 24's wgmma, 64 rows each. setmaxnreg gives the
 *   producer's registers to the consumers (56 and 224).
 *   The copies. TMA copies a whole 128 x 32 tile of A (in the 128-byte swizzle read_a() reads)
 *   and 32 x 128 of B from one instruction of one thread, zero-filled outside the matrix
 *   (tensor_map(), common/tma.cuh). Where TMA cannot describe an operand (a leading dimension
 *   not a multiple of 4 floats, a base not 16-byte aligned), the 128 producers copy raw tiles
 *   with rung 23's 4-byte cp.async instead.
 *   The meeting points, one mbarrier per stage and direction, no __syncthreads in the K loop:
 *     raw stages (4 x 32 KB): TMA -> raw_full -> consumers read A, producer reads B -> raw_empty
 *     B^T stages (3 x 32 KB): producer writes, fence.proxy.async -> split_full -> wgmma read ->
 *       wait_group -> split_empty.
 *   A third B^T stage gives the producer a tile of slack for whole tiles (+3% at 8192, H100;
 *   225 KB of shared memory in all); split-K keeps two (a third was 15-20% slower there).
 *
 * Why the hardware rewards it
 *   A consumer waits only for what it reads: while one sums its chunk or splits A, the other's
 *   wgmma keep the tensor core busy, and the producer splits B beside both. TMA takes the copy
 *   addresses out of 256 threads' instruction stream and the half-used 32-byte sectors out of
 *   L2. Alone, on rung 23's lockstep loop, TMA and the roles gained nothing (H100: 1.84 ->
 *   1.82x at 4096): the tensor core still drained each tile.
 *
 * Prediction: rung 24's two barriers a tile and the B split leave the consumers' path: from
 *   ~3000 clocks a K tile toward 2300 (rung 24's bound with B's split, half the split work,
 *   taken off): +20-30%.
 *
 * Measured (H200, make all-bench: results/nvidia-h200/bench.csv): 1.845 / 2.165 /
 *   2.299 / 2.194x at 1024 / 2048 / 4096 / 8192, against rung 24's 1.657 / 1.713 / 1.753 /
 *   1.774: +31% at 4096 (1.214 ms, ~2400 clocks a K tile), as predicted. 1.07-1.77 u against
 *   FP64 (cuBLAS 4.7-6.8 u). 168 registers a thread at launch, 0 spills.
 *
 * Build: wgmma and setmaxnreg exist only for sm_90a (`make` picks it on an sm_90 GPU). Elsewhere
 *   the kernel is __trap(), and launch() returns cudaErrorNoKernelImageForDevice instead.
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/sgemm_workspace.h"
#include "../common/wgmma.cuh"     /* the tile, split, wgmma, split_b_block, copies, finish_tile */
#include "../common/tma.cuh"       /* mbarriers, TMA loads, tensor_map */
#include "../common/wgmma_roles.cuh" /* the producer and consumer warpgroups: the kernel */
#include "../common/split_sum.cuh" /* sum_slices, split_slices (rung 22) */

static const tf32x3_kernel kernels[2][2] = {KERNEL_PAIR(FEED_COPY), KERNEL_PAIR(FEED_TMA)};

/* ---- Per device, once, no stream work (common/device_facts.h): whether the image has the
 * wgmma body, and the kernels' opt-in to SMEM bytes of shared memory. */
struct facts {
    int wgmma;
};
static struct facts facts_of[SGEMM_MAX_DEVICES];

static cudaError_t ask_device(const struct sgemm_device *d, void *entry)
{
    (void)d;
    return opt_in_kernels(kernels, 2, &((struct facts *)entry)->wgmma);
}
static struct sgemm_rung_facts facts_table = SGEMM_RUNG_FACTS(facts_of, ask_device);

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    struct sgemm_device d;
    struct facts f;
    struct wgmma_plan plan;
    cudaError_t err = wgmma_start(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream,
                                  &facts_table, &d, &f, &f.wgmma, &done, &plan);
    if (err != cudaSuccess || done)
        return err;
    CUtensorMap map_a = {}, map_b = {}; /* FEED_COPY passes them unused */
    const int tma_a = tensor_map(&map_a, A, M, K, lda, BM, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    const long long tiles = plan.tiles;
    const int slices = plan.slices;
    float *work = plan.work;
    const int whole = slices == 1;
    int feed = FEED_COPY;
    if (tma_a && tensor_map(&map_b, B, K, N, ldb, BK, BN, CU_TENSOR_MAP_SWIZZLE_NONE))
        feed = FEED_TMA;
    kernels[feed][whole]<<<(unsigned)(tiles * slices), THREADS, SMEM(whole), stream>>>(
        map_a, map_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slices, work);
    return wgmma_finish(25, "whole", cudaGetLastError(), &plan, M, N, K, alpha, A, lda, B,
                        ldb, beta, C, ldc, stream);
}

extern "C" const struct step step_25 = {
    25, "tf32x3_warp_specialized",
    "3xTF32 on wgmma fed by TMA, a producer warpgroup and two consumers (sm_90a)", 90, launch,
    "whole split-k",
};
