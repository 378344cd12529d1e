/*
 * Rung 19 - C's unaligned rows written by rows of the lane grid.
 *
 * What changes from rung 18
 *   Rung 11's epilogue writes a float4 of C only where C's rows are 16-byte aligned (ldc a
 *   multiple of 4, C on a 16-byte boundary); elsewhere each thread writes its four floats one
 *   store at a time, 16 bytes apart. A caller's rows need not be aligned (an odd N, a padded ld,
 *   a pointer a float past an aligned one): on random shapes C's rows are unaligned in 15 shapes
 *   of 16. Here, where C's rows are unaligned and K <= C_ROWS_MAX_K (common/plan_costs.h), the
 *   whole-tile kernels of rung 18's plan are replaced by instances whose epilogue is
 *   store_c_rows() (common/ffma_tile.cuh, struct shape's c_rows): the warp writes the rows of
 *   its 4 x 8 lane grid one at a time, lane L on column L of a 32-column run, each lane's float
 *   brought by shuffles. The kernels that keep store_c4() are byte for byte rung 18's.
 *
 * Why the hardware rewards it
 *   Four floats a thread 16 bytes apart, one a store, fill a quarter of each 32-byte sector the
 *   warp's store touches: four times the L2 write requests for the same bytes, a large share of
 *   a tile's time where K is short (a 128x256 tile's 128 KB of C against 16 K tiles at K =
 *   128). Lanes on consecutive floats write whole sectors. Where K is long, C's writes are a
 *   small share of the tile and the rows kernels are not used.
 *
 * Prediction (H200; rung 18 with ldc + 1, one process, ratio to cuBLAS,
 *   results/notes/step_18.md): 4096x4096x128 ldc + 1 0.752 -> ~0.95 and 2124x15236x116 ldc + 1
 *   0.644 -> ~0.74 (the rows epilogue tried inside rung 18's own kernels gave 0.947 and 0.740
 *   there, but moved their registers and cost aligned shapes 4-7%: here it has kernels of its
 *   own); aligned shapes unchanged (the same kernels).
 *
 * Measured (H200, bin/ladder --steps 18,19, one process, two runs, on a build that also copied
 *   B's unaligned rows first, a trial no shape here takes: results/notes/step_19.md):
 *   4096x4096x128 ldc + 1 0.734/0.739 -> 0.973/0.978, 2124x15236x116 ldc + 1 0.631/0.638 ->
 *   0.772/0.775, above the prediction where K = 128; aligned shapes within the run-to-run
 *   spread (4096^3 1.055 -> 1.057; the same kernels). On random shapes (seeds 52 and 53) the 27
 *   that take the rows kernels gain 1.0% (geometric mean; +13-18% at N = 9,000-13,000 with K
 *   near 110). `make all-bench`: 1.144 / 1.035 / 1.058 / 1.064 at 1024 / 2048 / 4096 / 8192
 *   (rung 18: 1.146 / 1.036 / 1.058 / 1.064); its sweep's minimum 0.974 at 1088; the random
 *   set (seed 20261128) median 0.996, minimum 0.665 (159x5718x134: C's rows unaligned, K = 134,
 *   yet as rung 18's 0.665 in the run before; which kernels its plan runs is not yet traced).
 *
 * Build: as rung 18 (sm_90: clusters and dependent launches). The rows kernels: 207 and
 *   118-124 registers (sm_90a), 0 spills.
 */
#include "../common/step.h"
#include "../common/ffma_dependent.cuh" /* rung 18: the kernels, launches and plan */

/* Per device (common/device_facts.h): how many stream-K blocks fit at once, clusters of each
 * size (struct ffma_facts). */
static struct ffma_facts facts_of[SGEMM_MAX_DEVICES];
static struct sgemm_rung_facts facts_table = SGEMM_RUNG_FACTS(facts_of, ffma_ask_device);

/* NEW: C by rows of the lane grid where its rows are not 16-byte aligned and K is short
 * enough for C's writes to weigh (C_ROWS_MAX_K, common/plan_costs.h). */
static int c_rows_pay(int K, const float *C, int ldc)
{
    return !(ldc % 4 == 0 && sgemm_aligned16(C)) && K <= C_ROWS_MAX_K;
}

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    struct sgemm_device d;
    struct ffma_facts f;
    const cudaError_t err = sgemm_launch_start(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                                               stream, &facts_table, &d, &f, &done);
    if (err != cudaSuccess || done)
        return err;
    if (d.cc < 90 || f.cluster_cap[2] <= 0)
        return cudaErrorInvalidDevice; /* clusters and dependent launches need sm_90 */
    const int b16 = (ldb % 4 == 0) && (N % 4 == 0) && sgemm_aligned16(B); /* rung 11 */
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const int rows = c_rows_pay(K, C, ldc); /* NEW: the rows kernels, or rung 18's */
    const struct whole_kernels k = {rows ? LARGE_ROWS(b16) : LARGE_FROM(b16),
                                    rows ? SMALL_ROWS(b16) : SMALL_FROM(b16)};
    return launch_dependent(19, &d, &f, b16, &k, &g, stream);
}

extern "C" const struct step step_19 = {
    19, "unaligned_rows", "C's unaligned rows written by rows of the lane grid", 90, launch,
    "whole-large whole-small stream-k split-k split-k-64 large-split small-split uneven-tail",
};
