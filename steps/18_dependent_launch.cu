/*
 * Rung 18 - programmatic dependent launch (sm_90): pieces of one product side by side in rung
 * 12's kernel, each a launch of its own, started before the one ahead ends.
 *
 * What changes from rung 17
 *   A kernel launched with the programmatic-serialization attribute may start once every block
 *   of the kernel ahead on the stream has run griddepcontrol.launch_dependents (here at the top
 *   of the whole-tile kernel), not when it ends; griddepcontrol.wait holds it until the kernels
 *   ahead are done and their stores are seen. So the whole-tile kernel, rung 12's K loop (214
 *   registers, the fastest per K tile), can run pieces of a product side by side, each launched
 *   as a GEMM of its own on offset pointers (a first tile, a K range), where rungs 14-15 needed
 *   kernels of their own (227-241 registers, slower a K tile). Three plans use it:
 *   1. The uneven tail, where the 128x256 tiles fill whole rounds and more than half of one more
 *      (4096^2: 512 tiles, 3 rounds of 132 and 116): each last-round tile is cut once along K, a
 *      long piece (kt - js K tiles, into C with beta) holding an SM, a short one (js, into the
 *      workspace) running after the others on the SMs the round leaves free (4096: 8 waves of 16;
 *      ffma_choose_plan() balances js, SHORT_PIECE_KT). The short pieces start when every long
 *      one holds an SM; sgemm_add_pieces() starts then, waits, and adds the short sums to C (two
 *      slices, the same floats every run); the whole tiles fill in behind.
 *   2. The large tile's slabs (rung 14) as up to 8 launches of the whole-tile kernel, one a K
 *      slice, the sum started early.
 *   3. The 64x128 tile's split into slabs the same way (ffma_small_slabs()), where slices share
 *      SMs (4096x128x4096: 64 tiles, 4 slices, two blocks an SM): a lone block of 4 warps idles
 *      its SM between its own instructions, two keep it ~8% busier (SHARED_SM_SPEED).
 *   One stream, no host wait: a CUDA graph captures the programmatic edges. The kernels and
 *   launches are in common/ffma_dependent.cuh (written there once for rungs 18 and 19).
 *
 * Why the hardware rewards it
 *   At 4096^2 a round takes ~650 us and the last leaves 16 of 132 SMs idle; the cut ends it at
 *   460/512 of a round, in rung 12's kernel (stream-K's kernel is slower per K tile): 2.538 ms
 *   against 2.593 (H100). The launches that start early hide their launch and fill.
 *
 * Prediction: 4096^2 +2.5%; 1024x1024x16384 0.95 -> ~1.0 of cuBLAS (the early slices);
 * 4096x128x4096 0.92 -> ~1.0 (the small-tile slabs).
 *
 * Measured (H200, beside rung 17 in one call, median ms, ratio to cuBLAS): 4096^2 2.594 -> 2.533
 * ms (1.035 -> 1.058x, the uneven tail), 2816^2 0.903 -> 0.837 (1.036 -> 1.115x), 1024x1024x16384
 * 0.701 -> 0.659 (0.948 -> 1.004x, the early slices), 4096x128x4096 111.3 -> 99.7 us (0.907 ->
 * 1.011x, the small-tile slabs); 8192^2 +0.5%. Its kernels' SASS is that of the measured build
 * before the ladder was re-cut (rung 14 then; on an H100 the uneven tail took 4096 from 1.026 to
 * 1.048-1.051, beside the build without it). `make all-bench`: 1.146 / 1.036 / 1.058 / 1.064 at
 * 1024 / 2048 / 4096 / 8192; the shape set (shapes/default.txt, through rung 19, which runs
 * these kernels where rows are aligned) 0.971 (128x4096x4096) to 1.142.
 */
#include "../common/step.h"
#include "../common/ffma_dependent.cuh" /* NEW: the kernels, launches and plan of this rung */

/* Per device (common/device_facts.h): how many stream-K blocks fit at once, clusters of each
 * size (struct ffma_facts). */
static struct ffma_facts facts_of[SGEMM_MAX_DEVICES];
static struct sgemm_rung_facts facts_table = SGEMM_RUNG_FACTS(facts_of, ffma_ask_device);

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
    const struct whole_kernels k = {LARGE_FROM(b16), SMALL_FROM(b16)};
    return launch_dependent(18, &d, &f, b16, &k, &g, stream);
}

extern "C" const struct step step_18 = {
    18, "dependent_launch",
    "programmatic dependent launch: the uneven tail, early slices, small-tile slabs", 90, launch,
    "whole-large whole-small stream-k split-k split-k-64 large-split small-split uneven-tail",
};
