/*
 * ffma_loop.cuh - the K loop of the FFMA rungs from 13 on, and what their plans hand between
 * blocks: rung 12's kernel (ffma_tile.cuh) over any range of K tiles of any C tile, on the
 * tile shapes of ffma_tile.cuh.
 *   tile_coords()  rasterization (rung 13): which C tile a tile number is;
 *   tile_product() K tiles [j0, j1) of one C tile, then out to C, a slot or a split-K finish;
 *                  a range may start past the first K tile (split-K slices, rung 14) or
 *                  continue another block's partial sums, read from a workspace slot once its
 *                  flag is up (stream-K, rung 15); whole_tile(): every K tile, out to C;
 *   store_partial(), load_partial()  a block's raw sums to and from such a slot.
 * Include after ffma_tile.cuh.
 */
#ifndef SGEMM_LADDER_FFMA_LOOP_CUH
#define SGEMM_LADDER_FFMA_LOOP_CUH

#include "flags.cuh" /* raise_flag, wait_flag */

#define RASTER_GROUP 8 /* tile rows walked down a column before moving right */

/* The kernels of these rungs are templates that trap below sm_80 (the launchers never get there):
 * cp.async does not exist below. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define HAS_CP_ASYNC 1
#else
#define HAS_CP_ASYNC 0
#endif
#define GEMM_PARAMS                                                                                \
    int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,            \
        float beta, float *C, int ldc
#define GEMM_PARAM_TYPES                                                                           \
    int, int, int, float, const float *, int, const float *, int, float, float *, int
#define GEMM_ARGS(g)                                                                               \
    (g)->M, (g)->N, (g)->K, (g)->alpha, (g)->A, (g)->lda, (g)->B, (g)->ldb, (g)->beta, (g)->C,     \
        (g)->ldc
typedef void (*whole_kernel)(GEMM_PARAM_TYPES);

static inline long long ceil_div(long long a, long long b)
{
    return (a - 1) / b + 1; /* a >= 1; (a + b - 1) / b could overflow for a near INT_MAX */
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 /* sm_80+ device code */
/* Tile number -> (tile_m, tile_n), RASTER_GROUP tile rows at a time, column by column: the
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

/* K tiles [j0, j1) of C tile `tile` (rasterized) in registers, then out: C := alpha*acc +
 * beta*C, or (out_slot: stream-K) the raw sums to a slot, raising out_flag, or (split) the tile's
 * slice to finish(), which adds the slices up (split-K: rungs 14 and 16). The sum starts from
 * zero, or (init_slot: stream-K) from another block's raw sums, read once init_flag is up, after
 * the first copies are on their way. K tile 0 is the partial one (k_first = K - 8*kt in (-8, 0],
 * slots k < 0 zero-filled): a range from j0 >= 1 has only full K tiles. The caller puts a barrier
 * between calls. */
typedef void (*split_finish_fn)(struct shape sh, const struct gemm_args *g, const void *split,
                                int tile, int tile_m, int tile_n, int row0, int col0,
                                float acc[TM_MAX][TN]);
static __device__ __forceinline__ void tile_product(struct shape sh, const struct gemm_args *g,
                                                    int tile, int j0, int j1,
                                                    const float4 *init_slot, unsigned *init_flag,
                                                    float4 *out_slot, unsigned *out_flag,
                                                    const void *split, split_finish_fn finish)
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
            cp_async_4(p.a_dst + 4u * (unsigned)(i * A_ROW_STEP(threads)), a_row_ptr[i] + max(k, 0),
                       k >= 0 ? p.a_bytes[i] : 0);
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
        /* A later start (a K slice, a stream-K piece): tile j0 is full, k = k_first + 8*j0 */
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
            if (tm == TM_MAX) { /* FFMA order (rung 12); the smaller tiles: a serpentine */
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
        finish(sh, g, split, tile, tile_m, tile_n, row0, col0, acc);
    } else {
        store_c(sh, g, tile_m, tile_n, row0, col0, acc);
    }
}

/* The whole of C tile `tile`, every K tile, into C := alpha*acc + beta*C. */
static __device__ __forceinline__ void whole_tile(struct shape sh, const struct gemm_args *g,
                                                  int tile)
{
    tile_product(sh, g, tile, 0, (g->K - 1) / BK + 1, NULL, NULL, NULL, NULL, NULL, NULL);
}
#endif /* sm_80+ device code */

/* A cudaLaunchKernelEx configuration with one attribute (sm_90): blocks in clusters of `size`
 * (size > 0; rung 16), or else allowed to start before the kernel ahead on the stream ends
 * (programmatic dependent launch, rung 18). */
static inline cudaLaunchConfig_t ex_config(long long blocks, int threads, int smem, int size,
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

/* cap[s] := clusters of s blocks (2 <= s <= SPLIT_MAX) that fit at one block per SM; all 0 where
 * the device has no clusters. Asked with over half an SM's shared memory. No stream work. */
#endif /* SGEMM_LADDER_FFMA_LOOP_CUH */
