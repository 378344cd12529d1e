/*
 * Rung 29 - each product to the path that wins it: the FFMA ladder's last rung (19) where the
 * work is too small to pay the tensor cores' fixed cost, the tensor cores (rung 28) elsewhere.
 *
 * What changes from rung 28
 *   Rungs 27 and 28 run every product on the tensor cores. At 256^3 it takes 16.7 us, where rung 18
 *   takes 9.2: B's split or split-K's sum is a launch of its own, the TMA pipeline fills four
 *   stages before the first wgmma, and the three products' epilogue is longer. On a small
 *   product that fixed cost is most of the run: rung 27 runs 0.75x cuBLAS SGEMM at 256^3 (0.33x
 *   on random shapes of ~1e7 flops) where rung 18 runs 1.57x. Here launch() prices the two at
 *   their large-product rates: the tensor cores save (1 - 1 / r) of the FFMA path's clocks, r
 *   the ratio of the rates (TC_OVER_FFMA_TENTHS, common/plan_costs.h), and cost TC_FIXED_CLOCKS
 *   more; so they run a product whose share of an SM, in FFMA clocks (256 flops a clock: 128
 *   FP32 lanes), exceeds TC_FIXED_CLOCKS x r / (r - 1). The device gives the SM count, the
 *   table the two costs. Both paths are rungs of their own, linked in (their step_NN): this
 *   rung is the dispatch, as a library's heuristic picks a kernel. Both give FP32 accuracy
 *   (rung 19 is an SGEMM; rung 28's 3xTF32 is below cuBLAS's error).
 *
 * Why the hardware rewards it
 *   The tensor cores' rate pays only once their pipeline is full and every SM has work: below
 *   ~5 MFLOP an SM (0.68 GFLOP on 132 SMs) the FFMA path, one launch with a 2-stage cp.async
 *   pipeline, finishes first.
 *
 * Prediction (H200): 256^3 0.75 -> ~1.5x cuBLAS, 512^3 0.86 -> ~1.1x (rung 18's figures in
 *   make all-bench); 768 and up unchanged (rung 27). On make all-bench's random set (seed
 *   20261128) the products below 0.2 GFLOP from 0.33-0.47 to 1.0-1.5x; the minimum then rung
 *   18's shallow-K shapes (~0.66).
 *
 * Measured (H200, make all-bench, one run, the tensor path then rung 27 itself: rung 28 runs
 *   its plan there but at 8192^3, level within the spread; rung 19, the FFMA path, runs rung
 *   18's kernels wherever C's rows are aligned): 256^3 1.438 (rung 27 0.749, rung 19 1.376),
 *   512^3 1.111 (0.853, 1.123): level with the FFMA path alone within the run-to-run spread (a
 *   run before put the route 2-5% behind rung 18, 0.43 us a product; not profiled: the route's
 *   host work is the suspect); 768^3 and up on rung 27's path (1.573 at 768, 2.729 at 4096).
 *   The random set (seed 20261128): median 1.272, minimum 0.663 (159x5718x134, on rung 19); its
 *   products below 0.2 GFLOP from 0.33-0.44 to 0.95-1.50 (235x87x259 1.299, 86x140x939 1.014).
 *   Through rung 28 (--budget 0.08, beside rungs 19, 27 and 28; seed 54 beside rung 19):
 *   seeds 52 / 53 / 54 median 1.098 / 1.059 / 1.004, minimum 0.526 / 0.713 / 0.555:
 *   83x71x8642 and 86x89x2930, where both paths lose, and 164x8842x351, sent to the tensor
 *   cores (rung 19 ran 0.917). The price misses where the tensor cores lose more than their
 *   rate: 142x13755x4481 ran 0.667 on them, 0.930 on rung 19 (two 128-row tiles for 142 rows,
 *   B's rows unaligned and M below the copy's threshold).
 *
 * Build: rung 27's wgmma needs sm_90a, rung 19's dependent launches sm_90; bin/step29 links
 *   rungs 19, 28 and the rung 28 calls, 27 (RUNG_USES_29 in the Makefile).
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/plan_costs.h"

extern "C" const struct step step_19; /* Part I's last rung: the FFMA path */
extern "C" const struct step step_28; /* the tensor cores (rung 27, the last rows of tiles cut) */

/* NEW: 1 where the tensor cores pay their fixed cost on this product: an SM's share of the
 * work, in FFMA clocks, above TC_FIXED_CLOCKS x r / (r - 1). */
static int tensor_cores_pay(int M, int N, int K, int sms)
{
    const double ffma_clocks = 2.0 * M * N * K / sms / FFMA_FLOPS_PER_CLOCK;
    return ffma_clocks * (TC_OVER_FFMA_TENTHS - 10) >=
           (double)TC_FIXED_CLOCKS * TC_OVER_FFMA_TENTHS;
}

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    struct sgemm_device d;
    const cudaError_t err = sgemm_launch_start(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                                               stream, NULL, &d, NULL, &done);
    if (err != cudaSuccess || done)
        return err;
    if (d.cc != 90)
        return cudaErrorInvalidDevice; /* rung 27's wgmma: Hopper only */
    const int tensor = tensor_cores_pay(M, N, K, d.sms);
    sgemm_trace(29, tensor ? "tensor" : "ffma", M, N, K, 1, 1); /* then the rung's own line */
    return (tensor ? &step_28 : &step_19)->launch(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                                                  stream);
}

extern "C" const struct step step_29 = {
    29, "route_by_work",
    "each product to the path that wins it: FFMA (rung 19) when small, tensor cores (rung 28)",
    90, launch, "ffma tensor",
};
