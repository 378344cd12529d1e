/* test_check_cases.c - the check matrix holds every case the contract promises. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../harness/check_cases.h"

static struct check_case cases[CHECK_MATRIX_MAX];
static int count;

static int setup(void **state)
{
    (void)state;
    count = check_matrix(cases, CHECK_MATRIX_MAX);
    return count > CHECK_MATRIX_MAX;
}

static int has_square(int s, int exact)
{
    for (int i = 0; i < count; i++)
        if (cases[i].kind == CASE_PRODUCT && cases[i].m == s && cases[i].n == s && cases[i].k == s &&
            cases[i].exact == exact)
            return 1;
    return 0;
}

static void every_listed_size_exact_and_random(void **state)
{
    (void)state;
    static const int sizes[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048,
                                7, 31, 33, 127, 129, 255, 257, 1000, 1023, 1025};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (!has_square(sizes[i], 1) || !has_square(sizes[i], 0))
            fail_msg("size %d missing", sizes[i]);
    }
}

static void non_square_and_unit_dimensions(void **state)
{
    (void)state;
    int m1 = 0, n1 = 0, k1 = 0, all_differ = 0;
    for (int i = 0; i < count; i++) {
        const struct check_case *c = &cases[i];
        if (c->kind != CASE_PRODUCT)
            continue;
        m1 |= c->m == 1 && c->n > 1 && c->k > 1;
        n1 |= c->n == 1 && c->m > 1 && c->k > 1;
        k1 |= c->k == 1 && c->m > 1 && c->n > 1;
        all_differ |= c->m != c->n && c->n != c->k && c->m != c->k;
    }
    assert_true(m1 && n1 && k1 && all_differ);
}

static void padded_leading_dimensions(void **state)
{
    (void)state;
    int pads[33] = {0};
    int mixed = 0;
    for (int i = 0; i < count; i++) {
        pads[cases[i].lda_pad] = pads[cases[i].ldb_pad] = pads[cases[i].ldc_pad] = 1;
        mixed |= cases[i].lda_pad != cases[i].ldb_pad;
    }
    assert_true(pads[1] && pads[3] && pads[32] && mixed);
}

static void offset_pointers_on_each_operand(void **state)
{
    (void)state;
    int a = 0, b = 0, c = 0;
    for (int i = 0; i < count; i++) {
        a |= cases[i].a_off == 1;
        b |= cases[i].b_off == 1;
        c |= cases[i].c_off == 1;
    }
    assert_true(a && b && c);
}

static void every_scalar_pair_exact_and_random(void **state)
{
    (void)state;
    static const float pairs[][2] = {{1.0f, 0.0f}, {0.5f, 2.0f}, {-1.25f, 0.0f}, {0.0f, 1.5f}};
    for (int p = 0; p < 4; p++) {
        int exact = 0, random = 0;
        for (int i = 0; i < count; i++) {
            if (cases[i].kind == CASE_PRODUCT && cases[i].alpha == pairs[p][0] &&
                cases[i].beta == pairs[p][1] && cases[i].m > 64) {
                exact |= cases[i].exact;
                random |= !cases[i].exact;
            }
        }
        if (!exact || !random)
            fail_msg("alpha=%g beta=%g missing", pairs[p][0], pairs[p][1]);
    }
}

static void extreme_shapes(void **state)
{
    (void)state;
    int tall = 0, long_k = 0;
    for (int i = 0; i < count; i++) {
        /* past 65535 row tiles of the tallest tile (128 rows): the slab path runs */
        tall |= cases[i].kind == CASE_PRODUCT && cases[i].m > 65535 * 128 && cases[i].exact;
        long_k |= cases[i].kind == CASE_PRODUCT && cases[i].k >= 1000000 && cases[i].exact;
    }
    assert_true(tall && long_k);
}

static void many_tiles(void **state)
{
    (void)state;
    /* more 128x256 tiles than a 132-SM GPU has SMs, not a whole number of rounds: stream-K */
    int sk_exact = 0, sk_random = 0, sk_padded = 0, sk_rounds = 0;
    for (int i = 0; i < count; i++) {
        const struct check_case *c = &cases[i];
        const long long tiles = ((c->m + 127) / 128) * (long long)((c->n + 255) / 256);
        if (!case_reaches_kernel(c) || tiles <= 132 || tiles % 132 == 0 || c->k < 64)
            continue;
        sk_exact |= c->exact && c->k % 8 != 0;
        sk_random |= !c->exact && c->k % 8 != 0;
        sk_padded |= c->lda_pad % 4 != 0 && c->ldb_pad % 4 != 0;
        sk_rounds |= tiles > 3 * 132;
    }
    assert_true(sk_exact && sk_random && sk_padded && sk_rounds);
}

static void few_tiles(void **state)
{
    (void)state;
    /* at most 132 tiles of 64x128 (so 2 blocks per SM of a 132-SM GPU need 2+ per tile) and
     * K of at least 8 K tiles of 8 (2 slices of 4): rungs 14-19 cut K over blocks (split-K) */
    int sp_exact = 0, sp_random = 0, sp_padded = 0, sp_beta = 0, sp_partial_k = 0;
    for (int i = 0; i < count; i++) {
        const struct check_case *c = &cases[i];
        const long long tiles = ((c->m + 63) / 64) * (long long)((c->n + 127) / 128);
        if (!case_reaches_kernel(c) || tiles > 132 || c->k < 64)
            continue;
        sp_exact |= c->exact;
        sp_random |= !c->exact;
        sp_padded |= c->lda_pad % 4 != 0 && c->ldb_pad % 4 != 0;
        sp_beta |= c->beta != 0.0f;
        sp_partial_k |= c->k % 8 != 0;
    }
    assert_true(sp_exact && sp_random && sp_padded && sp_beta && sp_partial_k);
}

/* Exact cases at K = 4096, 16384 and 65536 with beta != 0 on more than one 128x256 tile, and
 * none of the cases meant for a path (many tiles, few tiles, long K) settled by the prologue. */
static void long_k_exact_and_paths_reach_a_kernel(void **state)
{
    (void)state;
    int k4096 = 0, k16384 = 0, k65536 = 0;
    for (int i = 0; i < count; i++) {
        const struct check_case *c = &cases[i];
        const long long tiles = ((c->m + 127) / 128) * (long long)((c->n + 255) / 256);
        const int ok = case_reaches_kernel(c) && c->exact && c->beta != 0.0f && tiles > 1;
        k4096 |= ok && c->k == 4096;
        k16384 |= ok && c->k == 16384;
        k65536 |= ok && c->k == 65536;
        if (strncmp(c->group, "many tiles", 10) == 0 || strncmp(c->group, "few tiles", 9) == 0 ||
            strncmp(c->group, "long K", 6) == 0)
            assert_true(case_reaches_kernel(c));
    }
    assert_true(k4096 && k16384 && k65536);
    /* the prologue's cases are told apart */
    struct check_case c = cases[0];
    c.alpha = 0.0f;
    assert_false(case_reaches_kernel(&c));
    c.alpha = 1.0f;
    c.k = 0;
    assert_false(case_reaches_kernel(&c));
}

/* Inf and NaN in A and B: exact inputs (class for class with cuBLAS), alpha != 0 (a kernel
 * runs), on one tile and on shapes for stream-K, split-K and a long K. */
static void not_finite_inputs_reach_every_path(void **state)
{
    (void)state;
    int one_tile = 0, stream_k = 0, split_k = 0, long_k = 0, beta = 0, beta0 = 0;
    for (int i = 0; i < count; i++) {
        const struct check_case *c = &cases[i];
        if (!c->not_finite)
            continue;
        assert_true(c->exact && case_reaches_kernel(c));
        const long long large = ((c->m + 127) / 128) * (long long)((c->n + 255) / 256);
        const long long small = ((c->m + 63) / 64) * (long long)((c->n + 127) / 128);
        one_tile |= large == 1 && c->k < 64;
        stream_k |= large > 132 && large % 132 != 0;
        split_k |= small <= 132 && c->k >= 64 && c->k < 16384;
        long_k |= c->k >= 16384;
        beta |= c->beta != 0.0f;
        beta0 |= c->beta == 0.0f;
    }
    assert_true(one_tile && stream_k && split_k && long_k && beta && beta0);
}

/* Precision against FP64 at long K: random inputs with alpha 1 and beta 0 (what the gate's
 * sequential loop computes), K >= 2048, reaching a kernel; one on few tiles (split-K), one on
 * more 128x256 tiles than a round of 132 SMs (stream-K), one at K = 65536. */
static void precision_cases_at_long_k(void **state)
{
    (void)state;
    int few = 0, many = 0, longest = 0;
    for (int i = 0; i < count; i++) {
        const struct check_case *c = &cases[i];
        if (!c->precision)
            continue;
        assert_true(!c->exact && !c->not_finite && case_reaches_kernel(c));
        assert_true(c->alpha == 1.0f && c->beta == 0.0f && c->k >= 2048);
        assert_true(c->lda_pad == 0 && c->ldb_pad == 0 && c->ldc_pad == 0);
        const long long large = ((c->m + 127) / 128) * (long long)((c->n + 255) / 256);
        few |= large <= 4;
        many |= large > 132;
        longest |= c->k >= 65536;
    }
    assert_true(few && many && longest);
}

static void contract_special_cases(void **state)
{
    (void)state;
    int k0 = 0, noop_m = 0, noop_n = 0, bad_ld = 0, null_a = 0, neg = 0;
    for (int i = 0; i < count; i++) {
        const struct check_case *c = &cases[i];
        k0 |= c->kind == CASE_PRODUCT && c->k == 0;
        noop_m |= c->kind == CASE_NOOP && c->m == 0;
        noop_n |= c->kind == CASE_NOOP && c->n == 0;
        bad_ld |= c->kind == CASE_INVALID && c->bad_lda;
        null_a |= c->kind == CASE_INVALID && c->null_a;
        neg |= c->kind == CASE_INVALID && c->m < 0;
    }
    assert_true(k0 && noop_m && noop_n && bad_ld && null_a && neg);
}

/* README.md states the matrix's size ("**check matrix** (N cases)"): it must be this one. */
static void readme_states_the_case_count(void **state)
{
    (void)state;
    FILE *f = fopen(README_MD, "r");
    if (f == NULL)
        fail_msg("cannot open %s", README_MD);
    static const char mark[] = "**check matrix** (";
    char line[512];
    int stated = -1;
    while (stated < 0 && fgets(line, sizeof line, f) != NULL) {
        const char *at = strstr(line, mark);
        if (at != NULL && sscanf(at + sizeof mark - 1, "%d cases)", &stated) != 1)
            stated = -1;
    }
    fclose(f);
    if (stated < 0)
        fail_msg("%s does not say \"%sN cases)\"", README_MD, mark);
    if (stated != count)
        fail_msg("%s says %d cases, the matrix has %d", README_MD, stated, count);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_listed_size_exact_and_random),
        cmocka_unit_test(non_square_and_unit_dimensions),
        cmocka_unit_test(padded_leading_dimensions),
        cmocka_unit_test(offset_pointers_on_each_operand),
        cmocka_unit_test(every_scalar_pair_exact_and_random),
        cmocka_unit_test(extreme_shapes),
        cmocka_unit_test(many_tiles),
        cmocka_unit_test(few_tiles),
        cmocka_unit_test(long_k_exact_and_paths_reach_a_kernel),
        cmocka_unit_test(not_finite_inputs_reach_every_path),
        cmocka_unit_test(precision_cases_at_long_k),
        cmocka_unit_test(contract_special_cases),
        cmocka_unit_test(readme_states_the_case_count),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
