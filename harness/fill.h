/* fill.h - reproducible pseudo-random inputs. */
#ifndef HARNESS_FILL_H
#define HARNESS_FILL_H

#include <stddef.h>
#include <stdint.h>

/* xorshift64*: small, fast, and the same on every machine. */
struct rng {
    uint64_t s;
};

void rng_seed(struct rng *r, uint64_t seed);
/* Uniform in [-1, 1). */
float rng_uniform(struct rng *r);
/* An integer in [-2, 2]: products and sums of these stay exact in float. */
float rng_small_int(struct rng *r);

/* Fills rows x cols of a matrix with leading dimension ld (other floats untouched). */
void fill_matrix(float *m, int rows, int cols, int ld, int small_ints, struct rng *r);

#endif
