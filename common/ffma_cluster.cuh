/*
 * ffma_cluster.cuh - split-K in thread block clusters (sm_90; rung 16, and rungs 17-19 after
 * it): the slices of a tile run as one cluster, started together on one GPC, each able to read
 * the others' shared memory. Each slice parks its raw sums in its own shared memory; one cluster
 * barrier replaces rung 14's slots, fences and count; every slice adds up 1/slices of the tile,
 * slices 0, 1, ... in order (the same floats every run); a second barrier keeps the shared
 * memory alive until all are done. No workspace: a captured call splits as a direct one.
 * cluster_caps() asks the driver how many clusters of each size fit at one block per SM: a
 * cluster never spans two GPCs, so fewer fit than SMs / s. Include after ffma_loop.cuh.
 */
#ifndef SGEMM_LADDER_FFMA_CLUSTER_CUH
#define SGEMM_LADDER_FFMA_CLUSTER_CUH

#define CLUSTER_MIN_BLOCKS 3 /* the cluster kernel's launch bound, blocks per SM */
#define T_SUB_N            1 /* the 64x64 tile (rung 17): 4 warps (2 x 2) of 32x32, 8x4 of C a thread */
#define T_BN               (S_WARPS_N * WARP_COLS(T_SUB_N)) /* 64; 64 rows, 128 threads, as the 64x128 */

struct cluster_split { /* slice s computes K tiles [s*kt/slices, (s+1)*kt/slices) */
    int slices;        /* blocks per tile, 2..8: one cluster */
    int slice;         /* this block's slice: its rank in the cluster (set in the kernel) */
};

#if HAS_CP_ASYNC
static __device__ __forceinline__ void cluster_finish(struct shape sh, const struct gemm_args *g,
                                                      const void *split, int tile, int tile_m,
                                                      int tile_n, int row0, int col0,
                                                      float acc[TM_MAX][TN])
{
#if __CUDA_ARCH__ >= 900
    const struct cluster_split *sp = (const struct cluster_split *)split;
    (void)tile;
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
    __cluster_barrier_arrive();           /* release: this slice's partial sums ... */
    __cluster_barrier_wait();             /* acquire: ... and every other slice's, visible to all */
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
    (void)sh, (void)g, (void)split, (void)tile, (void)tile_m, (void)tile_n, (void)row0, (void)col0;
    (void)acc;
    __trap(); /* no clusters below sm_90; the launcher never gets here */
#endif
}

#endif

/* Split-K on 64x128 or 64x64 tiles: blocks b - rank .. b - rank + slices - 1, a cluster, tile
 * b / slices */
template <int B16, int SUB_N_>
static __global__ void __launch_bounds__(S_THREADS, CLUSTER_MIN_BLOCKS)
    sgemm_cluster_split(GEMM_PARAMS, struct cluster_split sp)
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
    tile_product(sh, &g, tile, j0, j1, NULL, NULL, NULL, NULL, &sp, cluster_finish);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

/* How many clusters fit at one block per SM: asked with over half an SM's shared memory */
static __global__ void cluster_capacity_probe(void) {}
static inline cudaError_t cluster_caps(const struct sgemm_device *d, int cap[SPLIT_MAX + 1])
{
    for (int s = 0; s <= SPLIT_MAX; ++s)
        cap[s] = 0;
    const int smem = d->smem_sm / 2 + 1024;
    if (!d->clusters || d->cc < 90 || smem > d->smem_optin)
        return cudaSuccess;
    cudaError_t err = cudaFuncSetAttribute((const void *)cluster_capacity_probe,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    for (int s = 2; s <= SPLIT_MAX && err == cudaSuccess; ++s) {
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t config = ex_config(s, S_THREADS, smem, s, 0, &attr);
        err =
            cudaOccupancyMaxActiveClusters(&cap[s], (const void *)cluster_capacity_probe, &config);
    }
    return err;
}

/* Split-K in clusters of `slices` blocks, 64x128 tiles or 64x64 (t); smem: stages or sums */
static inline cudaError_t launch_cluster_split(int step, int b16, const struct gemm_args *g,
                                               int slices, long long tiles, int t,
                                               cudaStream_t stream)
{
    const struct cluster_split sp = {slices, 0};
    const int bn = t ? T_BN : S_BN, sums = S_BM * bn * (int)sizeof(float);
    const int smem = SMEM_BYTES(S_STAGES, S_BM, bn) > sums ? SMEM_BYTES(S_STAGES, S_BM, bn) : sums;
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t config =
        ex_config(tiles * slices, S_THREADS, smem, slices, stream, &attr);
    void (*kernel)(GEMM_PARAM_TYPES, struct cluster_split) =
        t ? (b16 ? sgemm_cluster_split<1, T_SUB_N> : sgemm_cluster_split<0, T_SUB_N>)
          : (b16 ? sgemm_cluster_split<1, SUB_N> : sgemm_cluster_split<0, SUB_N>);
    sgemm_trace(step, t ? "split-k-64" : "split-k", g->M, g->N, g->K, tiles * slices, slices);
    const cudaError_t err = cudaLaunchKernelEx(&config, kernel, g->M, g->N, g->K, g->alpha, g->A,
                                               g->lda, g->B, g->ldb, g->beta, g->C, g->ldc, sp);
    const cudaError_t last = cudaGetLastError();
    return err != cudaSuccess ? err : last;
}

#endif /* SGEMM_LADDER_FFMA_CLUSTER_CUH */
