/*
 * test_banks.c - shared-memory bank conflicts of rungs 06-10, replayed on the host.
 *
 * Each rung from 06 on exposes its shared-memory index functions in plain C (see
 * tests/banks_rung.h): where element (k, m) of the A tile and (k, n) of the B tile live,
 * which float4 of A and of B each thread copies in, and which rows and columns each
 * thread computes.  The kernels index shared memory only through these functions, so
 * replaying them here replays the kernels' real addresses.  For every warp of the block
 * and every shared-memory instruction of one K tile, the test splits the warp into the
 * transactions the hardware serves at once and counts the ways of the worst one:
 *
 *   - 32 banks, 4 bytes wide: word w (a float offset) is in bank w % 32.
 *   - an access of 4 bytes per lane is one transaction of all 32 lanes; 8 bytes per lane,
 *     two of 16 lanes (half-warps); 16 bytes per lane, four of 8 lanes (quarter-warps).
 *     Each transaction moves at most 128 bytes.
 *   - ways = the largest number of DISTINCT words one transaction touches in one bank.
 *     Lanes touching the same word share it (a broadcast); 1 way = conflict-free.
 *
 * The per-rung buffer base (rungs 09 and 10 double-buffer the tiles) adds a multiple of 4 KB,
 * which moves no word to another bank, so the offsets within one buffer are what count.
 *
 * Each rung's header states its conflicts; `claims` below repeats them, and the test fails
 * if the replay disagrees in either direction.  It also checks what the kernels silently
 * rely on: each layout is a permutation of its tile, every float4 access is 16-byte
 * aligned and covers four consecutive floats, the four transposed stores of A's float4 are
 * BM floats apart (the kernels write them from one base), the copy-in writes every tile
 * element exactly once, and the threads' 8x8 patches cover the C tile exactly once.
 *
 * Rung 05 is not replayed: its kernel indexes 2-D arrays directly (its header describes
 * its accesses).  Build (no GPU, no CUDA library needed):
 *   gcc -std=c11 -Wall -Wextra -Wpedantic tests/test_banks.c -lcmocka -o test_banks
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* One rung's layout, as its functions describe it (filled in by banks_rung.h). */
struct rung_layout {
    const char *file;
    int bm, bn, bk, threads;
    int (*a_tile_offset)(int k, int m);     /* float offset of A(k, m) inside a_tile */
    int (*b_tile_offset)(int k, int n);     /* float offset of B(k, n) inside b_tile */
    int (*a_load_row)(unsigned tid);        /* the float4 of A thread tid copies: tile row m... */
    int (*a_load_col)(unsigned tid);        /* ...and its first k */
    int (*b_load_row)(unsigned tid);        /* the float4 of B: k... */
    int (*b_load_col)(unsigned tid);        /* ...and its first tile column n */
    int (*frag_a_row)(unsigned tid, int h); /* first of the 4 tile rows of the h-th A float4 */
    int (*frag_b_col)(unsigned tid, int h); /* first of the 4 tile cols of the h-th B float4 */
};

#define RUNG_FILE "../steps/06_a_transpose.cu"
#define RUNG_ID   r06
#include "banks_rung.h"

#define RUNG_FILE "../steps/07_xor_swizzle.cu"
#define RUNG_ID   r07
#include "banks_rung.h"

#define RUNG_FILE "../steps/08_coalesced_writeback.cu"
#define RUNG_ID   r08
#include "banks_rung.h"

#define RUNG_FILE "../steps/09_double_buffer.cu"
#define RUNG_ID   r09
#include "banks_rung.h"

#define RUNG_FILE "../steps/10_texld.cu"
#define RUNG_ID   r10
#include "banks_rung.h"

/* What each rung's header claims: the ways of each shared-memory access of one K tile. */
struct claims {
    int a_store; /* 4 x STS.32 per thread: A's float4 written transposed */
    int b_store; /* 1 x STS.128 per thread */
    int a_frag;  /* 2 x LDS.128 per thread and k: the thread's 8 rows of A */
    int b_frag;  /* 2 x LDS.128 per thread and k: the thread's 8 cols of B */
};

struct rung_case {
    const struct rung_layout *layout;
    struct claims claims;
};

static const struct rung_case rung06 = {&r06_layout, {2, 1, 1, 2}};
static const struct rung_case rung07 = {&r07_layout, {1, 1, 1, 1}};
static const struct rung_case rung08 = {&r08_layout, {1, 1, 1, 1}};
static const struct rung_case rung09 = {&r09_layout, {1, 1, 1, 1}};
static const struct rung_case rung10 = {&r10_layout, {1, 1, 1, 1}};

#define WARP  32
#define BANKS 32

/* Ways of one warp-wide access: lane L touches `words` consecutive 4-byte words starting at
 * word[L] (words = 1, 2 or 4, i.e. 4-, 8- or 16-byte accesses). */
static int warp_ways(const int word[WARP], int words)
{
    const int lanes = WARP / words; /* lanes per transaction: 32, 16 or 8 */
    int worst = 0;
    for (int first = 0; first < WARP; first += lanes) {
        int seen[BANKS][WARP]; /* the distinct words met in each bank (at most 32) */
        int count[BANKS] = {0};
        for (int lane = first; lane < first + lanes; ++lane) {
            for (int w = 0; w < words; ++w) {
                const int addr = word[lane] + w;
                const int bank = addr % BANKS;
                int known = 0;
                for (int i = 0; i < count[bank]; ++i)
                    known |= (seen[bank][i] == addr);
                if (!known)
                    seen[bank][count[bank]++] = addr;
            }
        }
        for (int b = 0; b < BANKS; ++b)
            if (count[b] > worst)
                worst = count[b];
    }
    return worst;
}

/* The shared-memory instructions of one K tile, by kind. `index` picks the instance: the
 * j-th scalar store of A (j < 4), or (k, h) = (index / 2, index % 2) for the fragment loads. */
enum access { A_STORE, B_STORE, A_FRAG, B_FRAG };
static const char *const access_name[] = {"A store (STS.32)", "B store (STS.128)",
                                          "A fragment load (LDS.128)", "B fragment load (LDS.128)"};

static int instances(const struct rung_layout *r, enum access a)
{
    switch (a) {
    case A_STORE:
        return 4;
    case B_STORE:
        return 1;
    default:
        return 2 * r->bk;
    }
}

static int words_per_lane(enum access a)
{
    return a == A_STORE ? 1 : 4;
}

/* The first word lane `tid` touches in instance `index` of access `a`. */
static int address(const struct rung_layout *r, enum access a, int index, int tid)
{
    switch (a) {
    /* the kernels write A(k+j, m) at a_tile_offset(k, m) + j*BM (checked below) */
    case A_STORE:
        return r->a_tile_offset(r->a_load_col(tid), r->a_load_row(tid)) + index * r->bm;
    case B_STORE:
        return r->b_tile_offset(r->b_load_row(tid), r->b_load_col(tid));
    case A_FRAG:
        return r->a_tile_offset(index / 2, r->frag_a_row(tid, index % 2));
    default:
        return r->b_tile_offset(index / 2, r->frag_b_col(tid, index % 2));
    }
}

/* The worst ways of access `a` over every warp of the block and every instance. */
static int replay(const struct rung_layout *r, enum access a)
{
    int worst = 0;
    for (int index = 0; index < instances(r, a); ++index) {
        for (int warp = 0; warp < r->threads / WARP; ++warp) {
            int word[WARP];
            for (int lane = 0; lane < WARP; ++lane)
                word[lane] = address(r, a, index, warp * WARP + lane);
            const int ways = warp_ways(word, words_per_lane(a));
            if (ways > worst)
                worst = ways;
        }
    }
    return worst;
}

static void check_access(const struct rung_case *c, enum access a, int claimed)
{
    const int ways = replay(c->layout, a);
    if (ways != claimed)
        print_error("%s: %s is %d-way, the header claims %d-way\n", c->layout->file, access_name[a],
                    ways, claimed);
    assert_int_equal(ways, claimed);
}

static void conflicts_match_the_header(void **state)
{
    const struct rung_case *c = *state;
    check_access(c, A_STORE, c->claims.a_store);
    check_access(c, B_STORE, c->claims.b_store);
    check_access(c, A_FRAG, c->claims.a_frag);
    check_access(c, B_FRAG, c->claims.b_frag);
}

/* offset(k, x) over the whole tile hits every float of the tile exactly once. */
static void check_permutation(const char *file, const char *tile, int (*offset)(int, int), int rows,
                              int cols)
{
    const int size = rows * cols;
    int *hits = calloc((size_t)size, sizeof *hits);
    assert_non_null(hits);
    for (int k = 0; k < rows; ++k) {
        for (int x = 0; x < cols; ++x) {
            const int o = offset(k, x);
            if (o < 0 || o >= size) {
                print_error("%s: %s(%d, %d) = %d is outside the tile\n", file, tile, k, x, o);
                fail();
            }
            ++hits[o];
        }
    }
    for (int o = 0; o < size; ++o) {
        if (hits[o] != 1)
            print_error("%s: %s: float %d is used %d times\n", file, tile, o, hits[o]);
        assert_int_equal(hits[o], 1);
    }
    free(hits);
}

static void layouts_are_permutations(void **state)
{
    const struct rung_layout *r = ((const struct rung_case *)*state)->layout;
    check_permutation(r->file, "a_tile_offset", r->a_tile_offset, r->bk, r->bm);
    check_permutation(r->file, "b_tile_offset", r->b_tile_offset, r->bk, r->bn);
}

/* A float4 access at (k, x) reads offset(k, x) .. +3: it must be 16-byte aligned and hold
 * (k, x), (k, x+1), (k, x+2), (k, x+3) in that order. */
static void check_float4(const char *file, const char *what, int (*offset)(int, int), int k, int x)
{
    const int o = offset(k, x);
    if (o % 4 != 0)
        print_error("%s: %s(%d, %d) = %d is not 16-byte aligned\n", file, what, k, x, o);
    assert_int_equal(o % 4, 0);
    for (int i = 1; i < 4; ++i) {
        if (offset(k, x + i) != o + i)
            print_error("%s: %s: (%d, %d+%d) is not next to (%d, %d)\n", file, what, k, x, i, k, x);
        assert_int_equal(offset(k, x + i), o + i);
    }
}

static void float4_accesses_are_whole(void **state)
{
    const struct rung_layout *r = ((const struct rung_case *)*state)->layout;
    for (int tid = 0; tid < r->threads; ++tid) {
        check_float4(r->file, "b_tile_offset (store)", r->b_tile_offset, r->b_load_row(tid),
                     r->b_load_col(tid));
        for (int k = 0; k < r->bk; ++k) {
            for (int h = 0; h < 2; ++h) {
                check_float4(r->file, "a_tile_offset (fragment)", r->a_tile_offset, k,
                             r->frag_a_row(tid, h));
                check_float4(r->file, "b_tile_offset (fragment)", r->b_tile_offset, k,
                             r->frag_b_col(tid, h));
            }
        }
    }
}

/* The kernels store the four floats of A's float4 (k .. k+3 of row m) at a_tile_offset(k, m)
 * + j*BM: that must be where the layout puts (k+j, m). */
static void a_stores_are_bm_apart(void **state)
{
    const struct rung_layout *r = ((const struct rung_case *)*state)->layout;
    for (int tid = 0; tid < r->threads; ++tid) {
        const int k = r->a_load_col(tid), m = r->a_load_row(tid);
        for (int j = 0; j < 4; ++j) {
            if (r->a_tile_offset(k + j, m) != r->a_tile_offset(k, m) + j * r->bm)
                print_error("%s: A(%d, %d) is not BM floats after A(%d, %d)\n", r->file, k + j, m,
                            k + j - 1, m);
            assert_int_equal(r->a_tile_offset(k + j, m), r->a_tile_offset(k, m) + j * r->bm);
        }
    }
}

/* The copy-in writes each (k, m) of the A tile and each (k, n) of the B tile exactly once. */
static void copy_in_covers_the_tiles(void **state)
{
    const struct rung_layout *r = ((const struct rung_case *)*state)->layout;
    int *a_hits = calloc((size_t)(r->bk * r->bm), sizeof *a_hits);
    int *b_hits = calloc((size_t)(r->bk * r->bn), sizeof *b_hits);
    assert_non_null(a_hits);
    assert_non_null(b_hits);
    for (int tid = 0; tid < r->threads; ++tid) {
        for (int i = 0; i < 4; ++i) {
            const int ak = r->a_load_col(tid) + i, am = r->a_load_row(tid);
            const int bk = r->b_load_row(tid), bn = r->b_load_col(tid) + i;
            assert_in_range(ak, 0, r->bk - 1);
            assert_in_range(am, 0, r->bm - 1);
            assert_in_range(bk, 0, r->bk - 1);
            assert_in_range(bn, 0, r->bn - 1);
            ++a_hits[ak * r->bm + am];
            ++b_hits[bk * r->bn + bn];
        }
    }
    for (int e = 0; e < r->bk * r->bm; ++e)
        assert_int_equal(a_hits[e], 1);
    for (int e = 0; e < r->bk * r->bn; ++e)
        assert_int_equal(b_hits[e], 1);
    free(a_hits);
    free(b_hits);
}

/* The threads' patches (rows frag_a_row(tid, h) + 0..3, cols frag_b_col(tid, h) + 0..3 for
 * h = 0, 1) tile the BM x BN block tile of C exactly once. */
static void threads_cover_the_c_tile(void **state)
{
    const struct rung_layout *r = ((const struct rung_case *)*state)->layout;
    int *hits = calloc((size_t)(r->bm * r->bn), sizeof *hits);
    assert_non_null(hits);
    for (int tid = 0; tid < r->threads; ++tid) {
        for (int hm = 0; hm < 2; ++hm) {
            for (int hn = 0; hn < 2; ++hn) {
                for (int i = 0; i < 4; ++i) {
                    for (int j = 0; j < 4; ++j) {
                        const int m = r->frag_a_row(tid, hm) + i;
                        const int n = r->frag_b_col(tid, hn) + j;
                        assert_in_range(m, 0, r->bm - 1);
                        assert_in_range(n, 0, r->bn - 1);
                        ++hits[m * r->bn + n];
                    }
                }
            }
        }
    }
    for (int e = 0; e < r->bm * r->bn; ++e) {
        if (hits[e] != 1)
            print_error("%s: C(%d, %d) is computed by %d threads\n", r->file, e / r->bn, e % r->bn,
                        hits[e]);
        assert_int_equal(hits[e], 1);
    }
    free(hits);
}

/* The model itself, on textbook cases. */
static void the_model_counts_ways(void **state)
{
    (void)state;
    int word[WARP];
    for (int l = 0; l < WARP; ++l)
        word[l] = l; /* 32 consecutive floats */
    assert_int_equal(warp_ways(word, 1), 1);
    for (int l = 0; l < WARP; ++l)
        word[l] = 2 * l; /* stride 2: banks 0, 2, .. twice */
    assert_int_equal(warp_ways(word, 1), 2);
    for (int l = 0; l < WARP; ++l)
        word[l] = 32 * l; /* one column of a 32-wide array */
    assert_int_equal(warp_ways(word, 1), 32);
    for (int l = 0; l < WARP; ++l)
        word[l] = 7; /* everyone reads one word: a broadcast */
    assert_int_equal(warp_ways(word, 1), 1);
    for (int l = 0; l < WARP; ++l)
        word[l] = 4 * l; /* consecutive float4s: each quarter-warp covers 32 banks */
    assert_int_equal(warp_ways(word, 4), 1);
    for (int l = 0; l < WARP; ++l)
        word[l] = 8 * l; /* float4s 32 bytes apart: lanes l and l+4 share 4 banks */
    assert_int_equal(warp_ways(word, 4), 2);
    for (int l = 0; l < WARP; ++l)
        word[l] = 4 * (l % 8) + 32 * (l / 8); /* different quarter-warps never conflict */
    assert_int_equal(warp_ways(word, 4), 1);
    for (int l = 0; l < WARP; ++l)
        word[l] = 2 * l; /* consecutive float2s: each half-warp covers 32 banks */
    assert_int_equal(warp_ways(word, 2), 1);
}

#define RUNG_TEST(num, fn)                                                                         \
    {                                                                                              \
        "rung " #num ": " #fn, fn, NULL, NULL, (void *)&rung##num                                  \
    }
#define RUNG_TESTS(num)                                                                            \
    RUNG_TEST(num, conflicts_match_the_header), RUNG_TEST(num, layouts_are_permutations),          \
        RUNG_TEST(num, float4_accesses_are_whole), RUNG_TEST(num, a_stores_are_bm_apart),          \
        RUNG_TEST(num, copy_in_covers_the_tiles), RUNG_TEST(num, threads_cover_the_c_tile)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_model_counts_ways),
        RUNG_TESTS(06),
        RUNG_TESTS(07),
        RUNG_TESTS(08),
        RUNG_TESTS(09),
        RUNG_TESTS(10),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
