/* test_split.c - the host split of a float into a TF32 number and a remainder. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../harness/fill.h"
#include "../harness/split.h"

static uint32_t bits_of(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static void split_one(float x, float *big, float *small) { tf32_split(&x, 1, big, small); }

/* Round to nearest, ties away from zero, on both signs. */
static void rounds_to_nearest_ties_away(void **state)
{
    (void)state;
    float big, small;
    split_one(1.0f + ldexpf(1.0f, -11), &big, &small); /* the tie */
    assert_true(big == 1.0f + ldexpf(1.0f, -10));
    assert_true(small == -ldexpf(1.0f, -11));
    split_one(-(1.0f + ldexpf(1.0f, -11)), &big, &small);
    assert_true(big == -(1.0f + ldexpf(1.0f, -10)));
    split_one(1.0f + ldexpf(1.0f, -12), &big, &small); /* below the tie: down */
    assert_true(big == 1.0f);
    assert_true(small == ldexpf(1.0f, -12));
    split_one(2.0f - ldexpf(1.0f, -23), &big, &small); /* the carry into the exponent */
    assert_true(big == 2.0f);
    split_one(0.0f, &big, &small);
    assert_true(big == 0.0f && small == 0.0f);
}

/* On random inputs over a wide range: big has no bits below TF32's, big + small is x
 * exactly, and small is at most half of TF32's last place. */
static void big_plus_small_is_exact(void **state)
{
    (void)state;
    enum { COUNT = 20000 };
    static float x[2 * COUNT], big[2 * COUNT], small[2 * COUNT];
    struct rng r;
    rng_seed(&r, 11);
    fill_matrix(x, 1, COUNT, COUNT, FILL_SPREAD, &r);
    fill_matrix(x + COUNT, 1, COUNT, COUNT, FILL_UNIFORM, &r);
    tf32_split(x, 2 * COUNT, big, small);
    for (int i = 0; i < 2 * COUNT; i++) {
        assert_int_equal(bits_of(big[i]) & 0x1fffu, 0);
        assert_true((double)big[i] + (double)small[i] == (double)x[i]);
        int e;
        frexp(x[i], &e); /* |x| in [2^(e-1), 2^e): TF32's last place is 2^(e-11) */
        assert_true(fabs((double)small[i]) <= ldexp(1.0, e - 12));
    }
}

/* Inf and NaN go whole to big; a finite x that would round up to Inf is truncated. */
static void the_ends_of_the_range(void **state)
{
    (void)state;
    float big, small;
    split_one(INFINITY, &big, &small);
    assert_true(isinf(big) && big > 0 && small == 0.0f);
    split_one(-INFINITY, &big, &small);
    assert_true(isinf(big) && big < 0 && small == 0.0f);
    split_one(NAN, &big, &small);
    assert_true(isnan(big) && small == 0.0f);
    split_one(FLT_MAX, &big, &small);
    assert_true(isfinite(big) && big <= FLT_MAX);
    assert_true((double)big + (double)small == (double)FLT_MAX);
    split_one(-FLT_MAX, &big, &small);
    assert_true(isfinite(big) && (double)big + (double)small == -(double)FLT_MAX);
    split_one(FLT_TRUE_MIN, &big, &small); /* a subnormal: exact as well */
    assert_true((double)big + (double)small == (double)FLT_TRUE_MIN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rounds_to_nearest_ties_away),
        cmocka_unit_test(big_plus_small_is_exact),
        cmocka_unit_test(the_ends_of_the_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
