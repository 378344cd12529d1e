/*
 * ffma_stream_k.cuh - stream-K for a partial last round of 128x256 tiles (rung 15, and rungs
 * 16-19 after it): the whole rounds but one run as whole tiles (by the rung's own kernel), the
 * rest's K tiles are shared out evenly over one block per SM, launched together (a cooperative
 * launch), a tile shared by two blocks still summed k in order. Include after ffma_loop.cuh.
 */
#ifndef SGEMM_LADDER_FFMA_STREAM_K_CUH
#define SGEMM_LADDER_FFMA_STREAM_K_CUH

struct stream_k {
    int dp_tiles;     /* tiles before the shared ones: the whole-tile kernel does them */
    int sk_tiles;     /* the tiles after them, whose K tiles are shared out evenly */
    float4 *partials; /* one slot of bm*bn floats per block */
    unsigned *flags;  /* flags[w] != 0: slot w holds block w's part of a tile, for block w+1 */
};

#if HAS_CP_ASYNC
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
    tile_product(sh, g, sk->dp_tiles + tile, j0, j1,
                 j0 > 0 ? sk->partials + (size_t)(w - 1) * slot_f4 : NULL,
                 j0 > 0 ? &sk->flags[w - 1] : NULL,
                 j1 < kt ? sk->partials + (size_t)w * slot_f4 : NULL,
                 j1 < kt ? &sk->flags[w] : NULL, NULL, NULL);
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

#endif

template <int B16> /* stream-K: one share per block, as many blocks as the GPU holds at once */
static __global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_stream_k(GEMM_PARAMS, struct stream_k sk)
{
#if HAS_CP_ASYNC
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};
    const struct shape sh = {L_WARPS_N, L_SUB_M, L_STAGES, B16, SUB_N};
    stream_k_body(sh, &g, &sk);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

/* The shares of the last whole round and the partial one, `blocks` blocks resident at once (a
 * cooperative launch; slots and flags in the workspace). *dp_tiles := the tiles before them,
 * for the caller's whole-tile kernel; 0 blocks launched (*launched = 0) if they don't fit. */
static inline cudaError_t launch_stream_k(int step, int b16, const struct gemm_args *g,
                                          long long blocks, long long tiles, float *work,
                                          unsigned *flags, cudaStream_t stream, int *launched,
                                          int *dp_tiles)
{
    struct stream_k sk;
    sk.dp_tiles = (int)((tiles / blocks - 1) * blocks);
    sk.sk_tiles = (int)(tiles - sk.dp_tiles);
    sk.partials = (float4 *)work;
    sk.flags = flags;
    struct gemm_args a = *g; /* addressable copies of the arguments */
    void *params[] = {&a.M, &a.N,   &a.K,    &a.alpha, &a.A,   &a.lda,
                      &a.B, &a.ldb, &a.beta, &a.C,     &a.ldc, &sk};
    *launched = 0;
    *dp_tiles = sk.dp_tiles;
    cudaError_t err = cudaLaunchCooperativeKernel(
        (const void *)(b16 ? sgemm_stream_k<1> : sgemm_stream_k<0>), dim3((unsigned)blocks),
        dim3(L_THREADS), params, (size_t)SMEM_BYTES(L_STAGES, L_BM, L_BN), stream);
    if (err == cudaErrorCooperativeLaunchTooLarge) {
        (void)cudaGetLastError(); /* not sticky: the caller runs whole tiles */
        return cudaSuccess;
    }
    if (err == cudaSuccess)
        err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    *launched = 1;
    sgemm_trace(step, "stream-k", g->M, g->N, g->K, blocks + sk.dp_tiles, 1);
    return cudaSuccess;
}

/* How many stream-K blocks fit on the device at once (0: no cooperative launch). */
static inline cudaError_t stream_k_resident(const struct sgemm_device *d, long long *resident)
{
    int per_sm = 0;
    cudaError_t err = cudaSuccess;
    if (d->cooperative && d->cc >= 80)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, (const void *)sgemm_stream_k<1>, L_THREADS,
            (size_t)SMEM_BYTES(L_STAGES, L_BM, L_BN));
    *resident = (long long)per_sm * d->sms;
    return err;
}

/* The workspace holds a slot (a 128x256 tile's floats) and a flag for every resident block. */
static inline int stream_k_fits(const struct sgemm_device *d, long long resident)
{
    return resident * L_BM * L_BN <= (long long)SGEMM_WORKSPACE_FLOATS(d->sms) &&
           resident <= SGEMM_WORKSPACE_FLAGS_PER_SM * (long long)d->sms;
}

#endif /* SGEMM_LADDER_FFMA_STREAM_K_CUH */
