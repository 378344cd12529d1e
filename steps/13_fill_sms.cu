/*
 * Rung 13 - filling every SM: the tile shape by size, rasterization, split-K and stream-K.
 *
 * What changes from rung 12
 *   Rung 12's kernel is fast per tile, but a GPU of S SMs runs one 128x256 tile per SM, and a
 *   C of T tiles keeps every SM busy only when T is a multiple of S and a few times larger.
 *   At 1024^2 there are 32 tiles for 132 SMs (100 SMs idle); at 3072^2 288 = 2.18 rounds (the
 *   third round 82% idle); at 256x256x65536 two tiles hold all of the work. This rung keeps
 *   rung 12's K loop (the same SASS in the whole-tile kernel) and changes which blocks run:
 *   1. Rasterization (tile_coords()): blocks walk 8 tile rows down a column before moving
 *      right, so the blocks resident together share A row panels and B column panels in L2.
 *   2. A second tile shape, 64x128 (4 warps of 32x64, 8x8 per thread, 4 stages, up to 4
 *      blocks per SM), chosen by a cost model in rounds of SMs (choose_plan()) where it fills
 *      the SMs better than 128x256.
 *   3. Split-K where even the small tiles are too few (512^2: 32 tiles): each tile's K loop is
 *      cut over s = 2..8 blocks (split_slices()); each block leaves its partial sums in a slot
 *      of a workspace, counts itself on an atomic, and the last one adds the slots in slice
 *      order, 0 first (split_finish()): the same floats on every run.
 *   4. Split-K on the large tile where K is long and the large tiles fill at most half a round
 *      (large_split()): block (x, y) computes tile x over K slice y with the whole-tile K loop,
 *      into slab y of the workspace, and a small kernel adds the slabs in order into C.
 *   5. Stream-K where 128x256 tiles fill some rounds and part of one more: the whole rounds but
 *      one run as whole tiles, the rest as K tiles shared out evenly over one block per SM (a
 *      cooperative launch); a tile shared by two blocks is still summed k in order.
 *   The SM count comes from the device, asked once per device.
 *
 * Why the hardware rewards it
 *   Time is set by the busiest SM. An idle SM is lost throughput; an SM with one 64x128 block
 *   (4 warps, one per scheduler) has no other warp to issue while one waits. The 64x128 tile
 *   also tops out lower: its 8x8 thread tile reads shared memory at 1 B per FMA (derived); one
 *   such block per SM ran at ~68% of the FFMA peak where a 128x256 block runs at ~83% (H100).
 *   Split-K trades a few bytes (each slice's partial sums through L2) for more, shorter
 *   blocks, so every SM has work; the large-tile split keeps the 128x256 tile's speed where K
 *   is long; stream-K trades a little per-tile speed (a second K-loop entry, a partial sum
 *   through L2) for a last round that ends together. Accuracy: a split sum adds s partial sums
 *   of K/s terms each, so the rounding error of a long K shrinks with the slices. Measured
 *   against FP64 (H100, results/nvidia-h100-80gb-hbm3/bench.csv): at 256^3 (split-K) an rms
 *   error of 1.2e-7 where rung 12, one sum over K, has 2.9e-7; at 1280^3 4.5e-7 where a
 *   sequential loop has 7.1e-7.
 *
 * The cost models (host code): rounds of whole tiles of each shape and stream-K's shared
 * round, in hundredths of a 128x256 tile (choose_plan()); blocks on the busiest SM times their
 * K tiles plus a fixed cost per block (split_slices(), large_split()). The constants were
 * fitted on an H200 and an H100 with every plan forced at many sizes (results/notes/step_13.md).
 *
 * The launch contract (common/step.h)
 *   The launcher never waits for the GPU. Stream-K and split-K need a workspace: one per
 *   (device, stream) from common/sgemm_workspace.h, made by the first launch on that stream
 *   that wants one, never freed (a graph may use it at any later time), never made while the
 *   stream is capturing. A capturing call without one runs whole tiles: stream-K's floats are
 *   those of whole tiles; a split shape is rounded like an unsplit sum, still correct.
 *
 * Edges and alignment: as rung 11; a slice starts at a whole K tile (only tile 0 is partial);
 * a stream-K piece that starts mid-tile continues its neighbour's sums after an acquire of its
 * flag; if the GPU cannot hold every stream-K block at once, the launcher runs whole tiles.
 *
 * Predicted (H100, ratio to cuBLAS): 1024 ~1.15 (128 small tiles), 3072 +5-10% (stream-K or
 * small tiles in full rounds), 512^2 and 768^2 >= 1.0 (split-K), deep K (256x256x65536)
 * 0.44 -> ~0.95 with the large-tile split.
 * Measured (H100, 2026-11-25, ratio to cuBLAS): 1.134 / 1.042 / 1.107 / 1.028 / 1.050 at 1024 /
 * 2048 / 3072 / 4096 / 8192; the shape set 0.87-1.13: 256x256x65536 0.44 -> 0.983 and
 * 1024x1024x16384 0.84 -> 0.945 with the large-tile split, 4096x128x4096 0.867 (one row of
 * 64x128 tiles) the furthest behind. results/notes/step_13.md has every number.
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/sgemm_workspace.h"
#include "../common/plan_costs.h"
#include "../common/ffma_tile.cuh" /* rungs 11-12: tile, copies, fragments, epilogue, order */

/* ---- The tiles ----------------------------------------------------------------------------- */
#define S_WARPS_N 2 /* NEW: 64x128, 4 warps (2 x 2) of 32x64, 8x8 of C per thread, 4 blocks/SM */
#define S_SUB_M   2
#define S_STAGES  4 /* a lone block has one warp per scheduler: a stage more hides a late copy */
#define S_BM      (WARPS_M * LANES_M * SUB * S_SUB_M) /* 64 */
#define S_BN      (S_WARPS_N * WARP_N)                /* 128 */
#define S_THREADS (32 * WARPS_M * S_WARPS_N)          /* 128 */
#define RASTER_GROUP       8 /* tile rows walked down a column before moving right */
#define SPLIT_MAX          8 /* slices per small tile, at most */
#define SPLIT_MIN_KT       4 /* K tiles per slice, at least */
/* One pipeline stage: a_tile[BK][BM + A_PAD] (A transposed) then b_tile[BK][BN]. */

struct stream_k { /* NEW: the stream-K schedule (see "Stream-K" below) */
    int dp_tiles;     /* tiles before the shared ones: the whole-tile kernel does them */
    int sk_tiles;     /* the tiles after them, whose K tiles are shared out evenly */
    float4 *partials; /* one slot of bm*bn floats per block */
    unsigned *flags;  /* flags[w] != 0: slot w holds block w's part of a tile, for block w+1 */
};
struct split_k { /* NEW: split-K: slice s computes K tiles [s*kt/slices, (s+1)*kt/slices) */
    int slices;       /* blocks per tile, >= 2 */
    int slice;        /* this block's slice (set in the kernel) */
    float4 *partials; /* slices slots of bm*bn floats per tile */
    unsigned *counts; /* counts[t]: slices of tile t done; the last one resets it to 0 */
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 /* sm_80+ device code (cp.async) */

/* NEW: tile number -> (tile_m, tile_n), RASTER_GROUP tile rows at a time, column by column: the
 * blocks running together share a few row panels of A and column panels of B, kept in L2. */
static __device__ __forceinline__ void tile_coords(int tile, int tiles_m, int tiles_n, int *tile_m,
                                                   int *tile_n)
{
    const int per_group = RASTER_GROUP * tiles_n;
    const int group = tile / per_group;
    const int in_group = tile - group * per_group;
    const int group_m0 = group * RASTER_GROUP;
    const int group_rows = min(tiles_m - group_m0, RASTER_GROUP);
    *tile_m = group_m0 + in_group % group_rows;
    *tile_n = in_group / group_rows;
}

/* A block's raw sums to / from a workspace slot (load: acc = or += it, add 0 / 1): thread tid's
 * float4 v at v*threads + tid (a warp: 512 contiguous bytes). .cg: L2 only (L1 may be stale). */
static __device__ __forceinline__ void store_partial(struct shape sh, float4 *slot,
                                                     float acc[TM_MAX][TN])
{
    const int threads = 32 * WARPS_M * sh.warps_n, tm = sh.sub_m * SUB;
    float4 *mine = slot + threadIdx.x;
#pragma unroll
    for (int i = 0; i < tm; ++i)
#pragma unroll
        for (int q = 0; q < SUB_N; ++q)
            __stcg(&mine[(i * SUB_N + q) * threads],
                   make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2],
                               acc[i][4 * q + 3]));
}
static __device__ __forceinline__ void load_partial(struct shape sh, const float4 *slot,
                                                    float acc[TM_MAX][TN], int add)
{
    const int threads = 32 * WARPS_M * sh.warps_n, tm = sh.sub_m * SUB;
    const float4 *mine = slot + threadIdx.x;
#pragma unroll
    for (int i = 0; i < tm; ++i)
#pragma unroll
        for (int q = 0; q < SUB_N; ++q) {
            const float4 v = __ldcg(&mine[(i * SUB_N + q) * threads]);
            acc[i][4 * q] = (add ? acc[i][4 * q] : 0.0f) + v.x;
            acc[i][4 * q + 1] = (add ? acc[i][4 * q + 1] : 0.0f) + v.y;
            acc[i][4 * q + 2] = (add ? acc[i][4 * q + 2] : 0.0f) + v.z;
            acc[i][4 * q + 3] = (add ? acc[i][4 * q + 3] : 0.0f) + v.w;
        }
}

/* Raise a flag once every thread's stores before the call are visible to the whole GPU
 * (fence, barrier, then a release by one thread); wait for one (an acquire by one thread,
 * then a barrier). The waiter clears the flag, so the next launch finds the workspace clean. */
static __device__ __forceinline__ void raise_flag(unsigned *flag)
{
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(1u) : "memory");
}
static __device__ __forceinline__ void wait_flag(unsigned *flag)
{
    if (threadIdx.x == 0) {
        unsigned up = 0;
        for (;;) {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(up) : "l"(flag) : "memory");
            if (up)
                break;
            __nanosleep(256);
        }
        *(volatile unsigned *)flag = 0u;
    }
    __syncthreads();
}

/* ---- Split-K, slices meeting in global memory -----------------------------------------------
 * Each slice stores its raw accumulators in its own slot, then counts itself done on the
 * tile's counter (atomicAdd, after a fence). The last slice to count adds the slots up in
 * slice order, 0 first, and writes C: the same floats whichever slice ends last. */
static __device__ __forceinline__ void split_finish(struct shape sh, const struct gemm_args *g,
                                                    const struct split_k *sp, int tile, int tile_m,
                                                    int tile_n, int row0, int col0,
                                                    float acc[TM_MAX][TN])
{
    __shared__ int is_last;
    const size_t slot_f4 = (size_t)(sh.sub_m * SUB * TN / 4) * (32 * WARPS_M * sh.warps_n);
    const float4 *slots = sp->partials + (size_t)tile * sp->slices * slot_f4;
    store_partial(sh, sp->partials + ((size_t)tile * sp->slices + sp->slice) * slot_f4, acc);
    __threadfence(); /* each thread's stores reach L2 (visible GPU-wide) before the count */
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned done = atomicAdd(&sp->counts[tile], 1u);
        is_last = (done == (unsigned)sp->slices - 1u);
        if (is_last)
            sp->counts[tile] = 0u; /* every slice has counted: clean for the next launch */
    }
    __syncthreads();
    if (!is_last)
        return;
    __threadfence(); /* the other slices' stores, counted before ours, are read after this */
    load_partial(sh, slots, acc, 0);
    for (int s = 1; s < sp->slices; ++s)
        load_partial(sh, slots + (size_t)s * slot_f4, acc, 1);
    store_c(sh, g, tile_m, tile_n, row0, col0, acc);
}

/* K tiles [j0, j1) of C tile `tile` in registers, then out: C := alpha*acc + beta*C, or (out_slot:
 * stream-K) the raw sums to a slot, raising out_flag, or (split) the tile's slice, added up with
 * the others. The sum starts from zero, or (init_slot: stream-K) from another block's partial
 * sum, read once init_flag is up, after the first copies are on their way. K tile 0 is the
 * partial one (k_first = K - 8*kt in (-8, 0], slots k < 0 zero-filled): a range from j0 >= 1 has
 * only full K tiles. The caller puts a barrier between calls. */
static __device__ __forceinline__ void tile_product(struct shape sh, const struct gemm_args *g,
                                                    int tile, int j0, int j1,
                                                    const float4 *init_slot, unsigned *init_flag,
                                                    float4 *out_slot, unsigned *out_flag,
                                                    const struct split_k *split)
{
    const int threads = 32 * WARPS_M * sh.warps_n;
    const int bm = WARPS_M * LANES_M * SUB * sh.sub_m;
    const int bn = sh.warps_n * WARP_N;
    const int a_ld = bm + A_PAD;
    const int stages = sh.stages, b16 = sh.b16;
    const int tm = sh.sub_m * SUB;
    extern __shared__ float4 smem_f4[]; /* float4: the stages start 16-byte aligned */
    float *smem = (float *)smem_f4;
    const unsigned smem_addr = (unsigned)__cvta_generic_to_shared(smem);
    int tile_m, tile_n;
    tile_coords(tile, (g->M - 1) / bm + 1, (g->N - 1) / bn + 1, &tile_m, &tile_n);
    const int rows_left = g->M - tile_m * bm; /* >= 1: rows of C in this tile (if < bm) */
    const int cols_left = g->N - tile_n * bn; /* >= 1 */
    const int tid = threadIdx.x;
    /* Copy plan (rung 11): rows below M, cols right of N copy 0 bytes from inside the operand */
    struct copy_plan p;
    const int a_row = tid / BK, a_kk = tid % BK;
    const float *a_row_ptr[A_ROWS]; /* A[row][0] of each of this thread's rows */
#pragma unroll
    for (int i = 0; i < A_ROWS; ++i) {
        const int row = a_row + i * A_ROW_STEP(threads);
        const int inside = row < rows_left;
        a_row_ptr[i] = g->A + (size_t)(tile_m * bm + (inside ? row : 0)) * g->lda;
        p.a_bytes[i] = inside ? 4 : 0;
    }
    p.a_dst = smem_addr + 4u * (unsigned)(a_kk * a_ld + a_row);
    int b_col, b_kr;
    if (b16) {
        b_col = 4 * (tid % (bn / 4));
        b_kr = tid / (bn / 4);
        p.b_bytes = b_col < cols_left; /* 1: copy, 0: zero-fill */
    } else {
        b_col = tid % bn;
        b_kr = tid / bn; /* 0: bn == threads in both tiles */
        p.b_bytes = b_col < cols_left ? 4 : 0;
    }
    const float *b_col_ptr = g->B + (size_t)tile_n * bn + (p.b_bytes ? b_col : 0);
    p.b_dst = smem_addr + 4u * (unsigned)(BK * a_ld + b_kr * bn + b_col);
    p.b_row_gap = (long long)B_ROW_STEP(b16, bn, threads) * g->ldb;
    p.b_tile_step = (long long)BK * g->ldb;
    int row0, col0;
    thread_patch(sh, &row0, &col0);
    const float *a_frag = smem + row0;             /* + stage + k*a_ld + 16*s */
    const float *b_frag = smem + BK * a_ld + col0; /* + stage + k*bn + 32*q */
    float acc[TM_MAX][TN];
    if (!init_slot) {
#pragma unroll
        for (int i = 0; i < tm; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                acc[i][j] = 0.0f;
    }
    float frag_a[2][TM_MAX], frag_b[2][TN]; /* [k & 1]: one in use, one being loaded */
    const int K = g->K;
    const int k_first = (K % BK == 0) ? 0 : K % BK - BK;
    const unsigned stage_bytes = 4u * (unsigned)STAGE_FLOATS(bm, bn);
    const unsigned last_stage = (unsigned)(stages - 1) * stage_bytes;
    /* ---- prologue: K tiles j0 .. j0+stages-2 in flight, one commit group per tile ---- */
    if (j0 == 0) {
        /* Tile 0 by hand: a slot with k < 0 copies 0 bytes from a pointer clamped to k = 0. */
        const int k = k_first + a_kk;
#pragma unroll
        for (int i = 0; i < A_ROWS; ++i) {
            cp_async_4(p.a_dst + 4u * (unsigned)(i * A_ROW_STEP(threads)),
                       a_row_ptr[i] + max(k, 0), k >= 0 ? p.a_bytes[i] : 0);
            p.a_src[i] = a_row_ptr[i] + (k + BK); /* tile 1: k + 8 >= 1 */
        }
#pragma unroll
        for (int j = 0; j < B_LOADS(b16, bn, threads); ++j) {
            const int kb = k_first + b_kr + j * B_ROW_STEP(b16, bn, threads);
            const unsigned dst = p.b_dst + 4u * (unsigned)(j * B_ROW_STEP(b16, bn, threads) * bn);
            const float *src = b_col_ptr + (long long)max(kb, 0) * g->ldb;
            if (b16)
                cp_async_16(dst, src, kb >= 0 ? p.b_bytes : 0); /* k < 0: zero-fill */
            else
                cp_async_4(dst, src, kb >= 0 ? p.b_bytes : 0);
        }
        p.b_src = b_col_ptr + (long long)(k_first + BK + b_kr) * g->ldb; /* tile 1 */
    } else {
        /* NEW: a later start (a slice, a stream-K piece): tile j0 is full, k = k_first + 8*j0 */
        const long long k0 = k_first + (long long)BK * j0;
#pragma unroll
        for (int i = 0; i < A_ROWS; ++i)
            p.a_src[i] = a_row_ptr[i] + (k0 + a_kk);
        p.b_src = b_col_ptr + (k0 + b_kr) * g->ldb;
        copy_tile(&p, 0u, bn, threads, b16);
    }
    cp_async_commit();
#pragma unroll
    for (int s = 1; s < stages - 1; ++s) {
        if (j0 + s < j1)
            copy_tile(&p, (unsigned)s * stage_bytes, bn, threads, b16);
        cp_async_commit(); /* an empty group when the range is short: the counting stays uniform */
    }
    cp_async_wait(stages - 2);
    __syncthreads();
    load_frags(frag_a[0], frag_b[0], a_frag, b_frag, sh.sub_m, sh.sub_n);
    if (init_slot) {
        wait_flag(init_flag);
        load_partial(sh, init_slot, acc, 0);
    }
    unsigned read_stage = 0;           /* byte offset of the stage holding tile t */
    unsigned write_stage = last_stage; /* byte offset of the stage receiving tile t+stages-1 */
    for (int t = j0; t < j1; ++t) {
        if (t + stages - 1 < j1)
            copy_tile(&p, write_stage, bn, threads, b16);
        cp_async_commit();
        write_stage = (write_stage == last_stage) ? 0u : write_stage + stage_bytes;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int cur = k % 2, nxt = cur ^ 1;
            int next_k = k + 1;
            if (k == BK - 1) {
                cp_async_wait(stages - 2);
                __syncthreads();
                read_stage = (read_stage == last_stage) ? 0u : read_stage + stage_bytes;
                next_k = 0;
            }
            const float *a_k = (const float *)((const char *)a_frag + read_stage) + next_k * a_ld;
            const float *b_k = (const float *)((const char *)b_frag + read_stage) + next_k * bn;
            load_frags(frag_a[nxt], frag_b[nxt], a_k, b_k, sh.sub_m, sh.sub_n);
            if (tm == TM_MAX) { /* FFMA order (rung 12): measured here, serpentine below */
#define X(i, j) acc[i][j] = fmaf(frag_a[cur][i], frag_b[cur][j], acc[i][j]);
                FFMA_ORDER_16x8
#undef X
            } else
#pragma unroll
            for (int j = 0; j < TN; ++j)
#pragma unroll
                for (int r = 0; r < tm; ++r) {
                    const int i = (j % 2) ? tm - 1 - r : r;
                    acc[i][j] = fmaf(frag_a[cur][i], frag_b[cur][j], acc[i][j]);
                }
        }
    }
    cp_async_wait_all(); /* only empty groups can be left; leave nothing in flight anyway */
    if (out_slot) {
        store_partial(sh, out_slot, acc);
        raise_flag(out_flag);
    } else if (split) {
        split_finish(sh, g, split, tile, tile_m, tile_n, row0, col0, acc);
    } else {
        store_c(sh, g, tile_m, tile_n, row0, col0, acc);
    }
}

/* ---- Stream-K: sharing the last tiles' K iterations out evenly -----------------------------
 * W blocks resident (one per SM), T tiles: whole tiles leave T % W SMs busy in the last round.
 * Tiles [0, dp_tiles), whole rounds but one, run as whole tiles; the sk_tiles = W + T % W after
 * them go to exactly W blocks, each an equal share of their K tiles in a row (kt .. 2*kt-1: the
 * end of one tile, at most one whole tile, the start of another). A tile shared by blocks w and
 * w+1 still adds k = 0, 1, ... in order: w computes the start FIRST and leaves its raw sums in
 * slot w (flag w), w+1 the rest LAST from those sums: the floats of a whole tile. w+1 waits on
 * w: safe only if both are resident, so the launch is cooperative. */
static __device__ __forceinline__ void stream_k_piece(struct shape sh, const struct gemm_args *g,
                                                      const struct stream_k *sk, int tile, int j0,
                                                      int j1, int kt)
{
    const int w = blockIdx.x;
    const size_t slot_f4 = (size_t)(sh.sub_m * SUB * TN / 4) * (32 * WARPS_M * sh.warps_n);
    tile_product(
        sh, g, sk->dp_tiles + tile, j0, j1,
        j0 > 0 ? sk->partials + (size_t)(w - 1) * slot_f4 : NULL, j0 > 0 ? &sk->flags[w - 1] : NULL,
        j1 < kt ? sk->partials + (size_t)w * slot_f4 : NULL, j1 < kt ? &sk->flags[w] : NULL, NULL);
}

/* Block w's share, as (at most) three straight pieces, not a loop: with a loop around the K
 * loop ptxas allocated the registers differently and the kernel ran 2-5% slower. */
static __device__ __forceinline__ void stream_k_body(struct shape sh, const struct gemm_args *g,
                                                     const struct stream_k *sk)
{
    const int kt = (g->K - 1) / BK + 1; /* K tiles per C tile */
    const long long total = (long long)sk->sk_tiles * kt;
    const long long begin = total * blockIdx.x / gridDim.x;
    const long long end = total * (blockIdx.x + 1) / gridDim.x;
    const int tf = (int)(begin / kt), tl = (int)((end - 1) / kt);
    const int tf_j0 = (int)(begin - (long long)tf * kt); /* tf's first K tile in the share */
    const int tl_j1 = (int)(end - (long long)tl * kt);   /* tl's K tiles in the share */
    stream_k_piece(sh, g, sk, tl, tl == tf ? tf_j0 : 0, tl_j1, kt); /* first tl's start for w+1 */
    if (tl - tf == 2) { /* ... then a whole tile between, if any, ... */
        __syncthreads();
        stream_k_piece(sh, g, sk, tf + 1, 0, kt, kt);
    }
    if (tl > tf) { /* ... and last the piece that continues block w-1's (long done) sums. */
        __syncthreads();
        stream_k_piece(sh, g, sk, tf, tf_j0, kt, kt);
    }
}

#endif /* sm_80+ device code */

/* ---- The kernels, templates over tile shape and B's copy; they trap below sm_80 (never run) */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define HAS_CP_ASYNC 1
#else
#define HAS_CP_ASYNC 0
#endif

template <int WARPS_N_, int SUB_M_, int STAGES_, int B16, int MIN_BLOCKS> /* block b: C tile b */
static __global__ void __launch_bounds__(32 * WARPS_M * WARPS_N_, MIN_BLOCKS)
    sgemm_whole(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc)
{
#if HAS_CP_ASYNC
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const struct shape sh = {WARPS_N_, SUB_M_, STAGES_, B16, SUB_N};
    tile_product(sh, &g, (int)blockIdx.x, 0, (g.K - 1) / BK + 1, NULL, NULL, NULL, NULL, NULL);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

/* Split-K on the large tile: block (x, y) computes tile x over K slice y into slab y of the
 * workspace (alpha 1, beta 0), whole-tile K loop; sgemm_sum_slices() adds the slabs in order. */
template <int B16>
static __global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_slices(int M, int N, int K, const float *A, int lda, const float *B, int ldb,
                 float *work, int ldw)
{
#if HAS_CP_ASYNC
    const int kt = (K - 1) / BK + 1, s = (int)blockIdx.y, slices = (int)gridDim.y;
    const struct gemm_args g = {M, N, K, 1.0f, A, lda, B, ldb, 0.0f, work + (size_t)s * M * ldw,
                                ldw};
    const struct shape sh = {L_WARPS_N, L_SUB_M, L_STAGES, B16, SUB_N};
    tile_product(sh, &g, (int)blockIdx.x, (int)((long long)kt * s / slices),
                 (int)((long long)kt * (s + 1) / slices), NULL, NULL, NULL, NULL, NULL);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

/* C := alpha * (slab 0 + slab 1 + ...) + beta * C, the slabs added in order (the same floats
 * on every run); a thread per 4 neighbouring floats of a row. beta == 0 never reads C. */
static __global__ void __launch_bounds__(256)
    sgemm_sum_slices(int M, int N, float alpha, float beta, float *C, int ldc, const float *work,
                     int ldw, int slices, int c_vec)
{
    const int row = (int)blockIdx.y, col = 4 * (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (col >= N)
        return;
    const size_t slab = (size_t)M * ldw;
    const float4 *w = (const float4 *)(work + (size_t)row * ldw + col); /* ldw % 4 == 0 */
    float4 sum = w[0];
    for (int s = 1; s < slices; ++s) {
        const float4 p = w[s * slab / 4];
        sum.x += p.x;
        sum.y += p.y;
        sum.z += p.z;
        sum.w += p.w;
    }
    float *c = C + (size_t)row * ldc + col;
    const float v[4] = {sum.x, sum.y, sum.z, sum.w};
    if (c_vec && col + 3 < N) {
        float4 out = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
        if (beta != 0.0f) {
            const float4 old = *(const float4 *)c;
            out.x += beta * old.x;
            out.y += beta * old.y;
            out.z += beta * old.z;
            out.w += beta * old.w;
        }
        *(float4 *)c = out;
        return;
    }
    for (int j = 0; j < 4 && col + j < N; ++j)
        c[j] = (beta == 0.0f) ? alpha * v[j] : alpha * v[j] + beta * c[j];
}

template <int B16> /* stream-K: one share per block, as many blocks as the GPU holds at once */
static __global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_stream_k(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                   int ldb, float beta, float *C, int ldc, struct stream_k sk)
{
#if HAS_CP_ASYNC
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const struct shape sh = {L_WARPS_N, L_SUB_M, L_STAGES, B16, SUB_N};
    stream_k_body(sh, &g, &sk);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

/* Split-K on the small tile: block b is slice b / tiles of tile b % tiles, so blocks started
 * together are the same slice of neighbouring tiles and share A and B panels in L2. */
template <int B16>
static __global__ void __launch_bounds__(S_THREADS, 4)
    sgemm_split(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc, struct split_k sp)
{
#if HAS_CP_ASYNC
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const struct shape sh = {S_WARPS_N, S_SUB_M, S_STAGES, B16, SUB_N};
    const int kt = (g.K - 1) / BK + 1;
    const int tiles = (int)gridDim.x / sp.slices;
    const int tile = (int)blockIdx.x % tiles;
    sp.slice = (int)blockIdx.x / tiles;
    const int j0 = (int)((long long)kt * sp.slice / sp.slices);
    const int j1 = (int)((long long)kt * (sp.slice + 1) / sp.slices); /* > j0: slices <= kt */
    tile_product(sh, &g, tile, j0, j1, NULL, NULL, NULL, NULL, &sp);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

#define GEMM_PARAM_TYPES                                                                           \
    int, int, int, float, const float *, int, const float *, int, float, float *, int
typedef void (*whole_kernel)(GEMM_PARAM_TYPES);
typedef void (*stream_k_kernel)(GEMM_PARAM_TYPES, struct stream_k);
typedef void (*split_kernel)(GEMM_PARAM_TYPES, struct split_k);
static long long ceil_div(long long a, long long b)
{
    return (a - 1) / b + 1; /* a >= 1; (a + b - 1) / b could overflow for a near INT_MAX */
}

/* ---- Dispatch: which plan finishes first? (the costs: common/plan_costs.h) ----------------
 * Costs in hundredths of the time one 128x256 tile takes on an SM that runs one at a time:
 *   whole 128x256 tiles: ceil(tiles / SMs) rounds of 100;
 *   whole 64x128 tiles: ceil(tiles / SMs) rounds (up to 4 blocks per SM) of LARGE_TILE_GAIN / 4;
 *   stream-K: the whole rounds but one at 100, the rest shared out evenly at STREAM_K_COST.
 * On 132 SMs: 1024^2: 32 large 100, 128 small 26 -> small; 2048^2: 128 large 100, 512 small
 * 104 -> large; 2560^2: 200 large 200, stream-K 172, 400 small 104 -> small; 3072^2: 288 large
 * 300, stream-K 233, 576 small 130 -> small; 4096^2: 512 large 400, stream-K 412 -> large. */
enum plan { WHOLE_LARGE, WHOLE_SMALL, STREAM_K };
static enum plan choose_plan(long long large, long long small, int sms, long long resident)
{
    const long long whole_large = ceil_div(large, sms) * 100;
    const long long whole_small = ceil_div(small, sms) * LARGE_TILE_GAIN / 4;
    long long best = whole_large;
    enum plan plan = WHOLE_LARGE;
    if (resident > 0 && large > resident && large % resident != 0) {
        const long long dp_rounds = large / resident - 1;
        const long long sk =
            dp_rounds * 100 + (large - dp_rounds * resident) * STREAM_K_COST / resident;
        if (sk < best) {
            best = sk;
            plan = STREAM_K;
        }
    }
    return whole_small < best ? WHOLE_SMALL : plan;
}

/* Split-K: how many slices each of the `tiles` small tiles gets (1: none). In K tiles of one
 * block's time, with n blocks on the busiest SM sharing it:
 *   s = 1:  n * kt,                                n = ceil(tiles / SMs)
 *   s > 1:  n * (ceil(kt / s) + SPLIT_BLOCK_COST),  n = ceil(tiles * s / SMs)
 * SPLIT_BLOCK_COST: a pipeline fill and a 32 KB partial sum through L2. `max_blocks` caps
 * tiles * s (the workspace; 0: no split). *cost := the cost of the pick. */
static int split_slices(long long tiles, int K, int sms, long long max_blocks, long long *cost)
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

/* Split-K on the large tile (sgemm_slices), for few large tiles and a long K: s = SMs / tiles
 * slices, one block per SM, each of >= LSPLIT_MIN_KT K tiles, the slabs (s * M * ldw floats)
 * in the workspace. Cost in split_slices()'s units (a 64x128 block's K tile): LARGE_KT_COST
 * tenths a 128x256 K tile, plus a pipeline fill and the slabs written and read back. -1: none. */
#define LSPLIT_MIN_KT 16
static long long large_split(long long tiles, int M, int N, int K, int sms, long long ws_floats,
                             int *slices)
{
    const long long kt = ceil_div(K, BK), ldw = ceil_div(N, 4) * 4;
    long long s = sms / tiles;
    *slices = 1;
    if (s > kt / LSPLIT_MIN_KT)
        s = kt / LSPLIT_MIN_KT;
    while (s >= 2 && s * M * ldw > ws_floats)
        --s;
    if (s < 2 || M > SGEMM_MAX_GRID_Y) /* the sum kernel runs a row per gridDim.y */
        return -1;
    *slices = (int)s;
    return (LARGE_KT_COST * (ceil_div(kt, s) + PIPELINE_FILL_KT) +
            SLAB_COST_TENTHS * s * M * ldw / 1000000) /
           10;
}

/* ---- What the launcher keeps per device (common/device_facts.h): how many stream-K blocks
 * fit at once (0: no cooperative launch) ----------------------------------------------------- */
struct facts {
    long long resident;
};
static struct facts facts_of[SGEMM_MAX_DEVICES];
static cudaError_t ask_device(const struct sgemm_device *d, void *entry)
{
    struct facts *f = (struct facts *)entry;
    int per_sm = 0;
    cudaError_t err = cudaSuccess;
    if (d->cooperative && d->cc >= 80)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, (const void *)sgemm_stream_k<1>, L_THREADS,
            (size_t)SMEM_BYTES(L_STAGES, L_BM, L_BN));
    f->resident = (long long)per_sm * d->sms;
    return err;
}
static struct sgemm_rung_facts facts_table = SGEMM_RUNG_FACTS(facts_of, ask_device);

/* ---- The workspace (common/sgemm_workspace.h: one per stream, never made while capturing) --
 * Its floats: stream-K's slots (a 128x256 tile's floats per block), split-K's (a 64x128 tile's
 * per slice) or the large split's slabs; then its flags (stream-K) or counts (split-K). A waiter
 * clears its flag, a tile's last slice resets its count: each launch leaves zeros. */
#define WS_FLOATS(sms) ((long long)SGEMM_WORKSPACE_FLOATS(sms))
#define WS_FLAGS(work, sms) ((unsigned *)((work) + SGEMM_WORKSPACE_FLOATS(sms)))

/* Stream-K: the last whole round and the partial one shared by `blocks` blocks resident at once
 * (a cooperative launch), the rest as whole tiles. *launched = 0 if they don't fit: whole tiles. */
static cudaError_t launch_stream_k(int b16, const struct gemm_args *g, long long blocks,
                                   long long tiles, float *work, unsigned *flags,
                                   cudaStream_t stream, int *launched)
{
    const stream_k_kernel sk_kernel = b16 ? sgemm_stream_k<1> : sgemm_stream_k<0>;
    const whole_kernel whole = b16 ? sgemm_whole<L_WARPS_N, L_SUB_M, L_STAGES, 1, 1>
                                   : sgemm_whole<L_WARPS_N, L_SUB_M, L_STAGES, 0, 1>;
    const size_t smem = (size_t)SMEM_BYTES(L_STAGES, L_BM, L_BN);
    struct stream_k sk;
    sk.dp_tiles = (int)((tiles / blocks - 1) * blocks);
    sk.sk_tiles = (int)(tiles - sk.dp_tiles);
    sk.partials = (float4 *)work;
    sk.flags = flags;
    struct gemm_args a = *g; /* addressable copies of the arguments */
    void *params[] = {&a.M, &a.N,   &a.K,    &a.alpha, &a.A,   &a.lda,
                      &a.B, &a.ldb, &a.beta, &a.C,     &a.ldc, &sk};
    *launched = 0;
    cudaError_t err = cudaLaunchCooperativeKernel((const void *)sk_kernel, dim3((unsigned)blocks),
                                                  dim3(L_THREADS), params, smem, stream);
    if (err == cudaErrorCooperativeLaunchTooLarge) {
        (void)cudaGetLastError(); /* not sticky: the caller runs whole tiles */
        return cudaSuccess;
    }
    if (err == cudaSuccess)
        err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    *launched = 1;
    sgemm_trace(13, "stream-k", g->M, g->N, g->K, blocks + sk.dp_tiles, 1);
    if (sk.dp_tiles > 0) {
        whole<<<(unsigned)sk.dp_tiles, L_THREADS, smem, stream>>>(
            g->M, g->N, g->K, g->alpha, g->A, g->lda, g->B, g->ldb, g->beta, g->C, g->ldc);
        err = cudaGetLastError();
    }
    return err;
}

/* Split-K on small tiles: `slices` blocks per tile, meeting in the workspace. */
static cudaError_t launch_split(int b16, const struct gemm_args *g, int slices, long long tiles,
                                float *work, unsigned *counts, cudaStream_t stream)
{
    const struct split_k sp = {slices, 0, (float4 *)work, counts};
    const split_kernel kernel = b16 ? sgemm_split<1> : sgemm_split<0>;
    sgemm_trace(13, "split-k", g->M, g->N, g->K, tiles * slices, slices);
    kernel<<<(unsigned)(tiles * slices), S_THREADS, SMEM_BYTES(S_STAGES, S_BM, S_BN), stream>>>(
        g->M, g->N, g->K, g->alpha, g->A, g->lda, g->B, g->ldb, g->beta, g->C, g->ldc, sp);
    return cudaGetLastError();
}

/* Split-K on the large tile: the slices into slabs of the workspace, then their sum into C. */
static cudaError_t launch_slices(int b16, const struct gemm_args *g, int slices, long long tiles,
                                 float *work, cudaStream_t stream)
{
    const int ldw = (int)ceil_div(g->N, 4) * 4;
    const dim3 grid((unsigned)tiles, (unsigned)slices);
    sgemm_trace(13, "large-split", g->M, g->N, g->K, tiles * slices, slices);
    if (b16)
        sgemm_slices<1><<<grid, L_THREADS, SMEM_BYTES(L_STAGES, L_BM, L_BN), stream>>>(
            g->M, g->N, g->K, g->A, g->lda, g->B, g->ldb, work, ldw);
    else
        sgemm_slices<0><<<grid, L_THREADS, SMEM_BYTES(L_STAGES, L_BM, L_BN), stream>>>(
            g->M, g->N, g->K, g->A, g->lda, g->B, g->ldb, work, ldw);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    const int c_vec = (g->ldc % 4 == 0) && sgemm_aligned16(g->C);
    const dim3 sum_grid((unsigned)ceil_div(ceil_div(g->N, 4), 256), (unsigned)g->M);
    sgemm_sum_slices<<<sum_grid, 256, 0, stream>>>(g->M, g->N, g->alpha, g->beta, g->C, g->ldc,
                                                   work, ldw, slices, c_vec);
    return cudaGetLastError();
}

/* Whole large tiles, block b computing tile b (C spans <= INT_MAX floats: fits gridDim.x). */
static cudaError_t launch_whole_large(int b16, const struct gemm_args *g, long long tiles,
                                     cudaStream_t stream)
{
    const whole_kernel kernel = b16 ? sgemm_whole<L_WARPS_N, L_SUB_M, L_STAGES, 1, 1>
                                    : sgemm_whole<L_WARPS_N, L_SUB_M, L_STAGES, 0, 1>;
    sgemm_trace(13, "whole-large", g->M, g->N, g->K, tiles, 1);
    kernel<<<(unsigned)tiles, L_THREADS, SMEM_BYTES(L_STAGES, L_BM, L_BN), stream>>>(
        g->M, g->N, g->K, g->alpha, g->A, g->lda, g->B, g->ldb, g->beta, g->C, g->ldc);
    return cudaGetLastError();
}

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    cudaError_t err = sgemm_prologue(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, &done);
    if (err != cudaSuccess || done)
        return err;
    struct sgemm_device d;
    struct facts f;
    err = sgemm_rung_facts(&facts_table, &d, &f);
    if (err != cudaSuccess)
        return err;
    if (d.cc < 80)
        return cudaErrorInvalidDevice; /* cp.async needs sm_80 or newer */
    const int b16 = (ldb % 4 == 0) && (N % 4 == 0) && sgemm_aligned16(B); /* rung 11 */
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const long long large = ceil_div(M, L_BM) * ceil_div(N, L_BN);
    const long long small = ceil_div(M, S_BM) * ceil_div(N, S_BN);
    const enum plan plan = choose_plan(large, small, d.sms, f.resident);
    /* Without a workspace (capturing, none made yet): whole tiles; for stream-K the same floats. */
    float *work = NULL;
    if (plan == STREAM_K && f.resident * L_BM * L_BN <= WS_FLOATS(d.sms) &&
        f.resident <= SGEMM_WORKSPACE_FLAGS_PER_SM * (long long)d.sms) { /* a slot, a flag each */
        int launched = 0;
        err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
        if (err != cudaSuccess || work == NULL)
            return err != cudaSuccess ? err : launch_whole_large(b16, &g, large, stream);
        err = launch_stream_k(b16, &g, f.resident, large, work, WS_FLAGS(work, d.sms), stream,
                              &launched);
        if (err != cudaSuccess || launched)
            return err;
    }
    if (plan == WHOLE_SMALL) {
        const long long room = WS_FLOATS(d.sms);
        long long cost = 0;
        int large_slices = 1;
        const int slices = split_slices(small, K, d.sms, room / (S_BM * S_BN), &cost);
        const long long large_cost = large_split(large, M, N, K, d.sms, room, &large_slices);
        const int use_large = (large_cost >= 0 && large_cost < cost); /* a long K */
        if (use_large || slices > 1) {
            err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
            if (err != cudaSuccess)
                return err;
        }
        if (work != NULL && use_large)
            return launch_slices(b16, &g, large_slices, large, work, stream);
        if (work != NULL && slices > 1)
            return launch_split(b16, &g, slices, small, work, WS_FLAGS(work, d.sms), stream);
        const whole_kernel kernel = b16 ? sgemm_whole<S_WARPS_N, S_SUB_M, S_STAGES, 1, 4>
                                        : sgemm_whole<S_WARPS_N, S_SUB_M, S_STAGES, 0, 4>;
        sgemm_trace(13, "whole-small", M, N, K, small, 1);
        kernel<<<(unsigned)small, S_THREADS, SMEM_BYTES(S_STAGES, S_BM, S_BN), stream>>>(
            M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return cudaGetLastError();
    }
    return launch_whole_large(b16, &g, large, stream);
}

extern "C" const struct step step_13 = {
    13, "fill_sms", "filling every SM: tile shape by size, rasterization, split-K, stream-K", 80,
    launch, "whole-large whole-small stream-k split-k large-split",
};
