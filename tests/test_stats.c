/* test_stats.c - the replay rule, the time budget, and the reported statistics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../harness/stats.h"

static void replay_rule_follows_seed_000(void **state)
{
    (void)state;
    assert_int_equal(replay_rule(1024, 1024, 1024), 781); /* 800000 / 1024 */
    assert_int_equal(replay_rule(4096, 4096, 4096), 195);
    assert_int_equal(replay_rule(8192, 8192, 8192), 97);
    assert_int_equal(replay_rule(100000, 100000, 100000), 10); /* never below 10 */
    assert_int_equal(replay_rule(1, 1, 1), 800000);
    assert_int_equal(replay_rule(1000, 2000, 3000), 400); /* size = mean of M, N, K */
}

static void budget_cuts_slow_points(void **state)
{
    (void)state;
    int cut = -1;
    assert_int_equal(replays_within_budget(195, 1.0, 2.0, &cut), 195); /* 195 ms fits in 2 s */
    assert_int_equal(cut, 0);
    assert_int_equal(replays_within_budget(195, 100.0, 2.0, &cut), 20);
    assert_int_equal(cut, 1);
    assert_int_equal(replays_within_budget(10, 5000.0, 2.0, &cut), 2); /* never below 2 */
    assert_int_equal(cut, 1);
    assert_int_equal(replays_within_budget(10, 0.0, 2.0, &cut), 10); /* no estimate: the rule */
    assert_int_equal(cut, 0);
}

static void statistics_use_the_second_half(void **state)
{
    (void)state;
    /* The first half (a slow warm-up) must not count. */
    const float ms[] = {100, 90, 80, 70, 4, 2, 3, 1};
    struct stats s;
    stats_second_half(ms, 8, &s);
    assert_int_equal(s.used, 4);
    assert_true(s.mean == 2.5);
    assert_true(s.median == 2.5);
    assert_true(s.min == 1.0);
    assert_true(s.max == 4.0);
}

static void odd_counts_and_single_replays(void **state)
{
    (void)state;
    const float ms[] = {9, 1, 5, 3, 4};
    struct stats s;
    stats_second_half(ms, 5, &s); /* second half: 5, 3, 4 */
    assert_int_equal(s.used, 3);
    assert_true(s.median == 4.0);
    assert_true(s.mean == 4.0);
    stats_second_half(ms, 1, &s);
    assert_int_equal(s.used, 1);
    assert_true(s.mean == 9.0 && s.median == 9.0);
}

static void gflops_counts_two_flops_per_fma(void **state)
{
    (void)state;
    assert_true(gflops(1000, 1000, 1000, 1.0) == 2000.0); /* 2e9 flop in 1 ms = 2000 GFLOP/s */
    assert_true(gflops(4096, 4096, 4096, 0.0) == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(replay_rule_follows_seed_000),
        cmocka_unit_test(budget_cuts_slow_points),
        cmocka_unit_test(statistics_use_the_second_half),
        cmocka_unit_test(odd_counts_and_single_replays),
        cmocka_unit_test(gflops_counts_two_flops_per_fma),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
