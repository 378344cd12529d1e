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
/* A random sign and significand in [1, 2) times 2^e, e uniform in [FILL_SPREAD_EXP_MIN,
 * FILL_SPREAD_EXP_MAX]: magnitudes spread over 2^-30..2^31, the products over 2^-60..2^62, so
 * a few terms dominate each sum and tiny ones sit far below them (what a split into a large
 * and a small part must survive). */
float rng_spread(struct rng *r);
#define FILL_SPREAD_EXP_MIN (-30)
#define FILL_SPREAD_EXP_MAX 30

/* What fill_matrix draws. */
enum fill_kind {
    FILL_UNIFORM = 0,    /* rng_uniform */
    FILL_SMALL_INTS = 1, /* rng_small_int (exact mode) */
    FILL_SPREAD = 2,     /* rng_spread */
};

/* Fills rows x cols of a matrix with leading dimension ld (other floats untouched); kind is
 * an enum fill_kind (0 and 1 also read as "small integers or not"). */
void fill_matrix(float *m, int rows, int cols, int ld, int kind, struct rng *r);

/* Plants values that are not finite into a filled rows x cols matrix, at fixed places that
 * depend on which operand it is (0: A, 1: B). A: +Inf at (0, 0), -Inf at the middle, NaN at
 * (rows/3, cols/3) (inside: a NaN row of C at the last row would hide that edge). B: a zero
 * at (0, 1) (so Inf x 0 = NaN with A's +Inf), -Inf at (0, cols/2), +Inf at (rows-1, 0), and a
 * NaN with every payload bit set (0x7fffffff) at (2 rows/3, cols/3). Every C element then
 * holds +Inf, -Inf, NaN or a finite value that does not depend on the order of the sum, so a
 * rung must match cuBLAS class for class. */
void plant_not_finite(float *m, int rows, int cols, int ld, int which);

#endif
