/*
 * wgmma_roles.cuh - the warp-specialized 3xTF32 kernel of rungs 25-27: warpgroup 0, the
 * producer, brings raw K tiles (TMA, or 4-byte cp.async where TMA cannot describe an operand)
 * and splits B into B^T; warpgroups 1 and 2, the consumers, split A and keep wgmma in flight
 * (rung 24's loop); they meet only at mbarriers. Rung 26's feed (FEED_SPLIT_B) takes B^T big and
 * small already split, by TMA, and its producer only issues copies.
 *   sgemm_tf32x3_wgmma<FEED, SPLIT_STAGES>   the kernel;
 *   KERNEL_PAIR(feed)                         its sliced (split-K) and whole-tile instances;
 *   opt_in_kernels()                          host: their opt-in to their shared memory.
 * Include after wgmma.cuh and tma.cuh.
 */
#ifndef SGEMM_LADDER_WGMMA_ROLES_CUH
#define SGEMM_LADDER_WGMMA_ROLES_CUH

/* ---- The roles ---- */
#define THREADS (3 * WG) /* warpgroup 0: the producer; 1 and 2: the consumers */
/* B^T stages (the kernel's SPLIT_STAGES): one read by wgmma, one written, and for whole tiles a
 * spare (+3% at 8192; 15-20% slower on the split-K shapes): 230,400 bytes whole, 197,632 sliced */
#define SPLIT_STAGES_WHOLE  3
#define SPLIT_STAGES_SLICED 2
#define SMEM(whole)         SMEM_BYTES((whole) ? SPLIT_STAGES_WHOLE : SPLIT_STAGES_SLICED)
/* Registers per thread after setmaxnreg: the consumers hold acc, chunk and A's fragments;
 * 128 * 56 + 256 * 224 = 64,512 = 384 * 168, what __launch_bounds__(384, 1) gives. */
#define PRODUCER_REGS 56
#define CONSUMER_REGS 224
#define FEED_COPY 0 /* raw A and B by the producer's 4-byte cp.async: TMA cannot describe them */
#define FEED_TMA  1 /* by TMA */
#define FEED_SPLIT_B 2 /* A raw and B^T big and small by TMA, B split before the product */
static_assert(SMEM(1) <= 227 * 1024, "an H100 block holds at most 227 KB");

#if defined(__CUDA_ARCH_FEAT_SM90_ALL) /* sm_90a: wgmma, setmaxnreg */

/* The barriers, one 8-byte mbarrier each, per stage:
 *   raw_full:    the raw tile has landed (TMA's byte count, or the producers' copies);
 *   raw_empty:   everyone who reads the raw tile has read it (384 threads; SPLIT_B: 256);
 *   split_full:  B^T big/small written and fenced (128 producers; SPLIT_B: TMA's byte count);
 *   split_empty: both consumer warpgroups' wgmma on them have completed (256 consumers). */
#define BAR_RAW_FULL    0
#define BAR_RAW_EMPTY   (BAR_RAW_FULL + RAW_STAGES)
#define BAR_SPLIT_FULL  (BAR_RAW_EMPTY + RAW_STAGES)
#define BAR_SPLIT_EMPTY (BAR_SPLIT_FULL + SPLIT_STAGES)
#define BARS            (BAR_SPLIT_EMPTY + SPLIT_STAGES) /* SPLIT_STAGES: the kernel's */

#endif /* sm_90a */

/* C (m0..m0+BM-1) x (n0..n0+BN-1) = A B, `slices` blocks per tile (block b: tile b / slices,
 * K slice b % slices). One slice: the block finishes C. Several: it writes its partial sums to
 * work[b] and sum_slices() finishes C. FEED_TMA: tmap_a and tmap_b describe A and B;
 * FEED_SPLIT_B: tmap_b describes B^T big and small. */
template <int FEED, int SPLIT_STAGES>
static __global__ void __launch_bounds__(THREADS, 1)
    sgemm_tf32x3_wgmma(const __grid_constant__ CUtensorMap tmap_a,
                       const __grid_constant__ CUtensorMap tmap_b, int M, int N, int K,
                       float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                       float *C, int ldc, int slices, float *work)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long bars[BARS];
    const unsigned raw_addr = (unsigned)__cvta_generic_to_shared(smem_raw);
    const unsigned pad = (SMEM_ALIGN - (raw_addr % SMEM_ALIGN)) % SMEM_ALIGN;
    unsigned char *raw = smem_raw + pad; /* [RAW_STAGES][A raw, B raw] */
    unsigned char *bt = raw + RAW_STAGES * RAW_STAGE_BYTES; /* [SPLIT_STAGES][big, small] */
    const unsigned raw_s = raw_addr + pad, bt_s = raw_s + RAW_STAGES * RAW_STAGE_BYTES;
    const unsigned bar = (unsigned)__cvta_generic_to_shared(bars);
#define BAR(i) (bar + 8u * (unsigned)(i))

    const int tid = (int)threadIdx.x;
    int m0, n0;
    tile_origin((int)blockIdx.x / slices, slices, M, N, &m0, &n0);

    /* This block's K tiles: [kt0, kt0 + k_tiles), the slices as even as whole tiles allow. */
    const int slice = (int)blockIdx.x % slices, all_k_tiles = (K - 1) / BK + 1;
    const int kt0 = (int)((long long)slice * all_k_tiles / slices);
    const int k_tiles = (int)((long long)(slice + 1) * all_k_tiles / slices) - kt0;

    if (tid == 0) {
        for (int r = 0; r < RAW_STAGES; ++r) {
            bar_init(BAR(BAR_RAW_FULL + r), 1);
            /* read by the consumers (A) and, where it splits B, the producer */
            bar_init(BAR(BAR_RAW_EMPTY + r), FEED == FEED_SPLIT_B ? 2 * WG : THREADS);
        }
        for (int p = 0; p < SPLIT_STAGES; ++p) {
            bar_init(BAR(BAR_SPLIT_FULL + p), FEED == FEED_SPLIT_B ? 1 : WG);
            bar_init(BAR(BAR_SPLIT_EMPTY + p), 2 * WG);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads(); /* the last block-wide barrier: after it each warpgroup keeps to its role */

    if (tid < WG) {
        /* ---- The producer: brings raw tiles, splits and transposes B ---- */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
        const int p = tid;
        if (FEED == FEED_SPLIT_B) {
            /* Thread 0 alone: A and B^T big and small, each once its stage's readers are done */
            for (int kt = 0; p == 0 && kt < k_tiles; ++kt) {
                const int r = kt % RAW_STAGES, s = kt % SPLIT_STAGES, k0 = (kt0 + kt) * BK;
                const unsigned b_big = bt_s + s * SPLIT_STAGE_BYTES;
                bar_wait(BAR(BAR_RAW_EMPTY + r), ((kt / RAW_STAGES) & 1) ^ 1);
                bar_arrive_expect(BAR(BAR_RAW_FULL + r), A_RAW_BYTES);
                tma_load_2d(raw_s + r * RAW_STAGE_BYTES, &tmap_a, k0, m0, BAR(BAR_RAW_FULL + r));
                bar_wait(BAR(BAR_SPLIT_EMPTY + s), ((kt / SPLIT_STAGES) & 1) ^ 1);
                bar_arrive_expect(BAR(BAR_SPLIT_FULL + s), SPLIT_STAGE_BYTES);
                tma_load_2d(b_big, &tmap_b, k0, n0, BAR(BAR_SPLIT_FULL + s));
                tma_load_2d(b_big + SPLIT_PART_BYTES, &tmap_b, k0, ((N - 1) / BN + 1) * BN + n0,
                            BAR(BAR_SPLIT_FULL + s));
            }
            return;
        }
        /* Raw tile j (block-relative) into stage j % RAW_STAGES once its readers are done.
         * TMA: thread 0 alone; the fallback: all 128, each its own copies. */
        auto fetch = [&](int j) {
            const int r = j % RAW_STAGES;
            const unsigned stage = raw_s + r * RAW_STAGE_BYTES;
            if (FEED == FEED_TMA) {
                if (p == 0) {
                    bar_wait(BAR(BAR_RAW_EMPTY + r), ((j / RAW_STAGES) & 1) ^ 1);
                    bar_arrive_expect(BAR(BAR_RAW_FULL + r), RAW_STAGE_BYTES);
                    tma_load_2d(stage, &tmap_a, (kt0 + j) * BK, m0, BAR(BAR_RAW_FULL + r));
                    tma_load_2d(stage + A_RAW_BYTES, &tmap_b, n0, (kt0 + j) * BK,
                                BAR(BAR_RAW_FULL + r));
                }
            } else {
                bar_wait(BAR(BAR_RAW_EMPTY + r), ((j / RAW_STAGES) & 1) ^ 1);
                const int k0 = (kt0 + j) * BK;
                if (m0 + BM <= M && n0 + BN <= N && k0 + BK <= K) {
                    copy_a_inside(stage, A + (size_t)(m0 + p / BK) * lda + p % BK + k0,
                                  (size_t)4 * lda, p);
                    copy_b_inside(stage, B + (size_t)k0 * ldb + n0 + p, ldb, p);
                } else {
                    copy_a_raw(stage, A, lda, M, K, m0, k0, p);
                    copy_b_raw(stage, B, ldb, N, K, n0, k0, p);
                }
            }
        };
        for (int j = 0; j < RAW_STAGES - 1; ++j) {
            if (j < k_tiles)
                fetch(j);
            if (FEED == FEED_COPY)
                cp_async_commit();
        }
        for (int kt = 0; kt < k_tiles; ++kt) {
            const int r = kt % RAW_STAGES, s = kt % SPLIT_STAGES;
            if (kt + RAW_STAGES - 1 < k_tiles)
                fetch(kt + RAW_STAGES - 1);
            if (FEED == FEED_COPY) {
                /* Groups: tiles 0..kt + RAW_STAGES - 1 (empty past the end); RAW_STAGES - 1
                 * pending: tile kt's copies landed, everyone's after the barrier. */
                cp_async_commit();
                cp_async_wait(RAW_STAGES - 1);
                asm volatile("bar.sync 1, 128;\n" ::: "memory"); /* the producers alone */
                if (p == 0)
                    bar_arrive(BAR(BAR_RAW_FULL + r));
            }
            bar_wait(BAR(BAR_RAW_FULL + r), (kt / RAW_STAGES) & 1);
            bar_wait(BAR(BAR_SPLIT_EMPTY + s), ((kt / SPLIT_STAGES) & 1) ^ 1);
            for (int blk = 0; blk < 2; ++blk) /* two of a tile's 256 blocks a producer */
                split_b_block(raw + r * RAW_STAGE_BYTES + A_RAW_BYTES, bt + s * SPLIT_STAGE_BYTES,
                              p / 8 + 16 * blk, p % 8);
            bar_arrive(BAR(BAR_RAW_EMPTY + r));
            fence_proxy_async();
            bar_arrive(BAR(BAR_SPLIT_FULL + s));
        }
        if (FEED == FEED_COPY)
            cp_async_wait_all(); /* only empty groups are left; none may outlive the block */
        return;
    }

    /* ---- The consumers: warpgroup 1 rows 0..63 of the tile, warpgroup 2 rows 64..127 ---- */
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
    const int wg = tid / WG - 1; /* of the consumers: 0 or 1 */
    const int warp = (tid / 32) % 4, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int row0 = wg * WG_ROWS + warp * 16 + g; /* this thread's rows: row0, row0 + 8 */
    const int a_row[2] = {row0 * ROW_BYTES, (row0 + 8) * ROW_BYTES};

    float acc[ACC_REGS], chunk[ACC_REGS];
#pragma unroll
    for (int i = 0; i < ACC_REGS; ++i) {
        acc[i] = 0.0f;
        chunk[i] = 0.0f; /* never read (a chunk's first wgmma ignores it), but defined */
    }
    /* A of tile kt into a_next, once TMA or the producer's copies have landed it; its raw stage
     * handed back before the split. */
    auto prepare = [&](int kt, unsigned a_next[K8_STEPS][2][4]) {
        const int r = kt % RAW_STAGES;
        bar_wait(BAR(BAR_RAW_FULL + r), (kt / RAW_STAGES) & 1);
        float2 v[K8_STEPS][2];
        read_a(raw + r * RAW_STAGE_BYTES, a_row, g, t, v);
        bar_arrive(BAR(BAR_RAW_EMPTY + r));
        split_a(v, a_next);
    };
    /* Tile kt, whose A is split in `a`: its twelve wgmma issued once the producer has filled its
     * B^T stage, and while they run, the wait for the tile before's (its B^T stage handed back to
     * the producer, its A registers free) and A of tile kt + 1.
     * After a chunk's last tile (`sums`) and the last tile: the wait for all, chunk into acc by
     * FADD. starts and sums are constants where inlined: ptxas keeps wgmma in flight only across
     * branches it sees are uniform. */
    auto multiply = [&](int kt, unsigned a[K8_STEPS][2][4], unsigned a_next[K8_STEPS][2][4],
                        const int starts, const int sums) {
        const int s = kt % SPLIT_STAGES;
        bar_wait(BAR(BAR_SPLIT_FULL + s), (kt / SPLIT_STAGES) & 1);
        pin_a(a);
        wgmma_fence();
        tile_wgmma(chunk, a, bt_s + s * SPLIT_STAGE_BYTES, starts);
        wgmma_commit();
        if (!starts) { /* tile kt - 1's wgmma still run (a starting tile's are all done) */
            wgmma_wait<1>(chunk, a_next);
            bar_arrive(BAR(BAR_SPLIT_EMPTY + (kt - 1) % SPLIT_STAGES));
        }
        if (kt + 1 < k_tiles)
            prepare(kt + 1, a_next);
        if (sums || kt == k_tiles - 1) {
            wgmma_wait<0>(chunk, a);
            bar_arrive(BAR(BAR_SPLIT_EMPTY + s));
#pragma unroll
            for (int i = 0; i < ACC_REGS; ++i)
                acc[i] += chunk[i]; /* rounded to nearest, outside the tensor core */
            pin(acc);
        }
    };
    /* Two sets of A fragments: the tensor core reads one while the other is filled. The loop
     * goes two tiles at a time so that each set stays in its own registers: one chunk, 64 of K
     * (the tensor core truncates as it adds, so its sums stay short, but each sum drains the
     * warpgroup's wgmma queue). */
    unsigned a0[K8_STEPS][2][4], a1[K8_STEPS][2][4];
    if (k_tiles > 0)
        prepare(0, a0);
    if (k_tiles < SHORT_K_TILES) { /* a short K: a chunk a tile (common/wgmma.cuh) */
        for (int kt = 0; kt < k_tiles; kt += 2) {
            multiply(kt, a0, a1, 1, 1);
            if (kt + 1 < k_tiles)
                multiply(kt + 1, a1, a0, 1, 1);
        }
    } else {
        for (int kt = 0; kt < k_tiles; kt += 2) {
            multiply(kt, a0, a1, 1, 0);
            if (kt + 1 < k_tiles)
                multiply(kt + 1, a1, a0, 0, 1);
        }
    }
    /* named barrier 2: 1 is the producers' */
    finish_tile<2>((float *)raw, tid - WG, row0, acc, slices, work, M, N, K, alpha, A, lda, B,
                   ldb, beta, C, ldc, m0, n0);
#elif defined(__CUDA_ARCH__)
    __trap(); /* no wgmma in this image: launch() asks wgmma_image_loaded() and never gets here */
#endif
}

typedef void (*tf32x3_kernel)(const CUtensorMap, const CUtensorMap, int, int, int, float,
                              const float *, int, const float *, int, float, float *, int, int,
                              float *);
/* [FEED][whole tiles] */
#define KERNEL_PAIR(feed) {sgemm_tf32x3_wgmma<feed, SPLIT_STAGES_SLICED>, \
                           sgemm_tf32x3_wgmma<feed, SPLIT_STAGES_WHOLE>}

/* A rung's device facts (common/device_facts.h), once per device, no stream work: *has_wgmma,
 * whether the image has the wgmma body, and then each kernels[feed][whole] (NULL: none) opted
 * in to SMEM(whole) bytes of shared memory. */
static inline cudaError_t opt_in_kernels(const tf32x3_kernel (*kernels)[2], int feeds,
                                         int *has_wgmma)
{
    cudaError_t err = cudaSuccess;
    *has_wgmma = wgmma_image_loaded();
    for (int i = 0; i < 2 * feeds && err == cudaSuccess && *has_wgmma; ++i)
        if (kernels[i / 2][i % 2] != NULL)
            err = cudaFuncSetAttribute((const void *)kernels[i / 2][i % 2],
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM(i % 2));
    return err;
}

#endif /* SGEMM_LADDER_WGMMA_ROLES_CUH */
