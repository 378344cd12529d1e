/* random_shapes.c - the shapes of --random N --seed S. */
#include "random_shapes.h"

#include <math.h>

#include "fill.h"

/* A draw in [0, 1). */
static double unit(struct rng *r) { return ((double)rng_uniform(r) + 1.0) / 2.0; }

/* log-uniform in [RANDOM_DIM_MIN, RANDOM_DIM_MAX] */
static int dimension(struct rng *r)
{
    const double octaves = log2((double)RANDOM_DIM_MAX / RANDOM_DIM_MIN);
    const long d = lround(RANDOM_DIM_MIN * exp2(octaves * unit(r)));
    return (int)(d < RANDOM_DIM_MIN ? RANDOM_DIM_MIN : d > RANDOM_DIM_MAX ? RANDOM_DIM_MAX : d);
}

/* uniform in 0..max */
static int upto(struct rng *r, int max) { return (int)(unit(r) * (max + 1)) % (max + 1); }

void random_shape(uint64_t seed, int i, struct shape *out)
{
    struct rng r;
    /* one stream per shape: shape i does not depend on how many are drawn */
    rng_seed(&r, seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(i + 1)));
    int d[3] = {dimension(&r), dimension(&r), dimension(&r)};
    while ((long long)d[0] * d[1] * d[2] > RANDOM_WORK_MAX) {
        int big = 0;
        for (int j = 1; j < 3; j++)
            if (d[j] > d[big])
                big = j;
        d[big] /= 2;
    }
    out->m = d[0];
    out->n = d[1];
    out->k = d[2];
    out->lda = out->k + upto(&r, RANDOM_PAD_MAX);
    out->ldb = out->n + upto(&r, RANDOM_PAD_MAX);
    out->ldc = out->n + upto(&r, RANDOM_PAD_MAX);
    out->a_off = upto(&r, RANDOM_OFFSET_MAX);
    out->b_off = upto(&r, RANDOM_OFFSET_MAX);
    out->c_off = upto(&r, RANDOM_OFFSET_MAX);
}
