/* test_plan.c - the FFMA rungs' plans (common/ffma_plan.cu) on a made-up GPU of 132 SMs (an H100
 * SXM or H200), against the costs their comments and tests/gpu_contract.c's table derive by
 * hand: which tile, stream-K, the uneven tail, and how many slices each split takes. A change
 * of a cost in common/plan_costs.h that moves one of these shapes to another plan fails here,
 * before any GPU sees it. Host code only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../common/ffma_plan.h"

#define SMS 132
/* The workspace's floats on 132 SMs (common/sgemm_workspace.h: two 128x256 tiles an SM). */
#define WS ((long long)2 * 128 * 256 * SMS)

static enum ffma_plan plan(int M, int N, int K, int options, int *short_kt)
{
    const struct ffma_problem p = {M, N, K, SMS, SMS, WS};
    return ffma_choose_plan(&p, options, short_kt);
}

/* Rung 13: the tile that fills the SMs in fewer rounds. */
static void tile_by_shape(void **state)
{
    (void)state;
    int short_kt = -1;
    assert_int_equal(plan(1024, 1024, 1024, 0, &short_kt), FFMA_WHOLE_SMALL); /* 26 < 100 */
    assert_int_equal(short_kt, 0);
    assert_int_equal(plan(2048, 2048, 2048, 0, &short_kt), FFMA_WHOLE_LARGE); /* 100 < 104 */
    assert_int_equal(plan(3072, 3072, 3072, 0, &short_kt), FFMA_WHOLE_SMALL); /* 130 < 300 */
    assert_int_equal(plan(4096, 4096, 4096, 0, &short_kt), FFMA_WHOLE_LARGE);
    assert_int_equal(plan(16896, 256, 128, 0, &short_kt), FFMA_WHOLE_LARGE); /* 100 <= 104 */
}

/* Rung 15: stream-K where it beats both whole-tile plans; 4096^2 keeps whole tiles (412 > 400);
 * 2560^2 (171 < 182 small) and 3072^2 (233 < 234 small, by one) take it. */
static void stream_k(void **state)
{
    (void)state;
    int short_kt = 0;
    assert_int_equal(plan(18048, 256, 128, FFMA_PLAN_STREAM_K, &short_kt), FFMA_STREAM_K);
    assert_int_equal(plan(29696, 256, 128, FFMA_PLAN_STREAM_K, &short_kt), FFMA_STREAM_K);
    assert_int_equal(plan(4096, 4096, 4096, FFMA_PLAN_STREAM_K, &short_kt), FFMA_WHOLE_LARGE);
    assert_int_equal(plan(2560, 2560, 2560, FFMA_PLAN_STREAM_K, &short_kt), FFMA_STREAM_K);
    assert_int_equal(plan(3072, 3072, 3072, FFMA_PLAN_STREAM_K, &short_kt), FFMA_STREAM_K);
    assert_int_equal(plan(2560, 2560, 2560, 0, &short_kt), FFMA_WHOLE_SMALL); /* rungs 13-14 */
    assert_int_equal(plan(5120, 5120, 5120, FFMA_PLAN_STREAM_K, &short_kt), FFMA_STREAM_K);
    /* without the option, or without co-resident blocks, never */
    assert_int_equal(plan(18048, 256, 128, 0, &short_kt), FFMA_WHOLE_SMALL);
    const struct ffma_problem none = {18048, 256, 128, SMS, 0, WS};
    assert_int_equal(ffma_choose_plan(&none, FFMA_PLAN_STREAM_K, &short_kt), FFMA_WHOLE_SMALL);
}

/* Rung 18: the uneven tail where the last round is more than half busy and K is long enough. */
static void uneven_tail(void **state)
{
    (void)state;
    const int both = FFMA_PLAN_STREAM_K | FFMA_PLAN_UNEVEN_TAIL;
    int short_kt = 0;
    assert_int_equal(plan(4096, 4096, 4096, both, &short_kt), FFMA_UNEVEN_TAIL);
    assert_true(short_kt >= SPLIT_MIN_KT && 2 * short_kt <= 512);
    assert_int_equal(plan(29696, 256, 2048, both, &short_kt), FFMA_UNEVEN_TAIL); /* 184 < 198 */
    assert_int_equal(plan(46592, 256, 2048, both, &short_kt), FFMA_UNEVEN_TAIL); /* 284 < 298 */
    /* a last round at most half busy: stream-K */
    assert_int_equal(plan(18048, 256, 128, both, &short_kt), FFMA_STREAM_K);
    /* two 128x256 blocks an SM (resident != SMs): a long piece would not hold its SM alone */
    const struct ffma_problem two = {4096, 4096, 4096, SMS, 2 * SMS, WS};
    assert_int_not_equal(ffma_choose_plan(&two, both, &short_kt), FFMA_UNEVEN_TAIL);
    /* no workspace for the short pieces' sums: no uneven tail */
    const struct ffma_problem dry = {4096, 4096, 4096, SMS, SMS, 0};
    assert_int_not_equal(ffma_choose_plan(&dry, both, &short_kt), FFMA_UNEVEN_TAIL);
}

/* Rung 14: slices meeting in global memory; the large tile's slabs for a long K. */
static void split_k(void **state)
{
    (void)state;
    long long cost = 0;
    /* 64x2048x1024: 16 tiles of 64x128, 8 slices (24 K tiles against 128 whole) */
    assert_int_equal(ffma_split_slices(16, 1024, SMS, WS / (64 * 128), &cost), 8);
    assert_int_equal(cost, 24);
    /* no room in the workspace: no split */
    assert_int_equal(ffma_split_slices(16, 1024, SMS, 16, &cost), 1);
    /* 1024^2 on 128 tiles already fills the SMs: no split */
    assert_int_equal(ffma_split_slices(128, 1024, SMS, WS / (64 * 128), &cost), 1);
    /* 256x256x16384: two 128x256 tiles in 66 slabs, cost 153 */
    const struct ffma_problem deep = {256, 256, 16384, SMS, SMS, WS};
    int slices = 0;
    assert_int_equal(ffma_large_split(2, &deep, &slices), 153);
    assert_int_equal(slices, 66);
    /* K too short for two slices of LSPLIT_MIN_KT K tiles: none */
    const struct ffma_problem shallow = {256, 256, 128, SMS, SMS, WS};
    assert_int_equal(ffma_large_split(2, &shallow, &slices), -1);
    assert_int_equal(slices, 1);
}

/* Rungs 16-17: slices in clusters, 8 GPCs of 16 SMs (cap[s] = 8 * floor(16 / s)). */
static void clusters(void **state)
{
    (void)state;
    int cap[SPLIT_MAX + 1] = {0};
    for (int s = 2; s <= SPLIT_MAX; ++s)
        cap[s] = 8 * (16 / s);
    long long cost = 0, t_cost = 0;
    /* 64x2048x1024: 8 slices, 18 K tiles (8 through global memory: 24) */
    assert_int_equal(ffma_cluster_slices(16, 1024, SMS, cap, 100, &cost), 8);
    assert_int_equal(cost, 18);
    /* 128x128x128: the 64x64 tile's 4 slices cost 4, the 64x128 tile's 6 (rung 17) */
    assert_int_equal(ffma_cluster_slices(2, 128, SMS, cap, 100, &cost), 4);
    assert_int_equal(cost, 6);
    assert_int_equal(ffma_cluster_slices(4, 128, SMS, cap, 66, &t_cost), 4);
    assert_int_equal(t_cost, 4);
    /* no clusters on the device: no split */
    const int none[SPLIT_MAX + 1] = {0};
    assert_int_equal(ffma_cluster_slices(16, 1024, SMS, none, 100, &cost), 1);
}

/* Rung 18: the 64x128 tile's slabs where slices share SMs (4096x128x4096: 4 slices, 255). */
static void small_slabs(void **state)
{
    (void)state;
    const struct ffma_problem skinny = {4096, 128, 4096, SMS, SMS, WS};
    int slices = 0;
    assert_int_equal(ffma_small_slabs(64, &skinny, 8, &slices), 255);
    assert_int_equal(slices, 4);
    /* the tail's rows: tile 512's raster group (8 rows of 16 tiles) starts at row 4096 */
    assert_int_equal(ffma_tail_row0(512 - 116, 4096), 3072);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tile_by_shape), cmocka_unit_test(stream_k),
        cmocka_unit_test(uneven_tail),   cmocka_unit_test(split_k),
        cmocka_unit_test(clusters),      cmocka_unit_test(small_slabs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
