/* check_cases.c - which shapes, layouts and scalars every rung is checked on. */
#include "check_cases.h"

#include <math.h>
#include <stddef.h>

struct scalars {
    float alpha, beta;
};

/* (1,0) the plain product; (0.5,2) both terms; (-1.25,0) with NaN in C, which beta == 0
 * must ignore; (0,1.5) C := beta*C without touching A or B. */
static const struct scalars pairs[] = {{1.0f, 0.0f}, {0.5f, 2.0f}, {-1.25f, 0.0f}, {0.0f, 1.5f}};
#define NPAIRS ((int)(sizeof pairs / sizeof pairs[0]))

static const int pow2_sizes[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048};
static const int odd_sizes[] = {7, 31, 33, 127, 129, 255, 257, 1000, 1023, 1025};

/* M != N != K, and each of M, N, K equal to 1. */
static const int nonsquare[][3] = {
    {1, 257, 129}, {257, 1, 129}, {129, 257, 1}, {1, 1, 1000}, {1000, 1, 1}, {1, 1000, 1},
    {7, 1025, 33}, {1025, 7, 33}, {33, 129, 1025}, {300, 200, 100}, {129, 65, 257},
    {2048, 64, 512}, {64, 2048, 512}, {100, 3000, 17}, {513, 257, 4},
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int add(struct check_case *cases, int n, int max, struct check_case c)
{
    if (n < max)
        cases[n] = c;
    return n + 1;
}

static struct check_case product(const char *group, int m, int n, int k, struct scalars s, int exact)
{
    struct check_case c = {0};
    c.kind = CASE_PRODUCT;
    c.group = group;
    c.m = m;
    c.n = n;
    c.k = k;
    c.alpha = s.alpha;
    c.beta = s.beta;
    c.exact = exact;
    return c;
}

/* Each shape exact and random, each plain and with padded rows (lda + 3, ldb + 1: not
 * multiples of 4, so the 4-byte B copies; ldc + 32). These shapes are there to reach a
 * kernel's path, so alpha is never 0 (the prologue would settle the case before any kernel):
 * the exact half has alpha 0.5 and beta 2, the random half cycles through the first three
 * pairs. */
static int add_shapes(struct check_case *cases, int n, int max, const char *group,
                      const int (*shapes)[3], int count)
{
    for (int s = 0; s < count; s++) {
        for (int exact = 0; exact <= 1; exact++) {
            struct check_case c = product(group, shapes[s][0], shapes[s][1], shapes[s][2],
                                          exact ? pairs[1] : pairs[s % 3], exact);
            n = add(cases, n, max, c);
            c.lda_pad = 3;
            c.ldb_pad = 1;
            c.ldc_pad = 32;
            n = add(cases, n, max, c);
        }
    }
    return n;
}

/* One shape with every edge a launcher must handle at once (whatever the shape gives: a partial
 * K tile, N % 4 != 0), rows padded by one float (C written by floats) and C offset by one
 * float: exact with beta != 0, then random inputs with beta == 0. */
static int add_every_edge(struct check_case *cases, int n, int max, const char *group, int m,
                          int cols, int k)
{
    for (int p = 1; p <= 2; p++) {
        struct check_case c = product(group, m, cols, k, pairs[p], p == 1);
        c.lda_pad = c.ldb_pad = c.ldc_pad = 1;
        c.c_off = 1;
        n = add(cases, n, max, c);
    }
    return n;
}

int check_matrix(struct check_case *cases, int max)
{
    int n = 0;
    /* Square sizes: exact (1,0), and random inputs cycling through the scalar pairs. */
    for (int i = 0; i < COUNT(pow2_sizes); i++) {
        const int s = pow2_sizes[i];
        n = add(cases, n, max, product("power of two", s, s, s, pairs[0], 1));
        n = add(cases, n, max, product("power of two", s, s, s, pairs[i % NPAIRS], 0));
    }
    for (int i = 0; i < COUNT(odd_sizes); i++) {
        const int s = odd_sizes[i];
        n = add(cases, n, max, product("odd or prime size", s, s, s, pairs[0], 1));
        n = add(cases, n, max, product("odd or prime size", s, s, s, pairs[i % NPAIRS], 0));
    }
    /* Non-square shapes, every scalar pair, exact and random. */
    for (int i = 0; i < COUNT(nonsquare); i++)
        for (int p = 0; p < NPAIRS; p++)
            for (int exact = 0; exact <= 1; exact++)
                n = add(cases, n, max,
                        product("non-square", nonsquare[i][0], nonsquare[i][1], nonsquare[i][2],
                                pairs[p], exact));
    /* Padded leading dimensions: +1, +3, +32 on each operand, then mixed. */
    static const int pads[] = {1, 3, 32};
    static const int padded_shapes[][3] = {{127, 129, 131}, {256, 256, 256}, {33, 1000, 65}};
    for (int s = 0; s < COUNT(padded_shapes); s++) {
        for (int p = 0; p < COUNT(pads); p++) {
            for (int exact = 0; exact <= 1; exact++) {
                struct check_case c = product("padded leading dimension", padded_shapes[s][0],
                                              padded_shapes[s][1], padded_shapes[s][2],
                                              pairs[(s + p) % NPAIRS], exact);
                c.lda_pad = c.ldb_pad = c.ldc_pad = pads[p];
                n = add(cases, n, max, c);
                c.lda_pad = pads[p];
                c.ldb_pad = pads[(p + 1) % COUNT(pads)];
                c.ldc_pad = pads[(p + 2) % COUNT(pads)];
                n = add(cases, n, max, c);
            }
        }
    }
    /* Pointers offset by one float: 4-byte aligned, never 16-byte aligned. */
    static const int offset_shapes[][3] = {{128, 128, 128}, {257, 129, 65}, {1024, 1024, 1024}};
    for (int s = 0; s < COUNT(offset_shapes); s++) {
        for (int which = 0; which < 4; which++) {
            struct check_case c = product("pointer offset by one float", offset_shapes[s][0],
                                          offset_shapes[s][1], offset_shapes[s][2],
                                          pairs[which], which % 2);
            c.a_off = (which == 0 || which == 3);
            c.b_off = (which == 1 || which == 3);
            c.c_off = (which == 2 || which == 3);
            n = add(cases, n, max, c);
        }
    }
    /* Every scalar pair on tile-aligned and unaligned shapes. */
    static const int scalar_shapes[][3] = {{129, 131, 137}, {256, 256, 256}, {512, 384, 640}};
    for (int s = 0; s < COUNT(scalar_shapes); s++)
        for (int p = 0; p < NPAIRS; p++)
            for (int exact = 0; exact <= 1; exact++)
                n = add(cases, n, max,
                        product("alpha and beta", scalar_shapes[s][0], scalar_shapes[s][1],
                                scalar_shapes[s][2], pairs[p], exact));
    /* Many tiles: more 128x256 tiles than SMs, and not a whole number of rounds (153 and 165 on
     * 132 SMs, 153 and 165 on 108 too), so rungs 15-18 share K out between blocks (stream-K):
     * split tiles, a partial first K tile, B copied
     * 16 or 4 bytes at a time, padded rows. */
    static const int many_tiles[][3] = {{2049, 2300, 300}, {1100, 4100, 1001}, {4100, 1030, 77}};
    n = add_shapes(cases, n, max, "many tiles: stream-K", many_tiles, COUNT(many_tiles));
    /* 512 tiles: three rounds whole on 132 SMs, then one more round and the rest shared. */
    n = add(cases, n, max, product("many tiles: stream-K", 4096, 4096, 64, pairs[1], 0));
    /* 232 tiles: on 132 SMs one round whole and 100 more: rung 15 shares them all out
     * (stream-K, no whole rounds before), beta != 0. */
    n = add(cases, n, max, product("many tiles: stream-K", 14848, 512, 1024, pairs[1], 0));
    /* 232 tiles again, on 132 SMs cut by rung 18's uneven tail (the last round's tiles split
     * along K into a long and a short piece, summed by a third kernel), with every edge at
     * once: a partial first K tile, N % 4 != 0 (B copied by 4 bytes), rows padded by one float
     * (C written by floats), C offset by one float; exact with beta != 0, then beta == 0. */
    n = add_every_edge(cases, n, max, "many tiles: uneven tail", 29693, 253, 1021);
    /* Few tiles, long K, cut by rung 18 into slabs of the 64x128 tile (a launch a slice, then
     * their sum): 48 and 66 tiles, split 4 to 8 ways on 114-144 SMs, with every edge at once,
     * as above; exact with beta != 0, then random with beta == 0. */
    n = add_every_edge(cases, n, max, "few tiles: small-tile slabs", 3001, 101, 9001);
    n = add_every_edge(cases, n, max, "few tiles: small-tile slabs", 127, 4099, 4099);
    /* Few tiles: fewer 64x128 tiles than the SMs could take twice over, and K long enough to
     * cut, so rung 14 splits each tile's K over several blocks (split-K): 12, 1 and 55 tiles,
     * a partial first K tile, B copied 16 or 4 bytes at a time, padded rows, beta != 0. */
    static const int few_tiles[][3] = {{200, 300, 999}, {64, 128, 64}, {700, 600, 2001}};
    n = add_shapes(cases, n, max, "few tiles: split-K", few_tiles, COUNT(few_tiles));
    /* Long K, exact, beta != 0, on many tiles: bound mode cannot see a K tile dropped at large K
     * (its bound grows like K^2 u, |C| like sqrt(K)), exact mode sees any wrong integer. On a
     * 132-SM GPU rung 15 runs them as whole 128x256 tiles (2048^2), stream-K (14848x512),
     * split-K on small tiles (256^2 x 16384) and split-K on large tiles (1024^2 and
     * 256^2 x 65536); the GPU tests prove each path ran on the GPU at hand (SGEMM_TRACE). */
    static const int long_k[][3] = {{2048, 2048, 4096},   {14848, 512, 4096},
                                    {256, 256, 16384},    {1024, 1024, 16384},
                                    {256, 256, 65536},    {1024, 1024, 65536}};
    for (int s = 0; s < COUNT(long_k); s++) {
        struct check_case c =
            product("long K, exact", long_k[s][0], long_k[s][1], long_k[s][2], pairs[1], 1);
        n = add(cases, n, max, c);
        if (s % 2 == 0) { /* and with padded rows */
            c.lda_pad = 3;
            c.ldb_pad = 1;
            c.ldc_pad = 32;
            n = add(cases, n, max, c);
        }
    }
    /* Precision against FP64 at long K: the elementwise bound grows like K u |A||B| and cannot
     * see a rung that loses accuracy everywhere a little (products summed in the truncating
     * tensor-core accumulator: ~60 u at K = 4096, where an SGEMM has ~6), so these cases also
     * hold the rung's error on sampled elements to the precision gate beside cuBLAS's and a
     * sequential loop's. Whole tiles, split-K (few tiles), stream-K (many), a very long K. */
    static const int precise[][3] = {{256, 256, 4096},   {1024, 1024, 4096},
                                     {2049, 2300, 2048}, {128, 128, 65536}};
    for (int s = 0; s < COUNT(precise); s++) {
        struct check_case c = product("precision against FP64, long K", precise[s][0],
                                      precise[s][1], precise[s][2], pairs[0], 0);
        c.precision = 1;
        n = add(cases, n, max, c);
    }
    /* Inf and NaN in A and B (exact inputs around them): each C element must be +Inf, -Inf,
     * NaN or finite as in cuBLAS, on one tile and on each of rung 15's paths on 132 SMs:
     * several whole tiles, stream-K, split-K on small tiles, split-K on large tiles. */
    static const int not_finite[][3] = {{67, 45, 33},     {1000, 1000, 999}, {2049, 2300, 300},
                                        {200, 300, 999},  {256, 256, 16384}};
    for (int s = 0; s < COUNT(not_finite); s++) {
        for (int p = 0; p <= 1; p++) { /* (1, 0) and (0.5, 2) */
            struct check_case c = product("Inf and NaN in A and B", not_finite[s][0],
                                          not_finite[s][1], not_finite[s][2], pairs[p], 1);
            c.not_finite = 1;
            n = add(cases, n, max, c);
        }
    }
    /* Extreme shapes: gridDim.y stops at 65535, so launchers run M beyond 65535 row tiles
     * as slabs; 8,388,613 rows is past that for every tile height up to 128.  And a K of a
     * million (exact inputs stay exact: |sum| <= 4K < 2^24). */
    n = add(cases, n, max, product("tall: row slabs", 8388613, 3, 2, pairs[1], 1));
    n = add(cases, n, max, product("tall: row slabs", 8388613, 3, 2, pairs[2], 0));
    n = add(cases, n, max, product("long K", 3, 5, 1000003, pairs[0], 1));
    n = add(cases, n, max, product("long K", 3, 5, 1000003, pairs[1], 0));
    /* The contract's special cases. */
    n = add(cases, n, max, product("K == 0: C := beta*C", 65, 33, 0, pairs[1], 0));
    n = add(cases, n, max, product("K == 0 and beta == 0: C := 0", 65, 33, 0, pairs[2], 0));
    struct check_case noop = product("M == 0: nothing touched", 0, 64, 64, pairs[0], 0);
    noop.kind = CASE_NOOP;
    n = add(cases, n, max, noop);
    noop.group = "N == 0: nothing touched";
    noop.m = 64;
    noop.n = 0;
    n = add(cases, n, max, noop);
    struct check_case bad = product("lda < K is rejected", 64, 64, 64, pairs[0], 0);
    bad.kind = CASE_INVALID;
    bad.bad_lda = 1;
    n = add(cases, n, max, bad);
    bad.group = "M < 0 is rejected";
    bad.bad_lda = 0;
    bad.m = -1;
    n = add(cases, n, max, bad);
    bad.m = 64;
    bad.group = "A == NULL is rejected";
    bad.bad_lda = 0;
    bad.null_a = 1;
    n = add(cases, n, max, bad);
    return n;
}

int case_reaches_kernel(const struct check_case *c)
{
    return c->kind == CASE_PRODUCT && c->m > 0 && c->n > 0 && c->k > 0 && c->alpha != 0.0f;
}
