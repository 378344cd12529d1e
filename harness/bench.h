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

/* Times the rung and cuBLAS on random inputs (o->inputs: uniform in [-1, 1), or exponents
 * spread over 2^-30..2^30; alpha 1, beta 0), then checks
 * the rung's output against cuBLAS's and measures both against FP64; before the timing, exact
 * mode at the same shape (integer inputs, bit for bit).  Fills *res. */
void bench_point(const struct step *st, const struct shape *s, const struct options *o,
                 struct timer *t, cublasHandle_t h, struct telemetry *tel, struct rng *rng,
                 struct point_result *res);

#endif
