/*
 * ffma_whole.cuh - the whole-tile kernel of rungs 13-17 and its launch (rung 18 has its own, that
 * starts the kernels behind it early), and with stream-K (include ffma_stream_k.cuh first) the
 * way rungs 15-17 run stream-K: the shares, then the whole rounds before them. Include after
 * ffma_loop.cuh.
 */
#ifndef SGEMM_LADDER_FFMA_WHOLE_CUH
#define SGEMM_LADDER_FFMA_WHOLE_CUH

/* Whole tiles, block b computing C tile b. */
template <int WARPS_N_, int SUB_M_, int STAGES_, int B16, int MIN_BLOCKS>
static __global__ void __launch_bounds__(32 * WARPS_M * WARPS_N_, MIN_BLOCKS)
    sgemm_whole(GEMM_PARAMS)
{
#if HAS_CP_ASYNC
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const struct shape sh = {WARPS_N_, SUB_M_, STAGES_, B16, SUB_N};
    whole_tile(sh, &g, (int)blockIdx.x);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}
#define LARGE_WHOLE(b16)                                                                           \
    ((b16) ? sgemm_whole<L_WARPS_N, L_SUB_M, L_STAGES, 1, 1>                                     \
           : sgemm_whole<L_WARPS_N, L_SUB_M, L_STAGES, 0, 1>)
#define SMALL_WHOLE(b16)                                                                           \
    ((b16) ? sgemm_whole<S_WARPS_N, S_SUB_M, S_STAGES, 1, 4>                                     \
           : sgemm_whole<S_WARPS_N, S_SUB_M, S_STAGES, 0, 4>)

/* Whole tiles of either size (C spans <= INT_MAX floats: the count fits gridDim.x); `step`
 * names the rung in its trace line. */
static inline cudaError_t launch_whole(int step, int b16, int small, const struct gemm_args *g,
                                       long long tiles, cudaStream_t stream)
{
    sgemm_trace(step, small ? "whole-small" : "whole-large", g->M, g->N, g->K, tiles, 1);
    if (small)
        SMALL_WHOLE(b16)<<<(unsigned)tiles, S_THREADS, SMEM_BYTES(S_STAGES, S_BM, S_BN), stream>>>(
            GEMM_ARGS(g));
    else
        LARGE_WHOLE(b16)<<<(unsigned)tiles, L_THREADS, SMEM_BYTES(L_STAGES, L_BM, L_BN), stream>>>(
            GEMM_ARGS(g));
    return cudaGetLastError();
}

#ifdef SGEMM_LADDER_FFMA_STREAM_K_CUH
/* Stream-K as rungs 15-17 run it: the shares, then the whole rounds before them. Without a
 * workspace (no memory for one) whole tiles, the same floats. *done :=
 * 0 when the shares do not fit at once: then the caller runs another plan. */
static inline cudaError_t run_stream_k(int step, int b16, const struct gemm_args *g,
                                       const struct sgemm_device *d, long long resident,
                                       long long large, cudaStream_t stream, int *done)
{
    float *work = NULL;
    int launched = 0, dp_tiles = 0;
    *done = 1;
    cudaError_t err =
        sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d->sms), (void **)&work);
    if (err != cudaSuccess || work == NULL)
        return err != cudaSuccess ? err : launch_whole(step, b16, 0, g, large, stream);
    err = launch_stream_k(step, b16, g, resident, large, work,
                          SGEMM_WORKSPACE_FLAGS(work, d->sms), stream, &launched,
                          &dp_tiles);
    if (err == cudaSuccess && !launched) { /* the workspace unused: given back */
        *done = 0;
        return sgemm_workspace_done(stream, work, cudaSuccess);
    }
    if (err == cudaSuccess && dp_tiles > 0) { /* the whole rounds before the shares */
        LARGE_WHOLE(b16)<<<(unsigned)dp_tiles, L_THREADS, SMEM_BYTES(L_STAGES, L_BM, L_BN),
                           stream>>>(GEMM_ARGS(g));
        err = cudaGetLastError();
    }
    return sgemm_workspace_done(stream, work, err);
}
#endif

#endif /* SGEMM_LADDER_FFMA_WHOLE_CUH */
