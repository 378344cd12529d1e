/*
 * ffma_split_k.cuh - split-K of the 64x128 tiles, the slices meeting in global memory (rung 14,
 * and rung 15 after it): slice s of a tile computes K tiles [s*kt/slices, (s+1)*kt/slices),
 * stores its raw sums in a workspace slot, fences and counts itself on the tile's counter; the
 * last slice to count adds the slots up in slice order, 0 first, and writes C: the same floats
 * whichever slice ends last. The counter is left at zero for the next launch.
 * Include after ffma_loop.cuh.
 */
#ifndef SGEMM_LADDER_FFMA_SPLIT_K_CUH
#define SGEMM_LADDER_FFMA_SPLIT_K_CUH

struct split_k {
    int slices;       /* blocks per tile, >= 2 */
    int slice;        /* this block's slice (set in the kernel) */
    float4 *partials; /* slices slots of 64x128 floats per tile */
    unsigned *counts; /* counts[t]: slices of tile t done; the last one resets it to 0 */
};

#if HAS_CP_ASYNC
static __device__ __forceinline__ void split_finish(struct shape sh, const struct gemm_args *g,
                                                    const void *split, int tile, int tile_m,
                                                    int tile_n, int row0, int col0,
                                                    float acc[TM_MAX][TN])
{
    const struct split_k *sp = (const struct split_k *)split;
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
#endif

/* Block b is slice b / tiles of tile b % tiles, so blocks started together are the same slice of
 * neighbouring tiles and share A and B panels in L2. */
template <int B16>
static __global__ void __launch_bounds__(S_THREADS, 4) sgemm_split(GEMM_PARAMS, struct split_k sp)
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
    tile_product(sh, &g, tile, j0, j1, NULL, NULL, NULL, NULL, &sp, split_finish);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

/* `slices` blocks per 64x128 tile, meeting in the workspace `work` (counts: its flags). */
static inline cudaError_t launch_split_k(int step, int b16, const struct gemm_args *g, int slices,
                                         long long tiles, float *work, unsigned *counts,
                                         cudaStream_t stream)
{
    const struct split_k sp = {slices, 0, (float4 *)work, counts};
    sgemm_trace(step, "split-k", g->M, g->N, g->K, tiles * slices, slices);
    (b16 ? sgemm_split<1>
         : sgemm_split<0>)<<<(unsigned)(tiles * slices), S_THREADS,
                             SMEM_BYTES(S_STAGES, S_BM, S_BN), stream>>>(GEMM_ARGS(g), sp);
    return cudaGetLastError();
}

#endif /* SGEMM_LADDER_FFMA_SPLIT_K_CUH */
