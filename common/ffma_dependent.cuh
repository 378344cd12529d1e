/*
 * ffma_dependent.cuh - rung 18's idea, written once for rungs 18 and 19: the pieces of one
 * product as launches of the whole-tile kernel side by side, each started before the one ahead
 * ends (programmatic dependent launch, sm_90), and the plan that picks them.
 *
 *   sgemm_whole_from<>()   kernel: whole tiles from first_tile on, its dependents released at once
 *   sgemm_add_pieces()     kernel: the uneven tail's short pieces added to C
 *   struct ffma_facts      what a rung asks of each device (ffma_ask_device())
 *   launch_whole_from()    whole tiles of either size
 *   launch_slabs()         split-K into slabs, slices as early launches, the sum early
 *   launch_uneven()        the last round's tiles cut once along K
 *   launch_dependent()     the product on the plan the shape takes (rung 18's launch)
 * A rung passes the whole-tile kernels that write C (struct whole_kernels): rung 18 the plain
 * ones, rung 19 those that write C's unaligned rows by rows of the lane grid.
 */
#ifndef SGEMM_LADDER_FFMA_DEPENDENT_CUH
#define SGEMM_LADDER_FFMA_DEPENDENT_CUH

#include "sgemm_common.h"
#include "device_facts.h"
#include "sgemm_workspace.h"
#include "plan_costs.h"
#include "ffma_plan.h"
#include "ffma_tile.cuh"     /* rungs 11-12: tile, copies, fragments, epilogue, order */
#include "ffma_loop.cuh"     /* rung 13: rasterization, the K loop over a range */
#include "ffma_slabs.cuh"    /* rung 14: the large tiles' split into slabs */
#include "ffma_stream_k.cuh" /* rung 15: stream-K */
#include "ffma_cluster.cuh"  /* rungs 16-17: split-K in clusters, the 64x64 tile */

/* Whole tiles, block b computing C tile first_tile + b (first_tile, and the dependents
 * released at once: see launch_uneven()). */
template <int WARPS_N_, int SUB_M_, int STAGES_, int B16, int MIN_BLOCKS, int C_ROWS = 0>
static __global__ void __launch_bounds__(32 * WARPS_M * WARPS_N_, MIN_BLOCKS)
    sgemm_whole_from(GEMM_PARAMS, int first_tile)
{
#if HAS_CP_ASYNC
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const struct shape sh = {WARPS_N_, SUB_M_, STAGES_, B16, SUB_N, C_ROWS};
    whole_tile(sh, &g, first_tile + (int)blockIdx.x);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}
typedef void (*whole_from_kernel)(GEMM_PARAM_TYPES, int);
/* The whole-tile kernels a rung's launches write C with: large (128x256) and small (64x128). */
struct whole_kernels {
    whole_from_kernel large, small;
};
#define LARGE_FROM(b16) ((b16) ? sgemm_whole_from<L_WARPS_N, L_SUB_M, L_STAGES, 1, 1> \
                               : sgemm_whole_from<L_WARPS_N, L_SUB_M, L_STAGES, 0, 1>)
#define SMALL_FROM(b16) ((b16) ? sgemm_whole_from<S_WARPS_N, S_SUB_M, S_STAGES, 1, 4> \
                               : sgemm_whole_from<S_WARPS_N, S_SUB_M, S_STAGES, 0, 4>)
/* The same, C written by rows of the lane grid (store_c_rows(), common/ffma_tile.cuh: rung 19) */
#define LARGE_ROWS(b16) ((b16) ? sgemm_whole_from<L_WARPS_N, L_SUB_M, L_STAGES, 1, 1, 1> \
                               : sgemm_whole_from<L_WARPS_N, L_SUB_M, L_STAGES, 0, 1, 1>)
#define SMALL_ROWS(b16) ((b16) ? sgemm_whole_from<S_WARPS_N, S_SUB_M, S_STAGES, 1, 4, 1> \
                               : sgemm_whole_from<S_WARPS_N, S_SUB_M, S_STAGES, 0, 4, 1>)

/* The uneven tail's add: C tile first_tile + b += w (C's rows from row0 on, ldw % 4 == 0;
 * written by a kernel still running at launch: read .cg, not by the read-only path). A thread
 * loads ADD_BATCH rows before it stores any: else a memory latency a row (3.5% at 4095^3). */
#define ADD_THREADS 128 /* two rows of a tile at a time, 64 float4s each */
#define ADD_BATCH   7   /* rows in flight per thread: as many as 80 registers hold */
/* 80 registers: 216 x 256 + 80 x 128 fit */
static __global__ void __launch_bounds__(ADD_THREADS, 6)
    sgemm_add_pieces(int M, int N, float *__restrict__ C, int ldc, const float *w, int ldw,
                     int row0, int first_tile, int c_vec)
{
#if HAS_CP_ASYNC && __CUDA_ARCH__ >= 900 /* (trap below: the launcher needs sm_90) */
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

/* Per device (common/device_facts.h): how many stream-K blocks fit at once (0: none), how many
 * clusters of each size. */
struct ffma_facts {
    long long resident;
    int cluster_cap[SPLIT_MAX + 1];
};
static cudaError_t ffma_ask_device(const struct sgemm_device *d, void *entry)
{
    struct ffma_facts *f = (struct ffma_facts *)entry;
    const cudaError_t err = stream_k_resident(d, &f->resident);
    return err != cudaSuccess ? err : cluster_caps(d, f->cluster_cap);
}
/* The workspace (common/sgemm_workspace.h): its floats, then its flags. */

/* Whole tiles of either size (C spans <= INT_MAX floats: the count fits gridDim.x). */
static cudaError_t launch_whole_from(int step, const struct whole_kernels *k, int small,
                                     const struct gemm_args *g, long long tiles,
                                     cudaStream_t stream)
{
    sgemm_trace(step, small ? "whole-small" : "whole-large", g->M, g->N, g->K, tiles, 1);
    if (small)
        k->small<<<(unsigned)tiles, S_THREADS, SMEM_BYTES(S_STAGES, S_BM, S_BN), stream>>>(
            GEMM_ARGS(g), 0);
    else
        k->large<<<(unsigned)tiles, L_THREADS, SMEM_BYTES(L_STAGES, L_BM, L_BN), stream>>>(
            GEMM_ARGS(g), 0);
    return cudaGetLastError();
}

/* Split-K into slabs of the workspace, of the large tile or (small) the 64x128 one: up to
 * EARLY_SLICES_MAX slices as launches of the whole-tile kernel on K range y, each but the first
 * started early, then the sum, started early; more slices: rung 14's slices kernel. */
#define EARLY_SLICES_MAX 8
static cudaError_t launch_slabs(int step, int b16, const struct gemm_args *g, int slices, long long tiles,
                                int small, float *work, cudaStream_t stream)
{
    if (slices > EARLY_SLICES_MAX)
        return launch_slices(step, b16, g, slices, tiles, work, 1, stream);
    const int ldw = (int)ceil_div(g->N, 4) * 4;
    const int smem = small ? SMEM_BYTES(S_STAGES, S_BM, S_BN) : SMEM_BYTES(L_STAGES, L_BM, L_BN);
    const whole_from_kernel whole = small ? SMALL_FROM(b16) : LARGE_FROM(b16);
    const int kt = (int)ceil_div(g->K, BK), k_first = g->K % BK ? g->K % BK - BK : 0;
    cudaError_t err = cudaSuccess;
    cudaLaunchAttribute attr;
    sgemm_trace(step, small ? "small-split" : "large-split", g->M, g->N, g->K, tiles * slices,
                slices);
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
    const cudaError_t last = cudaGetLastError();
    if (err != cudaSuccess || last != cudaSuccess)
        return err != cudaSuccess ? err : last;
    return launch_sum_slices(g, work, ldw, slices, 1, stream);
}

/* The uneven tail: 1. the long pieces, tiles dp .. dp+r-1 over K [0, k_cut), into C; 2.
 * early, the short pieces, K [k_cut, K), into w (C's rows from row0 on; alpha, beta 0); 3. early,
 * the add, waiting for 1 and 2; 4. early, the whole tiles 0 .. dp-1 (4096^2, H200: 1.055; 1.048
 * with the add plain after the pieces). An error in 2-4 leaves C half done, as a failed kernel. */
static cudaError_t launch_uneven(int step, int b16, const struct whole_kernels *k,
                                 const struct gemm_args *g, long long tiles, int sms, int short_kt,
                                 float *work, cudaStream_t stream, int *launched)
{
    const whole_from_kernel whole = k->large, pieces = LARGE_FROM(b16); /* pieces: into w */
    const int smem = SMEM_BYTES(L_STAGES, L_BM, L_BN);
    const long long r = tiles % sms, dp = tiles - r;
    const int k_cut = (int)(ceil_div(g->K, BK) - short_kt) * BK;
    /* w: C from row0 on (the tile order is the whole tiles') */
    const int row0 = ffma_tail_row0(dp, g->N), ldw = (int)ceil_div(g->N, 4) * 4;
    sgemm_trace(step, "uneven-tail", g->M, g->N, g->K, tiles + r, 2);
    whole<<<(unsigned)r, L_THREADS, smem, stream>>>(g->M, g->N, k_cut, g->alpha, g->A, g->lda,
                                                    g->B, g->ldb, g->beta, g->C, g->ldc, (int)dp);
    cudaError_t err = cudaGetLastError();
    cudaLaunchAttribute attr;
    if (err == cudaSuccess) {
        const cudaLaunchConfig_t config = ex_config(r, L_THREADS, smem, 0, stream, &attr);
        err = cudaLaunchKernelEx(&config, pieces, g->M - row0, g->N, g->K - k_cut, g->alpha,
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

/* The product on the plan the shape takes (rung 18's launch; b16: B read 16 bytes at a time,
 * k: the whole-tile kernels that write C), traced as rung `step`. */
static cudaError_t launch_dependent(int step, const struct sgemm_device *dev,
                                    const struct ffma_facts *facts, int b16,
                                    const struct whole_kernels *k, const struct gemm_args *args,
                                    cudaStream_t stream)
{
    const struct sgemm_device d = *dev;
    const struct ffma_facts f = *facts;
    const struct gemm_args g = *args;
    const int M = g.M, N = g.N, K = g.K;
    cudaError_t err = cudaSuccess;
    const long long large = ceil_div(M, L_BM) * ceil_div(N, L_BN);
    const long long small = ceil_div(M, S_BM) * ceil_div(N, S_BN);
    const struct ffma_problem pr = {M, N, K, d.sms, f.resident,
                                    (long long)SGEMM_WORKSPACE_FLOATS(d.sms)};
    int short_kt = 0;
    const enum ffma_plan plan =
        ffma_choose_plan(&pr, FFMA_PLAN_STREAM_K | FFMA_PLAN_UNEVEN_TAIL, &short_kt);
    /* Without a workspace (no memory for one): whole tiles (stream-K: the same floats). */
    float *work = NULL;
    if (plan == FFMA_UNEVEN_TAIL ||
        (plan == FFMA_STREAM_K && stream_k_fits(&d, f.resident))) {
        int launched = 0, dp_tiles = 0;
        err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
        if (err != cudaSuccess || work == NULL)
            return err != cudaSuccess ? err : launch_whole_from(step, k, 0, &g, large, stream);
        if (plan == FFMA_UNEVEN_TAIL) /* NEW */
            return sgemm_workspace_done(
                stream, work,
                launch_uneven(step, b16, k, &g, large, d.sms, short_kt, work, stream, &launched));
        err = launch_stream_k(step, b16, &g, f.resident, large, work,
                              SGEMM_WORKSPACE_FLAGS(work, d.sms), stream, &launched, &dp_tiles);
        if (err != cudaSuccess || launched) {
            if (err == cudaSuccess && dp_tiles > 0) { /* the whole rounds before the shares */
                k->large<<<(unsigned)dp_tiles, L_THREADS,
                                   SMEM_BYTES(L_STAGES, L_BM, L_BN), stream>>>(GEMM_ARGS(&g), 0);
                err = cudaGetLastError();
            }
            return sgemm_workspace_done(stream, work, err);
        }
        /* the shares did not fit: the workspace unused, given back */
        if ((err = sgemm_workspace_done(stream, work, cudaSuccess)) != cudaSuccess)
            return err;
    }
    if (plan == FFMA_WHOLE_SMALL) {
        long long cost = 0, t_cost = 0;
        int large_slices = 1, small_slices = 1;
        const int slices = ffma_cluster_slices(small, K, d.sms, f.cluster_cap, 100, &cost);
        const long long tiny = ceil_div(M, S_BM) * ceil_div(N, T_BN); /* rung 17 */
        const int t_slices =
            ffma_cluster_slices(tiny, K, d.sms, f.cluster_cap, T_KT_COST, &t_cost);
        const int t = t_slices > 1 && t_cost < cost;
        cost = t ? t_cost : cost;
        const long long large_cost = ffma_large_split(large, &pr, &large_slices);
        /* the small tile in slabs, where blocks would share SMs */
        const long long slab_cost = ffma_small_slabs(small, &pr, EARLY_SLICES_MAX, &small_slices);
        const int use_small = slab_cost >= 0 && slab_cost < cost &&
                              (large_cost < 0 || slab_cost < large_cost);
        if (use_small || (large_cost >= 0 && large_cost < cost)) { /* slabs in the workspace */
            err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
            if (err != cudaSuccess || work != NULL)
                return err != cudaSuccess
                           ? err
                           : sgemm_workspace_done(
                                 stream, work,
                                 launch_slabs(step, b16, &g, use_small ? small_slices : large_slices,
                                              use_small ? small : large, use_small, work, stream));
        }
        if (slices > 1 || t) /* in clusters, no workspace needed */
            return launch_cluster_split(step, b16, &g, t ? t_slices : slices, t ? tiny : small, t,
                                        stream);
        return launch_whole_from(step, k, 1, &g, small, stream);
    }
    return launch_whole_from(step, k, 0, &g, large, stream);
}

#endif /* SGEMM_LADDER_FFMA_DEPENDENT_CUH */
