/* fill.c - pseudo-random matrices for checks and timing. */
#include "fill.h"

#include <math.h>

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

void fill_matrix(float *m, int rows, int cols, int ld, int small_ints, struct rng *r)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            m[(size_t)i * ld + j] = small_ints ? rng_small_int(r) : rng_uniform(r);
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
    }
}
