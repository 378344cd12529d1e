/*
 * ffma_slabs.cuh - split-K of the 128x256 tiles for a long K (rung 14, and rungs 15-18 after
 * it): block (x, y) computes tile x over K slice y with the whole-tile K loop, into slab y of
 * the workspace (M x ldw floats, alpha 1, beta 0), and a second kernel adds the slabs up in
 * slab order into C: the same floats on every run. Include after ffma_loop.cuh.
 */
#ifndef SGEMM_LADDER_FFMA_SLABS_CUH
#define SGEMM_LADDER_FFMA_SLABS_CUH

/* Split-K on the large tile: block (x, y) computes tile x over K slice y into slab y of the
 * workspace (alpha 1, beta 0), whole-tile K loop; sgemm_sum_slices() adds the slabs in order. */
template <int B16>
static __global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_slices(int M, int N, int K, const float *A, int lda, const float *B, int ldb, float *work,
                 int ldw)
{
#if HAS_CP_ASYNC
    const int kt = (K - 1) / BK + 1, s = (int)blockIdx.y, slices = (int)gridDim.y;
    const struct gemm_args g = {M,  N, K, 1.0f, A, lda, B, ldb, 0.0f, work + (size_t)s * M * ldw,
                                ldw};
    const struct shape sh = {L_WARPS_N, L_SUB_M, L_STAGES, B16, SUB_N};
    tile_product(sh, &g, (int)blockIdx.x, (int)((long long)kt * s / slices),
                 (int)((long long)kt * (s + 1) / slices), NULL, NULL, NULL, NULL, NULL, NULL);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

/* C := alpha * (slab 0 + slab 1 + ...) + beta * C, slabs in a fixed order (the same floats every
 * run): a thread per float4 of C, rows flattened (work for all, however narrow C is); above
 * SUM_SLABS_ALONE slabs `groups` threads share a float4, each adding a run of slabs, the runs in
 * order (256^2 x 16384, 66 slabs: 13.9 -> 9.7 us, Nsight Compute). beta == 0 never reads C. */
#define SUM_THREADS     256
#define SUM_SLABS_ALONE 8 /* up to 8 slabs (the early slices): one thread adds them all */
#define SUM_GROUPS      8 /* above that, 8 threads share 4 floats (measured against 4 and 1) */
static __global__ void __launch_bounds__(SUM_THREADS)
    sgemm_sum_slices(int M, int N, float alpha, float beta, float *C, int ldc, const float *work,
                     int ldw, int slices, int c_vec)
{
#if HAS_CP_ASYNC
#if __CUDA_ARCH__ >= 900
    /* Launched early (rung 18), it waits here for the slices; else this returns at once. */
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    __shared__ float4 runs[SUM_THREADS];
    const int groups = slices > SUM_SLABS_ALONE ? SUM_GROUPS : 1;
    const int per_block = SUM_THREADS / groups, q = (int)threadIdx.x % per_block;
    const int run = (int)threadIdx.x / per_block;              /* this thread's run of slabs */
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

/* The sum of `slices` slabs (rows of ldw floats) into C; early: launched to start before the
 * kernels ahead on the stream end (rung 18), waiting for them inside. */
static inline cudaError_t launch_sum_slices(const struct gemm_args *g, float *work, int ldw,
                                            int slices, int early, cudaStream_t stream)
{
    cudaLaunchAttribute attr;
    const int c_vec = (g->ldc % 4 == 0) && sgemm_aligned16(g->C);
    const long long per_block = SUM_THREADS / (slices > SUM_SLABS_ALONE ? SUM_GROUPS : 1);
    cudaLaunchConfig_t config = ex_config(ceil_div((long long)g->M * (ldw / 4), per_block),
                                          SUM_THREADS, 0, 0, stream, &attr);
    config.numAttrs = early;
    const cudaError_t err =
        cudaLaunchKernelEx(&config, sgemm_sum_slices, g->M, g->N, g->alpha, g->beta, g->C, g->ldc,
                           (const float *)work, ldw, slices, c_vec);
    const cudaError_t last = cudaGetLastError();
    return err != cudaSuccess ? err : last;
}

/* The large tiles' K in `slices` slabs of the workspace, then their sum into C. */
static inline cudaError_t launch_slices(int step, int b16, const struct gemm_args *g, int slices,
                                        long long tiles, float *work, int early_sum,
                                        cudaStream_t stream)
{
    const int ldw = (int)ceil_div(g->N, 4) * 4;
    const dim3 grid((unsigned)tiles, (unsigned)slices);
    sgemm_trace(step, "large-split", g->M, g->N, g->K, tiles * slices, slices);
    (b16 ? sgemm_slices<1>
         : sgemm_slices<0>)<<<grid, L_THREADS, SMEM_BYTES(L_STAGES, L_BM, L_BN), stream>>>(
        g->M, g->N, g->K, g->A, g->lda, g->B, g->ldb, work, ldw);
    const cudaError_t err = cudaGetLastError();
    return err != cudaSuccess ? err : launch_sum_slices(g, work, ldw, slices, early_sum, stream);
}

#endif /* SGEMM_LADDER_FFMA_SLABS_CUH */
