/*
 * Rung 15 - stream-K: the last, partial round of tiles shared out evenly over the SMs.
 *
 * What changes from rung 14
 *   Whole 128x256 tiles fill whole rounds of the SMs only when the tile count is a multiple of
 *   the SM count: at 4096^2, 512 tiles on 132 SMs are 3.88 rounds, the last 12% idle; at 2560^2,
 *   200 tiles are 1.52 rounds. Stream-K (common/ffma_stream_k.cuh) runs the whole rounds but one
 *   as whole tiles and shares the K tiles of the rest out evenly over one block per SM: block w
 *   takes K tiles [w*S*kt/W, (w+1)*S*kt/W) of the S shared tiles, at most the end of one tile, one
 *   whole tile and the start of another. A tile shared by blocks w and w + 1 is still summed k in
 *   order: w computes the start first and leaves its raw sums in workspace slot w with a release
 *   flag; w + 1 computes the rest last, starting from those sums after an acquire of the flag
 *   (the floats of a whole tile). w + 1 waits on w, so both must be resident: the launch is
 *   cooperative, and where the blocks do not all fit the launcher runs whole tiles. A share is
 *   straight code, not a loop around the K loop (with a loop ptxas allocated registers
 *   differently and the kernel ran 2-5% slower).
 *   The plan (ffma_choose_plan() with FFMA_PLAN_STREAM_K) prices a round of shares at
 *   STREAM_K_COST (113) hundredths of a round of whole tiles: a second K-loop entry and a
 *   partial tile through L2 (common/plan_costs.h). How many blocks fit at once is asked of the
 *   device (cudaOccupancyMaxActiveBlocksPerMultiprocessor), once.
 *
 * Why the hardware rewards it
 *   The last round ends together instead of leaving SMs idle; the price is one 128 KB partial
 *   sum written and read per shared tile, and a second pipeline fill.
 *
 * Prediction: 4096^2 and 8192^2 +3% (a last round 12% and 3% idle), 2560 / 3328 / 5632 +5-10%;
 * 3072^2: level (stream-K by one hundredth: 233 against 234 for rung 13's small tiles).
 *
 * Measured (H200, beside rung 14 in one call, median ms, ratio to cuBLAS): 2560^2 0.751 -> 0.710
 * ms (0.956 -> 1.013x), 5120^2 5.25 -> 5.07 (1.088 -> 1.130x), 8192^2 20.63 -> 20.29 (1.043 ->
 * 1.062x), 2048x11008x4096 3.544 -> 3.490 (+1.5%); 4096^2 unchanged (its plan stays whole tiles:
 * 412 hundredths for stream-K against 400); 3072 1.151 -> 1.163 ms, 1% slower (stream-K by one
 * hundredth, where the small tiles ran faster: the model's resolution). Its kernels' SASS is that
 * of the measured build before the ladder was re-cut (rung 13 then, on an H100: 3072 1.107, 8192
 * 1.050). `make all-bench`: 1.147 / 1.036 / 1.036 / 1.061 at 1024 / 2048 / 4096 / 8192.
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/sgemm_workspace.h"
#include "../common/ffma_plan.h"
#include "../common/ffma_tile.cuh"    /* rungs 11-12: tile, copies, fragments, epilogue, order */
#include "../common/ffma_loop.cuh"    /* rung 13: rasterization, the K loop over a range */
#include "../common/ffma_split_k.cuh" /* rung 14: split-K, slices meeting in global memory */
#include "../common/ffma_slabs.cuh"   /* rung 14: the large tiles' split into slabs */
#include "../common/ffma_stream_k.cuh" /* NEW: stream-K's shares and their launch */
#include "../common/ffma_whole.cuh"  /* rung 13's whole tiles; rung 15's run of stream-K */

/* NEW: per device (common/device_facts.h), how many stream-K blocks fit at once (0: none). */
struct facts {
    long long resident;
};
static struct facts facts_of[SGEMM_MAX_DEVICES];
static cudaError_t ask_device(const struct sgemm_device *d, void *entry)
{
    struct facts *f = (struct facts *)entry;
    const cudaError_t err = stream_k_resident(d, &f->resident);
    return err;
}
static struct sgemm_rung_facts facts_table = SGEMM_RUNG_FACTS(facts_of, ask_device);

/* The workspace (common/sgemm_workspace.h: one per stream, never made while capturing): its
 * floats hold stream-K's slots (a 128x256 tile's floats per block), split-K's (a 64x128 tile's
 * per slice) or the slabs; then its flags (stream-K) or counts (split-K). A waiter clears its
 * flag, a tile's last slice resets its count: each launch leaves zeros. */
static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    struct sgemm_device d;
    struct facts f;
    cudaError_t err = sgemm_launch_start(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream,
                                         &facts_table, &d, &f, &done);
    if (err != cudaSuccess || done)
        return err;
    if (d.cc < 80)
        return cudaErrorInvalidDevice; /* cp.async needs sm_80 or newer */
    const int b16 = (ldb % 4 == 0) && (N % 4 == 0) && sgemm_aligned16(B); /* rung 11 */
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const long long large = ceil_div(M, L_BM) * ceil_div(N, L_BN);
    const long long small = ceil_div(M, S_BM) * ceil_div(N, S_BN);
    const struct ffma_problem pr = {M, N, K, d.sms, f.resident,
                                    (long long)SGEMM_WORKSPACE_FLOATS(d.sms)};
    int short_kt = 0;
    const enum ffma_plan plan = ffma_choose_plan(&pr, FFMA_PLAN_STREAM_K, &short_kt); /* NEW */
    float *work = NULL;
    /* NEW: stream-K, a slot and a flag a block (common/ffma_stream_k.cuh): where the shares do
     * not all fit at once, whole tiles below. */
    if (plan == FFMA_STREAM_K && stream_k_fits(&d, f.resident)) {
        int ran = 0;
        err = run_stream_k(15, b16, &g, &d, f.resident, large, stream, &ran);
        if (err != cudaSuccess || ran)
            return err;
    }
    if (plan == FFMA_WHOLE_SMALL) {
        const long long room = (long long)SGEMM_WORKSPACE_FLOATS(d.sms);
        long long cost = 0;
        int large_slices = 1;
        const int slices = ffma_split_slices(small, K, d.sms, room / (S_BM * S_BN), &cost);
        const long long large_cost = ffma_large_split(large, &pr, &large_slices);
        const int use_large = (large_cost >= 0 && large_cost < cost); /* a long K */
        if (use_large || slices > 1) {
            err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
            if (err != cudaSuccess)
                return err;
        }
        if (work != NULL && use_large)
            return sgemm_workspace_done(
                stream, work, launch_slices(15, b16, &g, large_slices, large, work, 0, stream));
        if (work != NULL && slices > 1)
            return sgemm_workspace_done(stream, work,
                                        launch_split_k(15, b16, &g, slices, small, work,
                                                       SGEMM_WORKSPACE_FLAGS(work, d.sms), stream));
        return launch_whole(15, b16, 1, &g, small, stream);
    }
    return launch_whole(15, b16, 0, &g, large, stream);
}

extern "C" const struct step step_15 = {
    15, "stream_k", "stream-K: the last partial round of tiles shared out evenly over the SMs", 80,
    launch, "whole-large whole-small stream-k split-k large-split",
};
