/*
 * ffma_plan.cu - the plans of the FFMA rungs; see ffma_plan.h. Host code only.
 */
#include "ffma_plan.h"
#include "ffma_tile.cuh" /* the tile sizes */
#include "ffma_loop.cuh" /* RASTER_GROUP, ceil_div() */
#include "plan_costs.h"

/* Costs in hundredths of the time one 128x256 tile takes on an SM that runs one at a time:
 *   whole 128x256 tiles: ceil(tiles / SMs) rounds of 100;
 *   whole 64x128 tiles: ceil(tiles / SMs) rounds (up to 4 blocks per SM) of LARGE_TILE_GAIN / 4;
 *   stream-K: the whole rounds but one at 100, the rest shared out evenly at STREAM_K_COST;
 *   the uneven tail (below): the whole rounds, then the longer of its two pieces.
 * On 132 SMs: 1024^2: 32 large 100, 128 small 26 -> small; 2048^2: 128 large 100, 512 small
 * 104 -> large; 2560^2: 200 large 200, stream-K 171, 800 small 182 -> stream-K (without it:
 * small); 3072^2: 288 large 300, stream-K 233, 1152 small 234 -> stream-K by one hundredth
 * (without it: small); 4096^2: 512 large 400, stream-K 412 -> large (with the uneven tail: 392).
 * tests/test_plan.c holds these. */
static long long uneven_tail(long long tiles, long long sms, long long kt, int M, int N,
                             long long ws, int *short_kt);
extern "C" enum ffma_plan ffma_choose_plan(const struct ffma_problem *p, int options,
                                           int *short_kt)
{
    const long long large = ceil_div(p->M, L_BM) * ceil_div(p->N, L_BN);
    const long long small = ceil_div(p->M, S_BM) * ceil_div(p->N, S_BN);
    const long long whole_large = ceil_div(large, p->sms) * 100;
    const long long whole_small = ceil_div(small, p->sms) * LARGE_TILE_GAIN / 4;
    long long best = whole_large;
    enum ffma_plan plan = FFMA_WHOLE_LARGE;
    *short_kt = 0;
    /* a long piece holds its SM: only with one 128x256 block per SM */
    const long long uneven = (options & FFMA_PLAN_UNEVEN_TAIL) && p->resident == p->sms
                                 ? uneven_tail(large, p->sms, ceil_div(p->K, BK), p->M, p->N,
                                               p->ws, short_kt)
                                 : -1;
    if (uneven >= 0 && uneven < best) {
        best = uneven;
        plan = FFMA_UNEVEN_TAIL;
    }
    const long long resident = p->resident;
    if ((options & FFMA_PLAN_STREAM_K) && resident > 0 && large > resident &&
        large % resident != 0) {
        const long long dp_rounds = large / resident - 1;
        const long long sk =
            dp_rounds * 100 + (large - dp_rounds * resident) * STREAM_K_COST / resident;
        if (sk < best) {
            best = sk;
            plan = FFMA_STREAM_K;
        }
    }
    return whole_small < best ? FFMA_WHOLE_SMALL : plan;
}

/* The uneven tail: the last r = tiles % SMs tiles (r > SMs/2, after a round), each cut once
 * along K: a long piece of kt - js K tiles on an SM of its own, a short one of js, run on the
 * SMs - r left free, waves = ceil(r / (SMs - r)) deep, each SHORT_PIECE_KT K tiles beyond its
 * own. js balances the two; the longer in hundredths of a tile, or -1. The short pieces' sums
 * go to the workspace, C's rows from ffma_tail_row0() on. */
extern "C" int ffma_tail_row0(long long dp, int N)
{
    return (int)(dp / (RASTER_GROUP * ceil_div(N, L_BN)) * RASTER_GROUP * L_BM);
}
static long long uneven_tail(long long tiles, long long sms, long long kt, int M, int N,
                             long long ws, int *short_kt)
{
    const long long r = tiles % sms;
    *short_kt = 0;
    if (tiles < sms || 2 * r <= sms || (M - ffma_tail_row0(tiles - r, N)) * ceil_div(N, 4) * 4 > ws)
        return -1;
    const long long waves = ceil_div(r, sms - r);
    const long long js0 = (kt - waves * SHORT_PIECE_KT) / (waves + 1);
    long long best = -1;
    for (long long js = js0; js <= js0 + 1; ++js) { /* the balance lies between the two */
        const long long j = js < SPLIT_MIN_KT ? SPLIT_MIN_KT : js;
        const long long chain = waves * (j + SHORT_PIECE_KT);
        const long long t = chain > kt - j ? chain : kt - j;
        if (2 * j <= kt && (best < 0 || t < best)) {
            best = t;
            *short_kt = (int)j;
        }
    }
    return best < 0 ? -1 : tiles / sms * 100 + (best * 100 - 1) / kt + 1 + UNEVEN_COST;
}

/* In K tiles of one 64x128 block's time, with n blocks on the busiest SM sharing it:
 *   s = 1:  n * kt,                                n = ceil(tiles / SMs)
 *   s > 1:  n * (ceil(kt / s) + SPLIT_BLOCK_COST),  n = ceil(tiles * s / SMs) */
extern "C" int ffma_split_slices(long long tiles, int K, int sms, long long max_blocks,
                                 long long *cost)
{
    const long long kt = ceil_div(K, BK);
    long long best = 1, best_cost = ceil_div(tiles, sms) * kt;
    for (long long s = 2; s <= SPLIT_MAX && kt / s >= SPLIT_MIN_KT && tiles * s <= max_blocks;
         ++s) {
        const long long c = ceil_div(tiles * s, sms) * (ceil_div(kt, s) + SPLIT_BLOCK_COST);
        if (c < best_cost) {
            best_cost = c;
            best = s;
        }
    }
    *cost = best_cost;
    return (int)best;
}

/* As ffma_split_slices(), with c the tile's K tile in a 64x128 block's (100, or T_KT_COST for
 * the 64x64 tile) and the clusters that fit in place of the SMs:
 *   s = 1:  n * kt * c,                                  n = ceil(tiles / SMs)
 *   s > 1:  n * (ceil(kt / s) * c + CLUSTER_BLOCK_COST),  n = ceil(tiles / cap[s])
 * cap[s], clusters of s at one block per SM, is below SMs / s: a cluster never spans two GPCs. */
extern "C" int ffma_cluster_slices(long long tiles, int K, int sms, const int *cap, int c,
                                   long long *cost)
{
    const long long kt = ceil_div(K, BK);
    long long best = 1, best_cost = ceil_div(tiles, sms) * kt * c / 100;
    for (long long s = 2; s <= SPLIT_MAX && kt / s >= SPLIT_MIN_KT; ++s) {
        const long long n = cap[s] > 0 ? ceil_div(tiles, cap[s]) : CLUSTER_MAX_SHARE + 1;
        const long long t = n * (ceil_div(kt, s) * c / 100 + CLUSTER_BLOCK_COST);
        if (n <= CLUSTER_MAX_SHARE && t < best_cost) {
            best_cost = t;
            best = s;
        }
    }
    *cost = best_cost;
    return (int)best;
}

/* s = SMs / tiles slices, one block per SM, each of >= LSPLIT_MIN_KT K tiles, the slabs
 * (s * M * ldw floats) in the workspace: LARGE_KT_COST tenths a 128x256 K tile, a pipeline fill
 * and the slabs written and read back. */
extern "C" long long ffma_large_split(long long tiles, const struct ffma_problem *p, int *slices)
{
    const long long kt = ceil_div(p->K, BK), ldw = ceil_div(p->N, 4) * 4;
    long long s = p->sms / tiles;
    *slices = 1;
    if (s > kt / LSPLIT_MIN_KT)
        s = kt / LSPLIT_MIN_KT;
    while (s >= 2 && s * p->M * ldw > p->ws)
        --s;
    if (s < 2)
        return -1;
    *slices = (int)s;
    return (LARGE_KT_COST * (ceil_div(kt, s) + PIPELINE_FILL_KT) +
            SLAB_COST_TENTHS * s * p->M * ldw / 1000000) /
           10;
}

/* n = ceil(s * tiles / SMs) blocks on the busiest SM (4 fit), ceil(kt / s) + SMALL_FILL_KT K
 * tiles each, at SHARED_SM_SPEED% of a lone block's time if n > 1; the slabs' sum as above. */
extern "C" long long ffma_small_slabs(long long tiles, const struct ffma_problem *p,
                                      int max_slices, int *slices)
{
    const long long kt = ceil_div(p->K, BK), ldw = ceil_div(p->N, 4) * 4;
    long long best = -1;
    for (long long s = 2; s <= max_slices && kt / s >= SPLIT_MIN_KT; ++s) {
        const long long n = ceil_div(s * tiles, p->sms);
        const long long c =
            n * (ceil_div(kt, s) + SMALL_FILL_KT) * (n > 1 ? SHARED_SM_SPEED : 100) / 100 +
            SLAB_COST_TENTHS / 10 * s * p->M * ldw / 1000000;
        if (s * p->M * ldw <= p->ws && (best < 0 || c < best)) {
            best = c;
            *slices = (int)s;
        }
    }
    return best;
}
