/* fill.c - pseudo-random matrices for checks and timing. */
#include "fill.h"

#include <math.h>
#include <string.h>

void rng_seed(struct rng *r, uint64_t seed) { r->s = seed ? seed : 0x9e3779b97f4a7c15ull; }

static uint64_t next(struct rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545f4914f6cdd1dull;
}

float rng_uniform(struct rng *r) { return (float)((double)(next(r) >> 40) / (1 << 23) - 1.0); }

float rng_small_int(struct rng *r) { return (float)((int)(next(r) % 5) - 2); }

float rng_spread(struct rng *r)
{
    const uint64_t bits = next(r);
    const int span = FILL_SPREAD_EXP_MAX - FILL_SPREAD_EXP_MIN + 1;
    const int e = FILL_SPREAD_EXP_MIN + (int)((bits >> 8) % (uint64_t)span);
    const float significand = 1.0f + (float)((bits >> 40) & 0x7fffff) / 8388608.0f; /* [1, 2) */
    return ldexpf((bits & 1) ? -significand : significand, e);
}

void fill_matrix(float *m, int rows, int cols, int ld, int kind, struct rng *r)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            float v;
            if (kind == FILL_SMALL_INTS)
                v = rng_small_int(r);
            else if (kind == FILL_SPREAD)
                v = rng_spread(r);
            else
                v = rng_uniform(r);
            m[(size_t)i * ld + j] = v;
        }
}

void plant_not_finite(float *m, int rows, int cols, int ld, int which)
{
    if (rows < 1 || cols < 1)
        return;
    if (which == 0) {
        m[0] = INFINITY;
        m[(size_t)(rows / 2) * ld + cols / 2] = -INFINITY;
        m[(size_t)(rows / 3) * ld + cols / 3] = NAN;
    } else {
        m[cols > 1 ? 1 : 0] = 0.0f;
        m[cols / 2] = -INFINITY;
        m[(size_t)(rows - 1) * ld] = INFINITY;
        /* a NaN with every payload bit set: adding half a TF32 place to its bits (a way to
         * round to TF32) carries into the sign bit and leaves -0 */
        const uint32_t all_ones = 0x7fffffffu;
        memcpy(&m[(size_t)(2 * rows / 3) * ld + cols / 3], &all_ones, sizeof all_ones);
    }
}
