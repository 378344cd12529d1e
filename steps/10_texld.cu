/*
 * Rung 10 - texture loads: rung 09 with A and B fetched through 1-D texture objects.
 *
 * What changes from rung 09
 *   Only where the global loads come from, and which blocks test their bounds.  The launcher
 *   passes the kernel a texture object over A and one over B (1-D, linear memory, one float4
 *   per texel), and the K loop fetches with tex1Dfetch<float4>() (TLD in SASS) instead of an
 *   LDG.128.  Everything from the registers on - shared memory, the fragments, the FMAs, the
 *   barrier, the write-back - is rung 09.
 *
 * What the texture buys: a fetch outside the texture returns zeros and never faults
 *   So the loads need no bounds test where the texture's own bound is the right one:
 *   - a row of A beyond M is given row M's offset, past the end of A: it fetches zeros;
 *   - inside a full K tile every row of B is inside K, and every float4 of A inside K.
 *   A 1-D texture is zero only past the END of the operand, though, not past the end of a
 *   row; so two cases still need rung 09's predicated loads (load4()):
 *   - a last, partial K tile (K % 8 != 0): a float4 past K would fetch the padding or the
 *     next row, not zeros;
 *   - a block whose columns cross N: a float4 of B that crosses N reads past its row, and on
 *     B's last row its texel, partly outside B, lies outside the texture (which covers
 *     floor(span / 4) texels, never a float past the end) and would read as zeros.
 *   The K loop is therefore written once and built twice (k_loop(), inlined with fast = 1
 *   and fast = 0): blocks that meet neither case fetch through the textures with no test at
 *   all; the others run rung 09's loop.  The choice is per block, so barriers stay uniform
 *   (one loop that chose per tile ran at 0.80x cuBLAS: both paths and their tests everywhere).
 *
 * Why the hardware rewards it, and what it does not buy on sm_90
 *   The gain is the loads without predicates, not the texture cache.  The texture copy of the
 *   loop issues 572 instructions per tile and warp against rung 09's 585 (ncu, 4096, H200):
 *   no count tests, no branches, no 64-bit address arithmetic around the loads, at the same
 *   issue rate (0.85 instructions per cycle per scheduler, 82% of issue slots).  ptxas also
 *   schedules the four TLDs of a pair of tiles at the top of the unrolled body, a prefetch
 *   deeper than rung 09's, which costs 8 more live registers and about 5 MOVs per tile to
 *   make room.  Nothing says the texture path beats LDG as such: an LDG copy of the same
 *   test-free loop ran at 0.92x, below rung 09 (its dispatch stalls those of rung 09's slow
 *   schedule).  What the texture gives is the zeros past the end of A, which take the M edge
 *   out of the loop.
 *
 * When the textures are used (the launcher decides; otherwise the call is exactly rung 09)
 *   - A and B both qualify for float4 loads (ld % 4 == 0, 16-byte aligned base), and K is a
 *     multiple of BK;
 *   - each base is aligned to cudaDevAttrTextureAlignment (typically 512 bytes), as
 *     cudaCreateTextureObject requires for linear memory;
 *   - each operand has at most cudaDeviceGetTexture1DLinearMaxWidth(float4) texels (the
 *     per-format form of cudaDevAttrMaxTexture1DLinearWidth);
 *   - both objects are in the cache, or can be added to it (below).
 *   Otherwise the kernel runs rung 09's loads in every block: the same math in the same
 *   order, so the same floats, only without this rung's gain.
 *
 * How long a texture object lives: as long as the process
 *   A launch is asynchronous, and a captured one may be replayed at any later time. Destroying
 *   an object that a queued kernel or a graph may still fetch through is undefined, and nothing
 *   tells the launcher when that stops (it may not wait on a stream or an event; no event says
 *   when a graph's last replay ends). So no object is ever destroyed: they sit in a cache keyed
 *   by (device, base pointer, texels) under one mutex, and go with the CUDA context at exit.
 *   - a miss creates the object only if the cache has room and the stream is not capturing
 *     (creating one may allocate, which a launch must not do while its stream captures; a
 *     capture takes the objects already made, or the plain loads), in relaxed capture mode,
 *     so that a global-mode capture on another thread neither refuses nor is broken by it;
 *   - an object covers addresses, not an allocation: a pointer freed and allocated again with
 *     the same size reuses its object, which reads whatever is there now;
 *   - the cache holds 512 objects (TEX_CACHE_SIZE), all devices together; when it is full,
 *     operands not in it take the plain loads for the rest of the process.
 *
 * Bank conflicts (tests/test_banks.c): none, the layout is rung 09's.
 *
 * Goal and measurement
 *   Goal: ahead of rung 09 at 2048-8192. Every measured variant of this 128x128x8,
 *   256-thread, 128-register design (a K tile of 16, other register levels, other FFMA
 *   orders) stayed at 0.95-0.96x cuBLAS or below: more FFMAs per barrier and per LDS, i.e.
 *   larger tiles, close that gap (rung 11).
 *   Predicted before measuring: 0.98-1.03x rung 09 (about 0.9x cuBLAS at 4096); for the
 *   two copies of the loop, rung 09's speed +-1%.  Measured (H200, make all-bench: ratio to
 *   cuBLAS at 1024 / 2048 / 4096 / 8192): 0.668 / 0.958 / 0.959 / 0.969 against rung 09's 0.635
 *   / 0.943 / 0.945 / 0.953 in the same run, ahead by 1.4-6% (results/notes/step_10.md).
 *
 * Resources (ptxas -v): 128 registers, 16384 bytes smem, 0 spills; the texture copy of the K
 * loop is 1141 instructions per two tiles (sm_90), 1024 FFMA and four TLD.LZ among them.
 */
#define BM      128 /* rows of the C tile (and of the A tile) one block computes */
#define BN      128 /* cols of the C tile (and of the B tile) one block computes */
#define BK      8   /* K depth of one A tile and one B tile in shared memory */
#define TM      8   /* rows of C per thread */
#define TN      8   /* cols of C per thread */
#define THREADS ((BM / TM) * (BN / TN)) /* 256 threads = 8 warps, a 1-D block */

/* ==== Shared-memory layout ===================================================================
 * Plain C from here to the #ifndef below: tests/test_banks.c includes this part of the file
 * (with SGEMM_LAYOUT_ONLY defined) and replays every warp's shared-memory addresses. */
#ifndef __CUDACC__
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#endif

/* The 8 warps form a 4 x 2 grid over the C tile, each warp a WARP_M x WARP_N tile; a warp's
 * 32 lanes form a LANES_M x LANES_N grid over it. */
#define WARPS_N 2                               /* warps side by side along N */
#define WARP_M  (BM / (THREADS / 32 / WARPS_N)) /* 32 rows of C per warp */
#define WARP_N  (BN / WARPS_N)                  /* 64 cols of C per warp */
#define LANES_M 4
#define LANES_N 8

/* Where element (k, m) of the A tile and (k, n) of the B tile live, in floats from the start
 * of a_tile / b_tile.  A keeps rung 07's swizzle (bit 2 of k flips bit 4 of m): the
 * transposed store is unchanged and still needs it.  B needs none any more: the new
 * fragment loads below are conflict-free on a plain row. */
static __host__ __device__ inline int a_tile_offset(int k, int m)
{
    return k * BM + (m ^ ((k & 4) << 2));
}
static __host__ __device__ inline int b_tile_offset(int k, int n)
{
    return k * BN + n;
}

/* Copying in: thread tid reads one float4 of A (tile row a_load_row, k = a_load_col .. +3)
 * and one float4 of B (k = b_load_row, tile cols b_load_col .. +3) per K tile. */
static __host__ __device__ inline int a_load_row(unsigned tid)
{
    return tid / (BK / 4);
}
static __host__ __device__ inline int a_load_col(unsigned tid)
{
    return (tid % (BK / 4)) * 4;
}
static __host__ __device__ inline int b_load_row(unsigned tid)
{
    return tid / (BN / 4);
}
static __host__ __device__ inline int b_load_col(unsigned tid)
{
    return (tid % (BN / 4)) * 4;
}

/* Computing: thread tid owns tile rows frag_a_row(tid, h) + 0..3 and tile cols
 * frag_b_col(tid, h) + 0..3 for h = 0, 1: four 4x4 sub-tiles of C, 16 rows and 32 cols
 * apart, inside its warp's 32x64 tile.  Lane (lane_m, lane_n) of the 4 x 8 lane grid is
 *     lane_m = (lane / 2) % 4,   lane_n = (lane / 8) * 2 + lane % 2
 * so that the 8 lanes of one quarter-warp form a 4 x 2 block of the grid (the interleaving
 * of seed 000 and CUTLASS): per LDS.128 they read 4 distinct float4s of A, each shared by 2
 * lanes, and 2 of B, each shared by 4. */
static __host__ __device__ inline int frag_a_row(unsigned tid, int h)
{
    const unsigned warp_m = (tid / 32) / WARPS_N, lane_m = (tid % 32 / 2) % LANES_M;
    return warp_m * WARP_M + lane_m * 4 + h * (LANES_M * 4);
}
static __host__ __device__ inline int frag_b_col(unsigned tid, int h)
{
    const unsigned warp_n = (tid / 32) % WARPS_N, lane_n = (tid % 32 / 8) * 2 + tid % 2;
    return warp_n * WARP_N + lane_n * 4 + h * (LANES_N * 4);
}
/* ==== End of the shared-memory layout ======================================================= */

#ifndef SGEMM_LAYOUT_ONLY

#include "../common/step.h"
#include "../common/sgemm_common.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* p[0..3] as one 16-byte load when `vec` allows it and all four floats exist (count >= 4);
 * otherwise one load per float that exists (i < count), 0.0f for the rest (count <= 0: p is
 * never dereferenced). `vec` is the same for every thread (chosen at launch) and count < 4
 * happens only at the matrix edges, so almost every thread takes the 16-byte side. */
static __device__ __forceinline__ float4 load4(const float *p, int count, int vec)
{
    if (vec && count >= 4)
        return *(const float4 *)p;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (count > 0)
        v.x = p[0];
    if (count > 1)
        v.y = p[1];
    if (count > 2)
        v.z = p[2];
    if (count > 3)
        v.w = p[3];
    return v;
}

/* row[first .. first+3] := alpha*acc + beta*row[...] for the floats that exist (i < count);
 * beta == 0 never reads C. One 16-byte store (and load) when `vec` allows it and all four
 * exist, else one float at a time. */
static __device__ __forceinline__ void store4(float *row, int first, int count, int vec, float4 acc,
                                              float alpha, float beta)
{
    if (vec && count >= 4) {
        float4 *c = (float4 *)(row + first);
        if (beta == 0.0f) {
            *c = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
        } else {
            const float4 old = *c;
            *c = make_float4(alpha * acc.x + beta * old.x, alpha * acc.y + beta * old.y,
                             alpha * acc.z + beta * old.z, alpha * acc.w + beta * old.w);
        }
        return;
    }
    const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        if (j < count) {
            float *c = &row[first + j];
            *c = (beta == 0.0f) ? alpha * v[j] : alpha * v[j] + beta * *c;
        }
    }
}

/* Four floats of a tile in shared memory; the offset is a multiple of 4 (16-byte aligned). */
static __device__ __forceinline__ float4 lds4(const float *tile, int offset)
{
    return *(const float4 *)&tile[offset];
}

/* Registers -> shared memory, into one buffer: this thread's float4 of B as one STS.128, and
 * its float4 of A, k .. k+3 of one row m, transposed: four scalar stores into four rows of
 * the A tile, (k+j, m) = (k, m) + j*BM (the layout keeps that true; tests/test_banks.c
 * checks it). */
static __device__ __forceinline__ void store_tiles(float *a_buf, float *b_buf, float4 a_ld,
                                                   float4 b_ld, unsigned tid)
{
    float *a_dst = &a_buf[a_tile_offset(a_load_col(tid), a_load_row(tid))];
    a_dst[0 * BM] = a_ld.x;
    a_dst[1 * BM] = a_ld.y;
    a_dst[2 * BM] = a_ld.z;
    a_dst[3 * BM] = a_ld.w;
    *(float4 *)&b_buf[b_tile_offset(b_load_row(tid), b_load_col(tid))] = b_ld;
}

/* Shared memory -> registers: the thread's 8 rows of A and 8 cols of B at step k of one
 * buffer, two LDS.128 each. */
static __device__ __forceinline__ void load_frags(float frag_a[TM], float frag_b[TN],
                                                  const float *a_buf, const float *b_buf, int k,
                                                  unsigned tid)
{
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float4 a4 = lds4(a_buf, a_tile_offset(k, frag_a_row(tid, h)));
        const float4 b4 = lds4(b_buf, b_tile_offset(k, frag_b_col(tid, h)));
        frag_a[4 * h + 0] = a4.x;
        frag_a[4 * h + 1] = a4.y;
        frag_a[4 * h + 2] = a4.z;
        frag_a[4 * h + 3] = a4.w;
        frag_b[4 * h + 0] = b4.x;
        frag_b[4 * h + 1] = b4.y;
        frag_b[4 * h + 2] = b4.z;
        frag_b[4 * h + 3] = b4.w;
    }
}

/* The math of one K tile from one buffer: one outer product per k. The fragments of step k+1
 * load during step k; those of step 0 are loaded before the call. */
static __device__ __forceinline__ void tile_math(float acc[TM][TN], float frag_a[2][TM],
                                                 float frag_b[2][TN], const float *a_buf,
                                                 const float *b_buf, unsigned tid)
{
#pragma unroll
    for (int k = 0; k < BK; ++k) {
        if (k + 1 < BK)
            load_frags(frag_a[(k + 1) % 2], frag_b[(k + 1) % 2], a_buf, b_buf, k + 1, tid);
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                acc[i][j] += frag_a[k % 2][i] * frag_b[k % 2][j];
    }
}

/* The K loop of one block: adds the block's tile of A times B to acc.
 *
 * `fast` is a constant, 0 or 1, at each of the two places the kernel calls this function (it
 * is inlined at both, so the compiler builds two copies of the loop).  With fast = 1 every
 * load is a texture fetch, tex1Dfetch<float4>(), with no bounds test: the kernel takes that
 * copy only when the launcher bound textures to A and B and every fetch of the block is either
 * a whole float4 inside A and B or, for rows of A beyond M, past the end of A's texture, where
 * it returns zeros.  With fast = 0 the loads go through load4(), which tests the edges and the
 * alignment: rung 09's loop, unchanged. */
static __device__ __forceinline__ void k_loop(float acc[TM][TN], float (*a_tile)[BK * BM],
                                              float (*b_tile)[BK * BN], int M, int N, int K,
                                              const float *A, int lda, const float *B, int ldb,
                                              int vec_a, int vec_b, cudaTextureObject_t tex_a,
                                              cudaTextureObject_t tex_b, int block_row0,
                                              int block_col0, unsigned tid, const int fast)
{
    /* Copy-in sources, as offsets in floats from A and B, moved one tile along K per fetch.
     * They are 32-bit: a 64-bit pointer costs two registers, and this rung has none to spare
     * (see rung 09). Offsets that are read lie inside an operand, so below 2^31. A row of A
     * beyond M takes row M's offset, past the end of A: its texture returns zeros there, and
     * load4() reads nothing (count 0). The offset of a row of B beyond K may wrap (unsigned,
     * so defined); it is counted out, and a fast block has no such row. A texel index is the
     * float offset / 4 (the launcher binds textures only when lda and ldb are multiples of 4). */
    const int a_row = block_row0 + a_load_row(tid);
    unsigned a_off = (unsigned)(a_row < M ? a_row : M) * (unsigned)lda + a_load_col(tid);
    const int a_k_left = (a_row < M) ? K - a_load_col(tid) : 0; /* floats of A from a_off on */
    const int b_col = block_col0 + b_load_col(tid);
    unsigned b_off = (unsigned)b_load_row(tid) * (unsigned)ldb + (unsigned)b_col;
    const int b_k_left = K - b_load_row(tid); /* rows of B from b_off down */
    const int b_n_left = N - b_col;           /* floats of B's row from b_off on */

    /* Two sets of fragments: step k computes with set k % 2 while set (k+1) % 2 is loaded. */
    float frag_a[2][TM], frag_b[2][TN];

    /* Prologue: tile 0 into buffer 0, then the fragments of its step k = 0. Floats outside A
     * or B become 0.0f, so the math needs no bounds checks. */
    float4 a_ld = fast ? tex1Dfetch<float4>(tex_a, (int)(a_off / 4))
                       : load4(A + a_off, a_k_left, vec_a);
    float4 b_ld = fast ? tex1Dfetch<float4>(tex_b, (int)(b_off / 4))
                       : load4(B + b_off, (b_k_left > 0) ? b_n_left : 0, vec_b);
    store_tiles(a_tile[0], b_tile[0], a_ld, b_ld, tid);
    __syncthreads();
    load_frags(frag_a[0], frag_b[0], a_tile[0], b_tile[0], 0, tid);

    /* Iteration t computes tile t from buffer t % 2 and refills buffer (t+1) % 2 with tile
     * t+1. The last iteration has no tile t+1: it fetches its own tile again (in bounds, never
     * used), so that every iteration runs the same code, with no test on the way. */
    const int tiles = (K + BK - 1) / BK;
    /* Unrolled by two, so that in each copy of the body the buffer numbers cur and cur ^ 1 are
     * constants: every shared-memory address is then a register the thread keeps plus an
     * immediate offset. Rolled, the compiler rebuilt both buffers' addresses every tile, at
     * the 128-register limit. */
#pragma unroll 2
    for (int t = 0; t < tiles; ++t) {
        const int cur = t % 2;            /* the buffer this iteration computes from */
        const int next = (t + 1 < tiles); /* 0 on the last tile: fetch tile t again */
        const int k0 = (t + next) * BK;   /* first k of the tile fetched now */
        a_off += next ? BK : 0;
        b_off += next ? BK * (unsigned)ldb : 0;

        /* Global -> registers for tile t+1, issued now: the loads are in flight during the
         * 512 FMAs of tile t, and land in shared memory only after them. */
        a_ld = fast ? tex1Dfetch<float4>(tex_a, (int)(a_off / 4))
                    : load4(A + a_off, a_k_left - k0, vec_a);
        b_ld = fast ? tex1Dfetch<float4>(tex_b, (int)(b_off / 4))
                    : load4(B + b_off, (b_k_left - k0 > 0) ? b_n_left : 0, vec_b);

        tile_math(acc, frag_a, frag_b, a_tile[cur], b_tile[cur], tid);

        /* Registers -> the other buffer, then one barrier. It is safe to overwrite buffer
         * cur^1 without a barrier before: it was last read in iteration t-1, and every thread
         * passed iteration t-1's barrier after those reads. The barrier below makes tile t+1
         * visible before anyone reads it, and nobody writes buffer cur again before passing
         * it, i.e. before every thread is done with tile t. */
        store_tiles(a_tile[cur ^ 1], b_tile[cur ^ 1], a_ld, b_ld, tid);
        __syncthreads();
        load_frags(frag_a[0], frag_b[0], a_tile[cur ^ 1], b_tile[cur ^ 1], 0, tid);
    }
}

/* __launch_bounds__(THREADS, 2): two blocks per SM, so ptxas must fit a thread in
 * 65536 / (2 * 256) = 128 registers. */
static __global__ void __launch_bounds__(THREADS, 2)
    sgemm_texld(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc, int vec_a, int vec_b, int vec_c, int use_tex,
                cudaTextureObject_t tex_a, cudaTextureObject_t tex_b)
{
    /* Two buffers of each tile: the block computes from one while the other is refilled.
     * a_tile holds A transposed (k-major); 16-byte alignment makes every float4 access legal. */
    __shared__ __align__(16) float a_tile[2][BK * BM];
    __shared__ __align__(16) float b_tile[2][BK * BN];

    const unsigned tid = threadIdx.x;
    const int block_row0 = blockIdx.y * BM;
    const int block_col0 = blockIdx.x * BN;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;

    /* The textures cover every fetch of this block when the launcher bound them (use_tex: A
     * and B allow 16-byte loads and have texture-aligned bases), K is a multiple of BK (no
     * partial tile) and the block's columns are all inside N (no float4 of B crosses N, where
     * a fetch could read floats past the end of a row). Rows beyond M need no test: their
     * fetches land past the end of A's texture and return zeros. The condition is the same
     * for the whole block, so its barriers stay uniform. */
    const int fast = use_tex && K % BK == 0 && block_col0 + BN <= N;
    if (fast)
        k_loop(acc, a_tile, b_tile, M, N, K, A, lda, B, ldb, vec_a, vec_b, tex_a, tex_b,
               block_row0, block_col0, tid, 1);
    else
        k_loop(acc, a_tile, b_tile, M, N, K, A, lda, B, ldb, vec_a, vec_b, tex_a, tex_b,
               block_row0, block_col0, tid, 0);

    /* Epilogue: acc[4*hm + i][4*hn + j] is C(row0(hm) + i, col0(hn) + j). Each row of four is
     * one 16-byte store (and, for beta != 0, one 16-byte load); rows outside C are skipped. */
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = block_row0 + frag_a_row(tid, i / 4) + i % 4;
        if (row < M) {
            float *c_row = C + (size_t)row * ldc;
#pragma unroll
            for (int hn = 0; hn < 2; ++hn) {
                const int col = block_col0 + frag_b_col(tid, hn);
                const float4 acc4 = make_float4(acc[i][4 * hn + 0], acc[i][4 * hn + 1],
                                                acc[i][4 * hn + 2], acc[i][4 * hn + 3]);
                store4(c_row, col, N - col, vec_c, acc4, alpha, beta);
            }
        }
    }
}

static int ceil_div(int a, int b)
{
    return (a + b - 1) / b;
}

/* ---- Texture objects --------------------------------------------------------------------------
 * Made on first use and never destroyed (the header says why). One mutex guards the cache from
 * lookup to insertion; an entry never changes once made, so its object is used outside it. */
#define MAX_DEVICES    64
#define TEX_CACHE_SIZE 512 /* objects, all devices together; when full: plain loads */

struct tex_entry {
    int device;        /* the device the object was made on, */
    const float *base; /* the operand's first float */
    size_t texels;     /* and the float4s it covers */
    cudaTextureObject_t tex;
};

static pthread_mutex_t tex_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tex_entry tex_cache[TEX_CACHE_SIZE];
static int tex_count; /* entries made, oldest first */
/* Per device, asked once (0: not yet): the alignment a texture's base needs, in bytes, and the
 * most float4 texels a 1-D linear texture may have. */
static size_t tex_alignment[MAX_DEVICES], tex_max_texels[MAX_DEVICES];

/* With tex_lock held: *tex is the object of `texels` float4s at `base` on `device`, and *found
 * 1, when the cache has it, or when may_create, the cache has room and the operand can be a
 * 1-D linear texture (a base aligned to cudaDevAttrTextureAlignment, stricter than a float4
 * load's 16 bytes; no more texels than cudaDeviceGetTexture1DLinearMaxWidth allows): then it
 * is made now. Otherwise *found is 0. */
static cudaError_t tex_object(int device, const float *base, size_t texels, int may_create,
                              cudaTextureObject_t *tex, int *found)
{
    *found = 0;
    for (int i = tex_count - 1; i >= 0; --i) { /* newest first: calls repeat recent operands */
        const struct tex_entry *e = &tex_cache[i];
        if (e->base == base && e->texels == texels && e->device == device) {
            *tex = e->tex;
            *found = 1;
            return cudaSuccess;
        }
    }
    if (!may_create || tex_count == TEX_CACHE_SIZE)
        return cudaSuccess;

    /* This thread in relaxed capture mode while the object is made: a capture in global mode on
     * another thread could otherwise refuse these calls, and be invalidated by them. */
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaError_t err = cudaThreadExchangeStreamCaptureMode(&mode);
    if (err != cudaSuccess)
        return err;
    const cudaChannelFormatDesc format =
        cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindFloat); /* float4 */
    if (tex_alignment[device] == 0) {
        int alignment = 0;
        err = cudaDeviceGetAttribute(&alignment, cudaDevAttrTextureAlignment, device);
        if (err == cudaSuccess)
            err = cudaDeviceGetTexture1DLinearMaxWidth(&tex_max_texels[device], &format, device);
        tex_alignment[device] = (err == cudaSuccess && alignment > 0) ? (size_t)alignment : 0;
    }
    struct tex_entry *e = &tex_cache[tex_count];
    if (err == cudaSuccess && tex_alignment[device] != 0 &&
        (uintptr_t)base % tex_alignment[device] == 0 && texels >= 1 &&
        texels <= tex_max_texels[device]) {
        struct cudaResourceDesc res;
        memset(&res, 0, sizeof res);
        res.resType = cudaResourceTypeLinear;
        res.res.linear.devPtr = (void *)base;
        res.res.linear.desc = format;
        res.res.linear.sizeInBytes = texels * sizeof(float4);
        struct cudaTextureDesc desc;
        memset(&desc, 0, sizeof desc);
        desc.readMode = cudaReadModeElementType; /* the floats as stored */
        desc.normalizedCoords = 0;               /* integer texel indices */
        err = cudaCreateTextureObject(&e->tex, &res, &desc, NULL);
        if (err == cudaSuccess) {
            e->device = device;
            e->base = base;
            e->texels = texels;
            ++tex_count;
            *tex = e->tex;
            *found = 1;
        }
    }
    const cudaError_t restored = cudaThreadExchangeStreamCaptureMode(&mode);
    return (err != cudaSuccess) ? err : restored;
}

/* Texture objects over a slab of A (a_texels float4s at a_slab) and over B: both (*use_tex 1)
 * or neither. None is made while `stream` is capturing. */
static cudaError_t tex_objects(const float *a_slab, size_t a_texels, const float *B,
                               size_t b_texels, cudaStream_t stream, cudaTextureObject_t *tex_a,
                               cudaTextureObject_t *tex_b, int *use_tex)
{
    int device = 0, have_a = 0, have_b = 0;
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = cudaStreamIsCapturing(stream, &capture);
    if (err == cudaSuccess && device >= 0 && device < MAX_DEVICES) {
        const int may_create = (capture == cudaStreamCaptureStatusNone);
        pthread_mutex_lock(&tex_lock);
        err = tex_object(device, B, b_texels, may_create, tex_b, &have_b);
        if (err == cudaSuccess && have_b)
            err = tex_object(device, a_slab, a_texels, may_create, tex_a, &have_a);
        pthread_mutex_unlock(&tex_lock);
    }
    *use_tex = have_a && have_b;
    return err;
}

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    cudaError_t err = sgemm_prologue(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, &done);
    if (err != cudaSuccess || done)
        return err;

    /* 16-byte accesses need a 16-byte aligned base and rows a multiple of 4 floats apart;
     * otherwise the kernel reads (writes) that operand one float at a time. A slab's base,
     * A + row0*lda, keeps A's alignment when lda % 4 == 0. Textures need the same, and the
     * kernel fetches through them only when K is a multiple of BK (see the kernel). */
    const int vec_a = (lda % 4 == 0) && sgemm_aligned16(A);
    const int vec_b = (ldb % 4 == 0) && sgemm_aligned16(B);
    const int vec_c = (ldc % 4 == 0) && sgemm_aligned16(C);
    const int want_tex = vec_a && vec_b && K % BK == 0;

    /* gridDim.y is capped at 65535: taller matrices run as slabs of rows. */
    const int slab_rows = SGEMM_MAX_GRID_Y * BM;
    for (int row0 = 0; row0 < M; row0 += slab_rows) {
        const int rows = (M - row0 < slab_rows) ? M - row0 : slab_rows;
        const float *a_slab = A + (size_t)row0 * lda;
        /* A texture covers the operand's whole float4s, floor(span / 4), never a float past
         * its end; span = (rows-1)*ld + cols floats. */
        cudaTextureObject_t tex_a = 0, tex_b = 0;
        int use_tex = 0;
        if (want_tex) {
            err = tex_objects(a_slab, ((size_t)(rows - 1) * lda + K) / 4, B,
                              ((size_t)(K - 1) * ldb + N) / 4, stream, &tex_a, &tex_b, &use_tex);
            if (err != cudaSuccess)
                return err;
        }
        const dim3 grid(ceil_div(N, BN), ceil_div(rows, BM));
        sgemm_texld<<<grid, THREADS, 0, stream>>>(rows, N, K, alpha, a_slab, lda, B, ldb, beta,
                                                  C + (size_t)row0 * ldc, ldc, vec_a, vec_b, vec_c,
                                                  use_tex, tex_a, tex_b);
        err = cudaGetLastError();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" const struct step step_10 = {
    10, "texld", "texture loads: A and B fetched through 1-D texture objects", 0, launch,
};

#endif /* SGEMM_LAYOUT_ONLY */
