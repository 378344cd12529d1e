/* bench.h - timing one shape: the rung and cuBLAS, interleaved, in one process. */
#ifndef HARNESS_BENCH_H
#define HARNESS_BENCH_H

#include <cublas_v2.h>

#include "../common/step.h"
#include "anchors.h"
#include "args.h"
#include "fill.h"
#include "report.h"
#include "telemetry.h"
#include "timing.h"

/* Device bytes one timed point of this shape needs (operands, references, bound; with
 * `anchors`, the buffers of harness/anchors.h when they need more). */
size_t bench_bytes_needed(const struct shape *s, int anchors);

/*
 * Times `count` rungs at one shape, each beside cuBLAS, on the same inputs:
 *   1. exact mode for each rung (integer inputs, alpha 0.5, beta 2: bit for bit against
 *      cuBLAS);
 *   2. the timed inputs (o->inputs: uniform in [-1, 1), or exponents spread over
 *      2^-30..2^30; alpha 1, beta 0), cuBLAS's output on them and the FP64 reference, once;
 *   3. each rung in turn: its C poisoned, a warm-up, batches of the rung and of cuBLAS
 *      alternating, then its output checked against cuBLAS's and measured against FP64.
 * With o->anchors_csv, cuBLAS TF32 and 3xTF32 from cuBLAS are timed once, after the rungs,
 * into res[count - 1].  Fills res[0..count).
 */
void bench_point(const struct step *const *rungs, int count, const struct shape *s,
                 const struct options *o, struct timer *t, cublasHandle_t h,
                 struct telemetry *tel, struct rng *rng, struct point_result *res);

#endif
