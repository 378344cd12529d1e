/*
 * Rung 14 - what Hopper's launches add to filling every SM (sm_90): split-K slices that add
 * their sums up in a thread block cluster, and kernels that start before the one ahead ends.
 *
 * What changes from rung 13
 * 1. Rung 13's split-K slices meet in global memory: each stores its 32 KB of partial sums to a
 *    slot, fences, counts itself on an atomic, and the last one reads every slot back alone.
 *    Here the slices of a tile run as one thread block cluster (cudaLaunchKernelEx with a
 *    cluster dimension): started together on one GPC, each block can read the others' shared
 *    memory. So (cluster_finish()) each slice parks its sums in its own shared memory; one
 *    cluster barrier replaces the slots, fences and count; every slice adds up 1/slices of the
 *    tile, slices 0, 1, ... in order (rung 13's floats); a second barrier keeps the shared
 *    memory alive until all are done. No workspace: a captured call splits as a direct one.
 *    A cluster never spans two GPCs: fewer clusters of s fit than SMs / s. The launcher asks
 *    how many (cudaOccupancyMaxActiveClusters, a probe with over half an SM's shared memory).
 * 2. Programmatic dependent launch: a kernel launched with that attribute may start once every
 *    block of the kernel ahead on the stream has run griddepcontrol.launch_dependents (at the
 *    top of the whole-tile kernel), not when it ends; griddepcontrol.wait holds it until the
 *    kernels ahead are done. So the whole-tile kernel, rung 12's K loop (214 registers), can
 *    run pieces of a product side by side, each launched as a GEMM of its own on offset
 *    pointers, where rung 13 needed kernels of their own (227-241 registers, slower a K tile):
 *    - the uneven tail, where the 128x256 tiles fill whole rounds and more than half of one
 *      more (4096^2: 512 tiles, 3 rounds of 132 and 116): each last-round tile is cut once
 *      along K, a long piece (kt - js K tiles; C with beta) holding an SM, a short one (js,
 *      into a workspace) running after the others on the SMs the round leaves free (4096: 460
 *      and 52 of 512, 8 waves of 16; uneven_tail() balances js). The short pieces start when
 *      every long one holds an SM; sgemm_add_pieces() starts then, waits, and adds the short
 *      sums to C (two slices, the same floats every run); the whole tiles fill in behind;
 *    - the large tile's split-K (rung 13's large_split()) up to 8 slices: one launch a slice;
 *    - the 64x128 tile's split-K the same way (small_slabs()), where slices share SMs
 *      (4096x128x4096: 64 tiles, 4 slices, two blocks an SM): a lone block of 4 warps idles its
 *      SM between its own instructions, two keep it ~8% busier (a cluster split: one an SM).
 *    One stream, no host wait: a CUDA graph captures the programmatic edges.
 * 3. Where C is tiny, the cluster split runs on a 64x64 tile of 4 warps, 8x4 of C a thread
 *    (64x128: 8x8): twice the tiles at the same slices, each block's K loop half the FFMAs. A
 *    block alone on an SM (one warp a scheduler) goes at the pace of its own chain, so its K
 *    tile takes 66% of a 64x128 block's (T_KT_COST: 64x256x16384, 8 slices, a block an SM, 71.6
 *    against 108 us). split_slices() prices both; 64x64 wins at 128-256 and 512 squares and
 *    for one row or column of tiles (4096x64x4096, 64x1024x1024).
 *
 * Why the hardware rewards it: at 256^2 the global chain is most of the run (a build that skipped
 * it, wrong C, ran 9.0 us instead of 13.8 on the H200); in a cluster the sums never leave the GPC.
 * At 4096^2 a round takes ~650 us and the last leaves 16 of 132 SMs idle; the cut ends it at
 * 460/512 of a round, in rung 12's kernel (stream-K's is slower): 2.538 ms (H100) against 2.593.
 *
 * The kernels (ptxas sm_90, no spills): cluster split 143 registers (64x64: 104), 3 blocks per SM;
 * the add 78 x 128 threads, so that its waiting blocks fit beside a whole-tile block.
 * Predicted: clusters (H200) 256^2 13.8 -> ~10 us, 768^2 36 -> ~32; uneven tail 4096 +2.5%;
 * small-tile slabs (slices forced by hand) 4096x128x4096 0.92 -> ~1.0, 128x4096x4096 0.965 ->
 * ~0.99; the 64x64 tile (forced by hand) 512^2 18.0 -> ~15.8 us.
 * Measured (ratio to cuBLAS; H100 but where said, each beside the rung without it): clusters (H200)
 * 128 0.78 -> 1.05, 256 0.87 -> 1.20, 512 0.95 -> 1.00, 768 1.03 -> 1.15; the uneven tail 4096
 * 1.026 -> 1.048-1.051, 8192 1.050 -> 1.053, 2816 1.03 -> 1.11, 5376 1.050 -> 1.066,
 * 2048x4096x11008 1.031 -> 1.061; the early slices 1024x1024x16384 0.95 -> 1.01, 1024x1024x65536
 * 0.94 -> 1.00; the small-tile slabs 4096x128x4096 0.912-0.917 -> 1.006-1.010, 128x4096x4096 0.964
 * -> 0.983-0.990, 896^3 0.87 -> 1.03, 1536^3 1.055 -> 1.125, 2048x128x16384 0.66 -> 0.98,
 * 512x512x8192 0.986 -> 0.978; the 64x64 tile 512 1.01 -> 1.16 (17.6 -> 15.5 us), 256 10.4 -> 9.5
 * us, 4096x64x4096 0.68 -> 0.80-0.94, 64x1024x1024 0.97-0.99 -> 1.11-1.14, 64x256x4096 33 -> 24 us.
 */
#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/sgemm_workspace.h"
#include "../common/plan_costs.h"
#include "../common/ffma_tile.cuh" /* rungs 11-12: tile, copies, fragments, epilogue, order */
#include "../common/fill_sms.cuh"  /* rung 13: rasterization, stream-K's slots and flags */

/* ---- The tiles ----------------------------------------------------------------------------- */
#define S_WARPS_N 2 /* NEW: 64x128, 4 warps (2 x 2) of 32x64, 8x8 of C per thread, 4 blocks/SM */
#define S_SUB_M   2
#define S_STAGES  4 /* a lone block has one warp per scheduler: a stage more hides a late copy */
#define S_BM      (WARPS_M * LANES_M * SUB * S_SUB_M) /* 64 */
#define S_BN      (S_WARPS_N * WARP_N)                /* 128 */
#define S_THREADS (32 * WARPS_M * S_WARPS_N)          /* 128 */
#define T_SUB_N   1 /* NEW: 64x64 for the smallest C, 4 warps (2 x 2) of 32x32, 8x4 of C a thread */
#define T_BN      (S_WARPS_N * WARP_COLS(T_SUB_N))     /* 64; 64 rows, 128 threads, as S */
#define SPLIT_MAX          8 /* slices per tile: a cluster holds them, 8 blocks is portable */
#define SPLIT_MIN_KT       4 /* K tiles per slice, at least */
#define CLUSTER_MIN_BLOCKS 3 /* the cluster kernel's launch bound, blocks per SM */
/* One pipeline stage: a_tile[BK][BM + A_PAD] (A transposed) then b_tile[BK][BN]. */

struct stream_k { /* rung 13's stream-K schedule (see "Stream-K" below) */
    int dp_tiles;     /* tiles before the shared ones: the whole-tile kernel does them */
    int sk_tiles;     /* the tiles after them, whose K tiles are shared out evenly */
    float4 *partials; /* one slot of bm*bn floats per block */
    unsigned *flags;  /* flags[w] != 0: slot w holds block w's part of a tile, for block w+1 */
};
struct split_k { /* NEW: split-K: slice s computes K tiles [s*kt/slices, (s+1)*kt/slices) */
    int slices; /* blocks per tile, 2..8: one cluster */
    int slice;  /* this block's slice: its rank in the cluster (set in the kernel) */
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 /* sm_80+ device code (cp.async) */
/* ---- Split-K, a tile's slices meeting in a thread block cluster (sm_90+; see the header) --- */
static __device__ __forceinline__ void cluster_finish(struct shape sh, const struct gemm_args *g,
                                                      const struct split_k *sp, int tile_m,
                                                      int tile_n, int row0, int col0,
                                                      float acc[TM_MAX][TN])
{
#if __CUDA_ARCH__ >= 900
    const int threads = 32 * WARPS_M * sh.warps_n, tm = sh.sub_m * SUB;
    const int bm = WARPS_M * LANES_M * SUB * sh.sub_m, bn = sh.warps_n * WARP_COLS(sh.sub_n);
    extern __shared__ float4 smem_f4[];
    __syncthreads(); /* every warp has read its last fragments: the stages may be overwritten */
    float4 *mine = smem_f4 + threadIdx.x; /* the slot layout of store_partial() */
#pragma unroll
    for (int i = 0; i < tm; ++i)
#pragma unroll
        for (int q = 0; q < sh.sub_n; ++q)
            mine[(i * sh.sub_n + q) * threads] =
                make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]);
    __cluster_barrier_arrive(); /* release: this slice's partial sums ... */
    __cluster_barrier_wait();   /* acquire: ... and every other slice's, visible to all */
    const int per_thread = tm * sh.sub_n; /* float4s of each thread's patch */
    const int v0 = per_thread * sp->slice / sp->slices;
    const int v1 = per_thread * (sp->slice + 1) / sp->slices;
    const int rows_left = g->M - tile_m * bm, cols_left = g->N - tile_n * bn;
    const int c_vec = ((g->ldc & 3) == 0) && ((((uintptr_t)g->C) & 15u) == 0);
#pragma unroll 4
    for (int v = v0; v < v1; ++v) {
        const int i = v / sh.sub_n, q = v % sh.sub_n;
        const int row = row0 + (i / SUB) * LANES_M * SUB + i % SUB;
        if (row >= rows_left)
            continue;
        const int at = v * threads + threadIdx.x;
        float4 sum = ((const float4 *)__cluster_map_shared_rank(smem_f4, 0u))[at];
        for (int s = 1; s < sp->slices; ++s) { /* slice order: the same floats every run */
            const float4 p = ((const float4 *)__cluster_map_shared_rank(smem_f4, (unsigned)s))[at];
            sum.x += p.x;
            sum.y += p.y;
            sum.z += p.z;
            sum.w += p.w;
        }
        const float out[4] = {sum.x, sum.y, sum.z, sum.w};
        store_c4(g, g->C + (size_t)(tile_m * bm + row) * g->ldc + tile_n * bn,
                 col0 + q * LANES_N * SUB, cols_left, c_vec, out);
    }
    __cluster_barrier_arrive(); /* done reading the others' shared memory ... */
    __cluster_barrier_wait();   /* ... and they are done with ours: now a block may exit */
#else
    (void)sh, (void)g, (void)sp, (void)tile_m, (void)tile_n, (void)row0, (void)col0, (void)acc;
    __trap(); /* no clusters below sm_90; the launcher never gets here */
#endif
}

/* K tiles [j0, j1) of C tile `tile`, as in rung 13; (split) the tile's slice to cluster_finish() */
static __device__ __forceinline__ void tile_product(struct shape sh, const struct gemm_args *g,
                                                    int tile, int j0, int j1,
                                                    const float4 *init_slot, unsigned *init_flag,
                                                    float4 *out_slot, unsigned *out_flag,
                                                    const struct split_k *split)
{
    const int threads = 32 * WARPS_M * sh.warps_n;
    const int bm = WARPS_M * LANES_M * SUB * sh.sub_m;
    const int bn = sh.warps_n * WARP_COLS(sh.sub_n);
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
        b_kr = tid / bn; /* 0; 0 or 1 in the 64x64 tile */
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
            for (int j = 0; j < SUB * sh.sub_n; ++j)
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
        cluster_finish(sh, g, split, tile_m, tile_n, row0, col0, acc);
    } else {
        store_c(sh, g, tile_m, tile_n, row0, col0, acc);
    }
}

/* ---- Stream-K as in rung 13 (its comment: the schedule; a shared tile still adds k in order) */
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
                float beta, float *C, int ldc, int first_tile)
{
#if HAS_CP_ASYNC
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); /* NEW: see launch_uneven() */
#endif
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const struct shape sh = {WARPS_N_, SUB_M_, STAGES_, B16, SUB_N};
    tile_product(sh, &g, first_tile + (int)blockIdx.x, 0, (g.K - 1) / BK + 1, NULL, NULL, NULL,
                 NULL, NULL);
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

/* C := alpha * (slab 0 + slab 1 + ...) + beta * C, slabs in a fixed order (the same floats every
 * run). NEW: a thread per float4 of C, rows flattened (work for all, however narrow C is); above
 * SUM_SLABS_ALONE slabs `groups` threads share a float4, each adding a run of slabs, the runs in
 * order (256^2 x 16384, 66 slabs: 13.9 -> 9.7 us, Nsight Compute). beta == 0 never reads C. */
#define SUM_THREADS     256
#define SUM_SLABS_ALONE 8 /* up to 8 slabs (the early slices): one thread adds them all */
#define SUM_GROUPS      8 /* above that, 8 threads share 4 floats (measured against 4 and 1) */
static __global__ void __launch_bounds__(SUM_THREADS)
    sgemm_sum_slices(int M, int N, float alpha, float beta, float *C, int ldc, const float *work,
                     int ldw, int slices, int c_vec)
{
#if HAS_CP_ASYNC && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory"); /* NEW: launched early: the slices end */
    __shared__ float4 runs[SUM_THREADS];
    const int groups = slices > SUM_SLABS_ALONE ? SUM_GROUPS : 1;
    const int per_block = SUM_THREADS / groups, q = (int)threadIdx.x % per_block;
    const int run = (int)threadIdx.x / per_block; /* this thread's run of slabs */
    const long long v = (long long)blockIdx.x * per_block + q; /* C's float4, rows flattened */
    const int row = (int)(v / (ldw / 4)), col = 4 * (int)(v % (ldw / 4)); /* ldw % 4 == 0 */
    const int inside = row < M && col < N;
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (inside) {
        const size_t slab = (size_t)M * ldw;
        const float4 *w = (const float4 *)(work + (size_t)row * ldw + col);
        const int s0 = slices * run / groups, s1 = slices * (run + 1) / groups;
        sum = w[s0 * slab / 4];
        for (int s = s0 + 1; s < s1; ++s) {
            const float4 p = w[s * slab / 4];
            sum.x += p.x;
            sum.y += p.y;
            sum.z += p.z;
            sum.w += p.w;
        }
    }
    if (groups > 1) { /* run 0 adds runs 1, 2, ... to its own, in order */
        runs[threadIdx.x] = sum;
        __syncthreads();
        if (run > 0)
            return;
        for (int r = 1; r < groups; ++r) {
            const float4 p = runs[r * per_block + q];
            sum.x += p.x;
            sum.y += p.y;
            sum.z += p.z;
            sum.w += p.w;
        }
    }
    if (!inside)
        return;
    const struct gemm_args g = {M, N, 0, alpha, NULL, 0, NULL, 0, beta, C, ldc};
    const float v4[4] = {sum.x, sum.y, sum.z, sum.w};
    store_c4(&g, C + (size_t)row * ldc, col, N, c_vec, v4);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

/* NEW: the uneven tail's add: C tile first_tile + b += w (C's rows from row0 on, ldw % 4 == 0;
 * written by a kernel still running at launch: read .cg, not by the read-only path). A thread
 * loads ADD_BATCH rows before it stores any: else a memory latency a row (3.5% at 4095^3). */
#define ADD_THREADS 128 /* two rows of a tile at a time, 64 float4s each */
#define ADD_BATCH   7   /* rows in flight per thread: as many as 80 registers hold */
/* 80 registers: 216 x 256 + 80 x 128 fit */
static __global__ void __launch_bounds__(ADD_THREADS, 6)
    sgemm_add_pieces(int M, int N, float *__restrict__ C, int ldc, const float *w, int ldw,
                     int row0, int first_tile, int c_vec)
{
#if HAS_CP_ASYNC && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); /* whole tiles may start */
    asm volatile("griddepcontrol.wait;" ::: "memory"); /* both pieces done, their stores seen */
    int tile_m, tile_n;
    tile_coords(first_tile + (int)blockIdx.x, (M - 1) / L_BM + 1, (N - 1) / L_BN + 1, &tile_m,
                &tile_n);
    const int step = ADD_THREADS / (L_BN / 4); /* rows apart */
    const int col = tile_n * L_BN + 4 * ((int)threadIdx.x % (L_BN / 4)), cols = min(4, N - col);
    const int rows = min(L_BM, M - tile_m * L_BM), vec = c_vec && cols == 4;
    for (int r = (int)threadIdx.x / (L_BN / 4); r < rows && cols > 0; r += ADD_BATCH * step) {
        float *c = C + (size_t)(tile_m * L_BM + r) * ldc + col;
        const float *v = w + (size_t)(tile_m * L_BM + r - row0) * ldw + col;
        float4 add[ADD_BATCH], old[ADD_BATCH];
#pragma unroll
        for (int b = 0; b < ADD_BATCH; ++b) /* every load of the batch in flight at once */
            if (r + b * step < rows) {
                const float *cb = c + (size_t)b * step * ldc;
                add[b] = __ldcg((const float4 *)(v + (size_t)b * step * ldw)); /* L2: see above */
                old[b] = vec ? *(const float4 *)cb
                             : make_float4(cb[0], cols > 1 ? cb[1] : 0.f, cols > 2 ? cb[2] : 0.f,
                                           cols > 3 ? cb[3] : 0.f);
            }
#pragma unroll
        for (int b = 0; b < ADD_BATCH && r + b * step < rows; ++b) {
            const float out[4] = {old[b].x + add[b].x, old[b].y + add[b].y, old[b].z + add[b].z,
                                  old[b].w + add[b].w};
            float *cb = c + (size_t)b * step * ldc;
            if (vec)
                *(float4 *)cb = make_float4(out[0], out[1], out[2], out[3]);
            else
                for (int j = 0; j < cols; ++j)
                    cb[j] = out[j];
        }
    }
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
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

/* Split-K on 64x128 or 64x64 tiles: blocks b - rank .. b - rank + slices - 1, a cluster, tile
 * b / slices */
template <int B16, int SUB_N_>
static __global__ void __launch_bounds__(S_THREADS, CLUSTER_MIN_BLOCKS)
    sgemm_split(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc, struct split_k sp)
{
#if HAS_CP_ASYNC
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const struct shape sh = {S_WARPS_N, S_SUB_M, S_STAGES, B16, SUB_N_};
    const int kt = (g.K - 1) / BK + 1;
    const int tile = (int)blockIdx.x / sp.slices;
#if __CUDA_ARCH__ >= 900
    sp.slice = (int)__clusterRelativeBlockRank();
#endif
    const int j0 = (int)((long long)kt * sp.slice / sp.slices);
    const int j1 = (int)((long long)kt * (sp.slice + 1) / sp.slices); /* > j0: slices <= kt */
    tile_product(sh, &g, tile, j0, j1, NULL, NULL, NULL, NULL, &sp);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

#define GEMM_PARAM_TYPES                                                                           \
    int, int, int, float, const float *, int, const float *, int, float, float *, int
typedef void (*whole_kernel)(GEMM_PARAM_TYPES, int);
typedef void (*stream_k_kernel)(GEMM_PARAM_TYPES, struct stream_k);
typedef void (*split_kernel)(GEMM_PARAM_TYPES, struct split_k);
static whole_kernel large_whole(int b16) /* the 128x256 whole-tile kernel, B by 16 or 4 bytes */
{
    return b16 ? sgemm_whole<L_WARPS_N, L_SUB_M, L_STAGES, 1, 1>
               : sgemm_whole<L_WARPS_N, L_SUB_M, L_STAGES, 0, 1>;
}
static whole_kernel small_whole(int b16) /* the 64x128 one, 4 blocks per SM */
{
    return b16 ? sgemm_whole<S_WARPS_N, S_SUB_M, S_STAGES, 1, 4>
               : sgemm_whole<S_WARPS_N, S_SUB_M, S_STAGES, 0, 4>;
}
static long long ceil_div(long long a, long long b)
{
    return (a - 1) / b + 1; /* a >= 1; (a + b - 1) / b could overflow for a near INT_MAX */
}

/* ---- The workspace of stream-K, the large split and (NEW) the uneven tail: its floats, then
 * its flags (common/sgemm_workspace.h) ------------------------------------------------------ */
#define WS_FLOATS(sms) ((long long)SGEMM_WORKSPACE_FLOATS(sms))
#define WS_FLAGS(work, sms) ((unsigned *)((work) + SGEMM_WORKSPACE_FLOATS(sms)))

/* ---- Dispatch: rung 13's cost model (its comment has the terms and examples) ---------- */
enum plan { WHOLE_LARGE, WHOLE_SMALL, STREAM_K, UNEVEN_TAIL };
/* NEW: the uneven tail. The last r = tiles % SMs tiles (r > SMs/2, after a round), each cut once
 * along K: a long piece of kt - js K tiles on an SM of its own, a short one of js, run on the SMs
 * - r left free, waves = ceil(r / (SMs - r)) deep, each SHORT_PIECE_KT K tiles beyond its own (5;
 * 3, 5, 8 within 0.3%, H100). js balances the two; the longer in hundredths of a tile, or -1. */
static int tail_row0(long long dp, int N) /* w's first row: that of tile dp's raster group */
{
    return (int)(dp / (RASTER_GROUP * ceil_div(N, L_BN)) * RASTER_GROUP * L_BM);
}
static long long uneven_tail(long long tiles, long long sms, long long kt, int M, int N,
                             long long ws, int *short_kt)
{
    const long long r = tiles % sms;
    *short_kt = 0;
    if (tiles < sms || 2 * r <= sms || (M - tail_row0(tiles - r, N)) * ceil_div(N, 4) * 4 > ws)
        return -1; /* w: C's rows from row0 on, in the workspace */
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
static enum plan choose_plan(long long large, long long small, int sms, long long resident,
                             long long kt, int M, int N, int *short_kt)
{
    const long long whole_large = ceil_div(large, sms) * 100;
    const long long whole_small = ceil_div(small, sms) * LARGE_TILE_GAIN / 4;
    long long best = whole_large;
    enum plan plan = WHOLE_LARGE;
    /* NEW: a long piece holds its SM: only with one 128x256 block per SM */
    const long long uneven =
        resident == sms ? uneven_tail(large, sms, kt, M, N, WS_FLOATS(sms), short_kt) : -1;
    if (uneven >= 0 && uneven < best) {
        best = uneven;
        plan = UNEVEN_TAIL;
    }
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

/* Split-K: how many slices each of the `tiles` small tiles gets (1: none), now in clusters.
 * In K tiles of one 64x128 block's time, with n blocks on the busiest SM sharing it, and c the
 * tile's K tile in those (100%; NEW: T_KT_COST for the 64x64 tile):
 *   s = 1:  n * kt * c,                                  n = ceil(tiles / SMs)
 *   s > 1:  n * (ceil(kt / s) * c + CLUSTER_BLOCK_COST),  n = ceil(tiles / cap[s])
 * NEW: cap[s], clusters of s at one block per SM (asked of the driver; below SMs / s).
 * CLUSTER_BLOCK_COST (2; 8 through L2 in rung 13) and CLUSTER_MAX_SHARE (6, the most blocks an
 * SM the model is trusted with): fitted to every plan forced every 64 from 256 to 1792 on an
 * H200, within 3% of the fastest at 20 of 25 sizes (before the 64x64 tile). */
static int split_slices(long long tiles, int K, int sms, const int *cap, int c, long long *cost)
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

/* Split-K on the large tile for a long K, as in rung 13 (which explains LARGE_KT_COST); -1: none */
#define LSPLIT_MIN_KT 16
#define EARLY_SLICES_MAX 8 /* NEW: up to 8 slices as launches of the whole-tile kernel */
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
    if (s < 2)
        return -1;
    *slices = (int)s;
    return (LARGE_KT_COST * (ceil_div(kt, s) + PIPELINE_FILL_KT) +
            SLAB_COST_TENTHS * s * M * ldw / 1000000) /
           10;
}
/* NEW: the 64x128 tile's split-K the same way (slabs, a launch a slice, the sum), in units of
 * split_slices(): n = ceil(s * tiles / SMs) blocks on the busiest SM (4 fit), ceil(kt / s) + 2
 * K tiles each, at SHARED_SM_SPEED% of a lone block's time if n > 1; large_split()'s sum. */
static long long small_slabs(long long tiles, int M, int N, int K, int sms, long long ws_floats,
                             int *slices)
{
    const long long kt = ceil_div(K, BK), ldw = ceil_div(N, 4) * 4;
    long long best = -1;
    for (long long s = 2; s <= EARLY_SLICES_MAX && kt / s >= SPLIT_MIN_KT; ++s) {
        const long long n = ceil_div(s * tiles, sms);
        const long long c =
            n * (ceil_div(kt, s) + SMALL_FILL_KT) * (n > 1 ? SHARED_SM_SPEED : 100) / 100 +
            SLAB_COST_TENTHS / 10 * s * M * ldw / 1000000;
        if (s * M * ldw <= ws_floats && (best < 0 || c < best)) {
            best = c;
            *slices = (int)s;
        }
    }
    return best;
}

/* ---- What the launcher keeps per device (common/device_facts.h) --------------------------- */
struct facts {
    long long resident;             /* stream-K blocks that fit at once; 0: no cooperative launch */
    int cluster_cap[SPLIT_MAX + 1]; /* NEW: clusters of s blocks at one block per SM; 0: none */
};
static struct facts facts_of[SGEMM_MAX_DEVICES];
/* NEW: how many clusters fit at one block per SM: asked with over half an SM's shared memory */
static __global__ void cluster_capacity_probe(void) {}
/* NEW: a cudaLaunchKernelEx configuration with one attribute: blocks in clusters of `size`
 * (size > 0), or else allowed to start before the kernel ahead on the stream ends. */
static cudaLaunchConfig_t ex_config(long long blocks, int threads, int smem, int size,
                                    cudaStream_t stream, cudaLaunchAttribute *attr)
{
    if (size > 0) {
        attr->id = cudaLaunchAttributeClusterDimension;
        attr->val.clusterDim.x = (unsigned)size;
        attr->val.clusterDim.y = 1;
        attr->val.clusterDim.z = 1;
    } else {
        attr->id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr->val.programmaticStreamSerializationAllowed = 1;
    }
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)blocks);
    config.blockDim = dim3((unsigned)threads);
    config.dynamicSmemBytes = (size_t)smem;
    config.stream = stream;
    config.attrs = attr;
    config.numAttrs = 1;
    return config;
}

static cudaError_t ask_device(const struct sgemm_device *d, void *entry)
{
    struct facts *f = (struct facts *)entry;
    cudaError_t err = cudaSuccess;
    int per_sm = 0;
    if (d->cooperative && d->cc >= 80)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, (const void *)sgemm_stream_k<1>, L_THREADS,
            (size_t)SMEM_BYTES(L_STAGES, L_BM, L_BN));
    f->resident = (long long)per_sm * d->sms;
    for (int s = 0; s <= SPLIT_MAX; ++s)
        f->cluster_cap[s] = 0;
    const int smem = d->smem_sm / 2 + 1024;
    if (err != cudaSuccess || !d->clusters || d->cc < 90 || smem > d->smem_optin)
        return err;
    err = cudaFuncSetAttribute((const void *)cluster_capacity_probe,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    for (int s = 2; s <= SPLIT_MAX && err == cudaSuccess; ++s) {
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t config = ex_config(s, S_THREADS, smem, s, 0, &attr);
        err = cudaOccupancyMaxActiveClusters(&f->cluster_cap[s],
                                             (const void *)cluster_capacity_probe, &config);
    }
    return err;
}
static struct sgemm_rung_facts facts_table = SGEMM_RUNG_FACTS(facts_of, ask_device);

/* Stream-K: the last whole round and the partial one shared by `blocks` blocks resident at once
 * (a cooperative launch), the rest as whole tiles. *launched = 0 if they don't fit: whole tiles. */
static cudaError_t launch_stream_k(int b16, const struct gemm_args *g, long long blocks,
                                   long long tiles, float *work, unsigned *flags,
                                   cudaStream_t stream, int *launched)
{
    const stream_k_kernel sk_kernel = b16 ? sgemm_stream_k<1> : sgemm_stream_k<0>;
    const whole_kernel whole = large_whole(b16);
    const size_t smem = (size_t)SMEM_BYTES(L_STAGES, L_BM, L_BN);
    const int dp_tiles = (int)((tiles / blocks - 1) * blocks);
    struct stream_k sk = {dp_tiles, (int)(tiles - dp_tiles), (float4 *)work, flags};
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
    sgemm_trace(14, "stream-k", g->M, g->N, g->K, blocks + sk.dp_tiles, 1);
    if (sk.dp_tiles > 0) {
        whole<<<(unsigned)sk.dp_tiles, L_THREADS, smem, stream>>>(
            g->M, g->N, g->K, g->alpha, g->A, g->lda, g->B, g->ldb, g->beta, g->C, g->ldc, 0);
        err = cudaGetLastError();
    }
    return err;
}

/* NEW: split-K in clusters of `slices` blocks, 64x128 tiles or 64x64 (t); smem: stages or sums */
static cudaError_t launch_split(int b16, const struct gemm_args *g, int slices, long long tiles,
                                int t, cudaStream_t stream)
{
    const struct split_k sp = {slices, 0};
    const int bn = t ? T_BN : S_BN, sums = S_BM * bn * (int)sizeof(float);
    const int smem = SMEM_BYTES(S_STAGES, S_BM, bn) > sums ? SMEM_BYTES(S_STAGES, S_BM, bn) : sums;
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t config =
        ex_config(tiles * slices, S_THREADS, smem, slices, stream, &attr);
    const split_kernel kernel = t ? (b16 ? sgemm_split<1, T_SUB_N> : sgemm_split<0, T_SUB_N>)
                                  : (b16 ? sgemm_split<1, SUB_N> : sgemm_split<0, SUB_N>);
    sgemm_trace(14, t ? "split-k-64" : "split-k", g->M, g->N, g->K, tiles * slices, slices);
    const cudaError_t err = cudaLaunchKernelEx(&config, kernel, g->M, g->N, g->K, g->alpha, g->A,
                                               g->lda, g->B, g->ldb, g->beta, g->C, g->ldc, sp);
    const cudaError_t last = cudaGetLastError();
    return err != cudaSuccess ? err : last;
}

/* Split-K on the large tile (NEW: or the small one): the slices into slabs of the workspace,
 * then their sum into C. */
static cudaError_t launch_slices(int b16, const struct gemm_args *g, int slices, long long tiles,
                                 int small, float *work, cudaStream_t stream)
{
    const int ldw = (int)ceil_div(g->N, 4) * 4;
    const int smem = small ? SMEM_BYTES(S_STAGES, S_BM, S_BN) : SMEM_BYTES(L_STAGES, L_BM, L_BN);
    const dim3 grid((unsigned)tiles, (unsigned)slices);
    cudaError_t err = cudaSuccess;
    cudaLaunchAttribute attr;
    sgemm_trace(14, small ? "small-split" : "large-split", g->M, g->N, g->K, tiles * slices,
                slices);
    if (slices <= EARLY_SLICES_MAX) { /* NEW: slice y, the whole-tile kernel on K range y */
        const whole_kernel whole = small ? small_whole(b16) : large_whole(b16);
        const int kt = (int)ceil_div(g->K, BK), k_first = g->K % BK ? g->K % BK - BK : 0;
        for (int y = 0; y < slices && err == cudaSuccess; ++y) { /* the slices kernel's K tiles */
            const int lo = y ? k_first + BK * (int)((long long)kt * y / slices) : 0;
            const int hi = k_first + BK * (int)((long long)kt * (y + 1) / slices);
            cudaLaunchConfig_t config =
                ex_config(tiles, small ? S_THREADS : L_THREADS, smem, 0, stream, &attr);
            config.numAttrs = y > 0; /* the first waits for the work ahead; the rest start early */
            err = cudaLaunchKernelEx(&config, whole, g->M, g->N, hi - lo, 1.0f, g->A + lo, g->lda,
                                     g->B + (size_t)lo * g->ldb, g->ldb, 0.0f,
                                     work + (size_t)y * g->M * ldw, ldw, 0);
        }
    } else {
        (b16 ? sgemm_slices<1> : sgemm_slices<0>)<<<grid, L_THREADS, smem, stream>>>(
            g->M, g->N, g->K, g->A, g->lda, g->B, g->ldb, work, ldw);
    }
    cudaError_t last = cudaGetLastError();
    if (err != cudaSuccess || last != cudaSuccess)
        return err != cudaSuccess ? err : last;
    const int c_vec = (g->ldc % 4 == 0) && sgemm_aligned16(g->C);
    const long long per_block = SUM_THREADS / (slices > SUM_SLABS_ALONE ? SUM_GROUPS : 1);
    const cudaLaunchConfig_t config = ex_config(
        ceil_div((long long)g->M * (ldw / 4), per_block), SUM_THREADS, 0, 0, stream, &attr);
    err = cudaLaunchKernelEx(&config, sgemm_sum_slices, g->M, g->N, g->alpha, g->beta, g->C,
                             g->ldc, (const float *)work, ldw, slices, c_vec);
    last = cudaGetLastError();
    return err != cudaSuccess ? err : last;
}

/* NEW: the uneven tail: 1. the long pieces, tiles dp .. dp+r-1 over K [0, k_cut), into C; 2.
 * early, the short pieces, K [k_cut, K), into w (C's rows from row0 on; alpha, beta 0); 3. early,
 * the add, waiting for 1 and 2; 4. early, the whole tiles 0 .. dp-1 (4096^2, H200: 1.055; 1.048
 * with the add plain after the pieces). An error in 2-4 leaves C half done, as a failed kernel. */
static cudaError_t launch_uneven(int b16, const struct gemm_args *g, long long tiles, int sms,
                                 int short_kt, float *work, cudaStream_t stream, int *launched)
{
    const whole_kernel whole = large_whole(b16);
    const int smem = SMEM_BYTES(L_STAGES, L_BM, L_BN);
    const long long r = tiles % sms, dp = tiles - r;
    const int k_cut = (int)(ceil_div(g->K, BK) - short_kt) * BK;
    const int row0 = tail_row0(dp, g->N), ldw = (int)ceil_div(g->N, 4) * 4; /* same tile order */
    sgemm_trace(14, "uneven-tail", g->M, g->N, g->K, tiles + r, 2);
    whole<<<(unsigned)r, L_THREADS, smem, stream>>>(g->M, g->N, k_cut, g->alpha, g->A, g->lda,
                                                    g->B, g->ldb, g->beta, g->C, g->ldc, (int)dp);
    cudaError_t err = cudaGetLastError();
    cudaLaunchAttribute attr;
    if (err == cudaSuccess) {
        const cudaLaunchConfig_t config = ex_config(r, L_THREADS, smem, 0, stream, &attr);
        err = cudaLaunchKernelEx(&config, whole, g->M - row0, g->N, g->K - k_cut, g->alpha,
                                 g->A + (size_t)row0 * g->lda + k_cut, g->lda,
                                 g->B + (size_t)k_cut * g->ldb, g->ldb, 0.0f, work, ldw,
                                 (int)(dp - row0 / L_BM * ceil_div(g->N, L_BN)));
    }
    if (err == cudaSuccess) {
        const cudaLaunchConfig_t config = ex_config(r, ADD_THREADS, 0, 0, stream, &attr);
        const int c_vec = (g->ldc % 4 == 0) && sgemm_aligned16(g->C);
        err = cudaLaunchKernelEx(&config, sgemm_add_pieces, g->M, g->N, g->C, g->ldc,
                                 (const float *)work, ldw, row0, (int)dp, c_vec);
    }
    if (err == cudaSuccess) {
        const cudaLaunchConfig_t config = ex_config(dp, L_THREADS, smem, 0, stream, &attr);
        err = cudaLaunchKernelEx(&config, whole, g->M, g->N, g->K, g->alpha, g->A, g->lda, g->B,
                                 g->ldb, g->beta, g->C, g->ldc, 0);
    }
    const cudaError_t last = cudaGetLastError();
    *launched = (err == cudaSuccess && last == cudaSuccess);
    return err != cudaSuccess ? err : last;
}

/* Whole large tiles, block b computing tile b (C spans <= INT_MAX floats: fits gridDim.x). */
static cudaError_t launch_whole_large(int b16, const struct gemm_args *g, long long tiles,
                                     cudaStream_t stream)
{
    const whole_kernel kernel = large_whole(b16);
    sgemm_trace(14, "whole-large", g->M, g->N, g->K, tiles, 1);
    kernel<<<(unsigned)tiles, L_THREADS, SMEM_BYTES(L_STAGES, L_BM, L_BN), stream>>>(
        g->M, g->N, g->K, g->alpha, g->A, g->lda, g->B, g->ldb, g->beta, g->C, g->ldc, 0);
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
    if (d.cc < 90 || f.cluster_cap[2] <= 0)
        return cudaErrorInvalidDevice; /* NEW: clusters need sm_90 (before: rung 13) */
    const int b16 = (ldb % 4 == 0) && (N % 4 == 0) && sgemm_aligned16(B); /* rung 11 */
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const long long large = ceil_div(M, L_BM) * ceil_div(N, L_BN);
    const long long small = ceil_div(M, S_BM) * ceil_div(N, S_BN);
    int short_kt = 0;
    const enum plan plan =
        choose_plan(large, small, d.sms, f.resident, ceil_div(K, BK), M, N, &short_kt);
    /* Without a workspace (capturing, none made yet): whole tiles (stream-K: the same floats). */
    float *work = NULL;
    if (plan == UNEVEN_TAIL || (plan == STREAM_K && f.resident * L_BM * L_BN <= WS_FLOATS(d.sms) &&
                                f.resident <= SGEMM_WORKSPACE_FLAGS_PER_SM * (long long)d.sms)) {
        int launched = 0;
        err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
        if (err != cudaSuccess || work == NULL)
            return err != cudaSuccess ? err : launch_whole_large(b16, &g, large, stream);
        err = plan == UNEVEN_TAIL /* NEW */
                  ? launch_uneven(b16, &g, large, d.sms, short_kt, work, stream, &launched)
                  : launch_stream_k(b16, &g, f.resident, large, work, WS_FLAGS(work, d.sms),
                                    stream, &launched);
        if (err != cudaSuccess || launched)
            return err;
    }
    if (plan == WHOLE_SMALL) {
        const long long room = WS_FLOATS(d.sms);
        long long cost = 0;
        int large_slices = 1;
        const int slices = split_slices(small, K, d.sms, f.cluster_cap, 100, &cost);
        long long t_cost = 0; /* NEW: the 64x64 tile in clusters, where it costs less */
        const long long tiny = ceil_div(M, S_BM) * ceil_div(N, T_BN);
        const int t_slices = split_slices(tiny, K, d.sms, f.cluster_cap, T_KT_COST, &t_cost);
        const int t = t_slices > 1 && t_cost < cost;
        cost = t ? t_cost : cost;
        const long long large_cost = large_split(large, M, N, K, d.sms, room, &large_slices);
        int small_slices = 1; /* NEW: the small tile in slabs, where blocks would share SMs */
        const long long slab_cost = small_slabs(small, M, N, K, d.sms, room, &small_slices);
        const int use_small = slab_cost >= 0 && slab_cost < cost &&
                              (large_cost < 0 || slab_cost < large_cost);
        if (use_small || (large_cost >= 0 && large_cost < cost)) { /* slabs in the workspace */
            err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
            if (err != cudaSuccess || work != NULL)
                return err != cudaSuccess
                           ? err
                           : launch_slices(b16, &g, use_small ? small_slices : large_slices,
                                           use_small ? small : large, use_small, work, stream);
        }
        if (slices > 1 || t) /* NEW: in clusters, no workspace needed */
            return launch_split(b16, &g, t ? t_slices : slices, t ? tiny : small, t, stream);
        const whole_kernel kernel = small_whole(b16);
        sgemm_trace(14, "whole-small", M, N, K, small, 1);
        kernel<<<(unsigned)small, S_THREADS, SMEM_BYTES(S_STAGES, S_BM, S_BN), stream>>>(
            M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, 0);
        return cudaGetLastError();
    }
    return launch_whole_large(b16, &g, large, stream);
}

extern "C" const struct step step_14 = {
    14, "cluster_split", "split-K in thread block clusters, the uneven tail by dependent launch",
    90, launch,
    "whole-large whole-small stream-k split-k split-k-64 large-split small-split uneven-tail",
};
