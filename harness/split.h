/* split.h - a float as the sum of a TF32 number and a remainder, on the host (the operands of
 * the composed 3xTF32 reference, harness/anchors.h). */
#ifndef HARNESS_SPLIT_H
#define HARNESS_SPLIT_H

#include <stddef.h>

/* x (count floats) as big + small: big is x rounded to nearest (ties away from zero) to
 * TF32's 10 fraction bits, small = x - big, exact. A finite x whose rounding would overflow
 * is truncated instead; Inf and NaN go to big whole, small 0. */
void tf32_split(const float *x, size_t count, float *big, float *small);

#endif
