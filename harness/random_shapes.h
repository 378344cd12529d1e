/* random_shapes.h - seeded random shapes (--random N --seed S): the sizes a model might ask
 * for, not the ones a kernel was tuned on. */
#ifndef HARNESS_RANDOM_SHAPES_H
#define HARNESS_RANDOM_SHAPES_H

#include <stdint.h>

#include "args.h"

#define RANDOM_DIM_MIN    64
#define RANDOM_DIM_MAX    16384
#define RANDOM_WORK_MAX   (1LL << 35) /* M N K at most: 69 GFLOP a call, ~1.4 ms at 50 TFLOP/s */
#define RANDOM_PAD_MAX    7           /* floats added to each leading dimension, at most */
#define RANDOM_OFFSET_MAX 3           /* floats each operand starts past an aligned address */

/*
 * Shape i (0, 1, ...) of seed `seed`, the same whatever N: M, N and K log-uniform in
 * [RANDOM_DIM_MIN, RANDOM_DIM_MAX], then the largest halved until M N K <= RANDOM_WORK_MAX;
 * lda = K + a pad, ldb = N + a pad, ldc = N + a pad, each pad uniform in 0..RANDOM_PAD_MAX;
 * pointer offsets uniform in 0..RANDOM_OFFSET_MAX floats.
 */
void random_shape(uint64_t seed, int i, struct shape *out);

#endif
