/*
 * Rung 28 - the uneven tail on the tensor cores: the last rows of tiles in a launch of their
 * own, split along K, so that the last round of whole tiles does not leave most SMs idle.
 *
 * What changes from rung 27
 *   Rung 27 runs C in 128x128 tiles, one block each, a round of blocks per 132 SMs. Where the
 *   tiles come to just over a whole number of rounds the last round is nearly empty and takes
 *   as long as a full one: 1092x3792x5256 is 9 x 30 = 270 tiles, 3 rounds of which the third
 *   holds 6 (68% of the SMs' time busy); 2560^3 is 400 tiles, 4 rounds at 76%. Split-K (rung
 *   22, split_slices()) only looks at fewer than two rounds of tiles. Here launch() weighs, for
 *   each count t of tile rows taken from the bottom of C, rung 27's plan for the rows above
 *   and for the t rows below (few tiles: split-K, every SM busy), priced by split_slices() in
 *   K tiles (common/split_plan.h) plus TAIL_LAUNCH_COST for the second launch
 *   (common/plan_costs.h); where a cut beats rung 27's plan for all of C it calls rung 27 twice
 *   on the stream, C's upper rows first, A and C offset for the rest. As rung 18's uneven tail
 *   on the FFMA path, but by rows of tiles: rung 27 is called as it is (its step_27, linked
 *   in), with its copies, B's split and split-K's workspace.
 *   The price holds where the measurement bore it out, and a cut is weighed only there: the
 *   rows above in whole tiles, the tail's slices in one round of blocks, and B's rows 16-byte
 *   aligned (else each call copies or splits B again). Cuts outside it ran 1-48% slower than
 *   rung 27 where the price said faster (results/notes/step_28.md). A stream with no memory
 *   for a workspace runs the tail in whole tiles; an error in the second call leaves the rows
 *   above written.
 *
 * Why the hardware rewards it
 *   A round of blocks costs the time of its longest block: 6 tiles of 165 K tiles hold 132 SMs
 *   for 165 K tiles. Cut into 4 slices each, the same 30 tiles of the last row fill 120 SMs for
 *   42 K tiles (plus the partial tiles written and summed).
 *
 * Prediction (the cost model, K tiles of 32 on 132 SMs), each a cut of the last row of tiles:
 *   1092x3792x5256 from 495 to ~378 K tiles (the rows above in 2 rounds, the last row split 4
 *   ways): -24% time; 2560^3 320 -> ~260 (-19%); 2880^3 -15%, 3328^3 -12%, 1536^3 -19%,
 *   8192^3 -1.5%; no cut at 1024^3, 2048^3, 2304^3, 4095^3, 4096^3 or B's rows unaligned.
 *
 * Measured (H200, rungs 27 and 28 in one process, ratio to cuBLAS SGEMM, time):
 *   1092x3792x5256  1.826 -> 2.336 (-22%)    2560^3  2.180 -> 2.514 (-13%)
 *   1536^3          1.680 -> 2.252 (-25%)    2880^3  2.223 -> 2.473 (-10%)
 *   3328^3          2.570 -> 2.787 (-8%)     8192^3  +0.5%, within the spread
 *   Where the plan takes no cut (2304^3, 4097^3, 14848x512x4096, B's rows unaligned, 1024^3 to
 *   4096^3) within 0.5% of rung 27. The model overstates a cut's gain up to 1.5 times (2880^3
 *   -15% against -10%): the split tail costs more than its price; it understates 1536^3's.
 *
 * Build: rung 27's wgmma needs sm_90a; bin/step28 links rung 27 (RUNG_USES_28 in the Makefile).
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/plan_costs.h" /* TAIL_LAUNCH_COST */
#include "../common/split_plan.h" /* split_slices: rung 27's plan and its cost */

extern "C" const struct step step_27; /* the tensor cores, operands copied where TMA needs it */

/* Rung 27's plan for M x N x K: the K slices of each tile (1: whole tiles) and, in *cost, its
 * cost in K tiles (split_slices()). */
static int plan_slices(int M, int N, int K, int sms, double *cost)
{
    const long long tiles = (long long)((M - 1) / SPLIT_TILE + 1) * ((N - 1) / SPLIT_TILE + 1);
    return split_slices(tiles, K, WGMMA_K_TILE, sms, cost);
}

/* NEW: the rows of tiles that go to a launch of their own at the bottom of C (0: none), the
 * cut that costs least against rung 27's plan for all of C. Weighed only where the price holds
 * (measured, results/notes/step_28.md): B's rows aligned (else both calls copy or split B),
 * the rows above in whole tiles, and the tail's slices in one round of blocks. */
static int tail_rows(int M, int N, int K, int b_aligned, int sms)
{
    const int tiles_m = (M - 1) / SPLIT_TILE + 1, tiles_n = (N - 1) / SPLIT_TILE + 1;
    double best = 0.0, above_cost = 0.0, tail_cost = 0.0;
    int rows = 0;
    if (!b_aligned)
        return 0;
    (void)plan_slices(M, N, K, sms, &best);
    for (int t = 1; t < tiles_m && (long long)t * tiles_n <= sms; ++t) {
        const int above = (tiles_m - t) * SPLIT_TILE;
        const int tail_slices = plan_slices(M - above, N, K, sms, &tail_cost);
        if (plan_slices(above, N, K, sms, &above_cost) != 1 ||
            (long long)t * tiles_n * tail_slices > sms)
            continue;
        if (above_cost + tail_cost + TAIL_LAUNCH_COST < best) {
            best = above_cost + tail_cost + TAIL_LAUNCH_COST;
            rows = t;
        }
    }
    return rows;
}

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    struct sgemm_device d;
    cudaError_t err = sgemm_launch_start(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream,
                                         NULL, &d, NULL, &done);
    if (err != cudaSuccess || done)
        return err;
    if (d.cc != 90)
        return cudaErrorInvalidDevice; /* rung 27's wgmma: Hopper only */
    const int b_aligned = ldb % 4 == 0 && sgemm_aligned16(B); /* rung 27 reads B by TMA */
    const int rows = tail_rows(M, N, K, b_aligned, d.sms);   /* NEW */
    sgemm_trace(28, rows ? "tail" : "one", M, N, K, 1, 1); /* then rung 27's own lines */
    if (rows == 0)
        return step_27.launch(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    const int above = ((M - 1) / SPLIT_TILE + 1 - rows) * SPLIT_TILE;
    if ((err = step_27.launch(above, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream)) !=
        cudaSuccess)
        return err;
    return step_27.launch(M - above, N, K, alpha, A + (size_t)above * lda, lda, B, ldb, beta,
                          C + (size_t)above * ldc, ldc, stream);
}

extern "C" const struct step step_28 = {
    28, "tf32x3_uneven_tail",
    "3xTF32 on wgmma, the last rows of tiles split along K in a launch of their own (sm_90a)", 90,
    launch, "one tail",
};
