/*
 * mma_tile.cuh - the tile and K loop of the mma.sync rungs (20-22): a block of 8 warps computes
 * 128x128 of C, a warp 64x32 as 4 x 4 fragments of mma.sync.m16n8k8 (16x8 of C each), from K
 * tiles that cp.async brings into STAGES shared-memory stages.
 *   load_tile()  one K tile of A and B into a stage, zeros outside the matrices;
 *   mma_tf32()   one 16x8x8 product on the tensor cores, TF32 operands, FP32 sums;
 *   k_range()    K tiles [j0, j1) of one C tile into acc, the products of a K tile left to the
 *                rung (its Products).
 * Where a rung's K tile is 64 deep (BK_DEEP, 147,456 bytes of stages) or 32 (BK_LOW, 81,920:
 * sm_86 and sm_89, which hold less) is the rung's choice, by the device.
 */
#ifndef SGEMM_LADDER_MMA_TILE_CUH
#define SGEMM_LADDER_MMA_TILE_CUH

#include "cp_async.cuh" /* cp_async_4, cp_async_16, commit, wait */

#define BM      128 /* rows of C per block */
#define BN      128 /* cols of C per block */
#define BK_DEEP 64  /* K depth of one shared-memory tile (eight k8 steps) */
#define BK_LOW  32  /* ... on GPUs with less than SMEM_BYTES(BK_DEEP) per block (sm_86, sm_89) */
#define STAGES  2   /* K tiles in flight */
#define WARPS_M 2
#define WARPS_N 4
#define THREADS (32 * WARPS_M * WARPS_N) /* 256 */
#define WM      (BM / WARPS_M)           /* 64 rows of C per warp */
#define WN      (BN / WARPS_N)           /* 32 cols of C per warp */
#define MI      (WM / 16)                /* 4 fragments of 16x8 along M */
#define NI      (WN / 8)                 /* 4 along N */
/* Layouts in which a warp's fragment loads hit 32 different banks (lane (g, t) = (lane / 4,
 * lane % 4); bk: the K tile's depth). Counted by Nsight Compute at 4096 (H100,
 * before the epilogue's C tile): 0 bank conflicts on shared loads and stores, 100.7 M load
 * wavefronts for 51.9 M loads, the ideal 4 per LDS.128 and 1 per LDS.32.
 * A: rows padded to bk + 16 floats. Lane (g, t) reads a_tile[g][4t..4t+3] with one LDS.128
 *    (tile_products); a quarter warp (g = 0, 1; t = 0..3) covers banks 16g + 4t..4t+3: all 32.
 * B: rows of BN floats, unpadded; element (k, n) is stored at column b_col(k, n), n with its
 *    bits 3-4 XORed by bits 2-3 of k. Lane (g, t) reads rows 4t + c, c the same for the warp,
 *    columns 8j + g: bank 8 (j ^ t) + g mod 32, all 32. The XOR moves groups of 8 floats, so a
 *    16-byte copy lands whole. */
#define A_LD(bk)    ((bk) + 16)
#define B_LD        BN
#define A_STAGE(bk) (BM * A_LD(bk)) /* a_tile[BM][A_LD]: A as stored, row-major */
#define B_STAGE(bk) ((bk) * B_LD)   /* b_tile[bk][B_LD] */
/* 147,456 bytes for BK_DEEP, 81,920 for BK_LOW */
#define SMEM_BYTES(bk) (STAGES * (A_STAGE(bk) + B_STAGE(bk)) * (int)sizeof(float))

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800

/* B's column for element (k, n) of a tile: the swizzle of the layout comment above. */
static __device__ __forceinline__ int b_col(int k, int n)
{
    return n ^ (((k >> 2) & 3) << 3);
}

/* d = a b + c for one 16x8x8 fragment: a 16x8 of A (4 registers a lane), b 8x8 of B (2). */
static __device__ __forceinline__ void mma_tf32(float d[4], const unsigned a[4],
                                                const unsigned b[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* One K tile into shared memory: A rows m0.., cols k0..k0+BK-1; B rows k0.., cols n0..n0+BN-1.
 * Outside M, N or K the copies write zeros and read nothing (cp_async.cuh), and a zero adds
 * nothing to any product. VA/VB: 16-byte copies (lda and K, or ldb and N, multiples of 4 and
 * the operand 16-byte aligned), else 4-byte ones. */
template <int BK, int VA, int VB>
static __device__ __forceinline__ void load_tile(float *a_tile, float *b_tile, const float *A,
                                                 int lda, const float *B, int ldb, int M, int N,
                                                 int K, int m0, int n0, int k0)
{
    const int tid = threadIdx.x;
    if (VA) { /* 16-byte copies (BK 64): segment c4 of rows r0, r0 + 16, ..., r0 + 112;
               * from one clamped base by 32-bit offsets, as the 4-byte copies below */
        const int c4 = tid % (BK / 4), r0 = tid / (BK / 4), step = THREADS / (BK / 4);
        const int gk = k0 + 4 * c4, rows_left = M - m0 - r0, k_in = gk < K;
        const float *base = A + (size_t)min(m0 + r0, M - 1) * lda + (k_in ? gk : 0);
        const unsigned dst = (unsigned)__cvta_generic_to_shared(a_tile + r0 * A_LD(BK) + 4 * c4);
#pragma unroll
        for (int i = 0; i < BM / step; ++i) { /* 8 (BK 64), 4 (BK 32) */
            const int ok = k_in && i * step < rows_left;
            cp_async_16(dst + 4u * (unsigned)(i * step * A_LD(BK)),
                        base + (ok ? i * step * lda : 0), ok);
        }
    } else { /* 4-byte copies (BK 64): column c of rows r0, r0 + 4, ..., r0 + 124 */
        /* From one base, clamped into A, by 32-bit offsets (A spans <= INT_MAX floats); a copy
         * outside M or K takes offset 0 and reads nothing: one select per copy, no 64-bit
         * pointer arithmetic. */
        const int c = tid % BK, r0 = tid / BK, step = THREADS / BK;
        const int gk = k0 + c, rows_left = M - m0 - r0, k_in = gk < K;
        const float *base = A + (size_t)min(m0 + r0, M - 1) * lda + min(gk, K - 1);
        const unsigned dst = (unsigned)__cvta_generic_to_shared(a_tile + r0 * A_LD(BK) + c);
#pragma unroll
        for (int i = 0; i < BM / step; ++i) { /* 32 (BK 64), 16 (BK 32) */
            const int ok = k_in && i * step < rows_left;
            cp_async_4(dst + 4u * (unsigned)(i * step * A_LD(BK)),
                       base + (ok ? i * step * lda : 0), ok ? 4 : 0);
        }
    }
    if (VB) { /* 16-byte copies (BK 64): segment c4 of K rows r0, r0 + 8, ..., r0 + 56 */
        const int c4 = tid % (BN / 4), r0 = tid / (BN / 4), step = THREADS / (BN / 4);
        const int gc = n0 + 4 * c4, rows_left = K - k0 - r0, n_in = gc < N;
        const float *base = B + (size_t)min(k0 + r0, K - 1) * ldb + (n_in ? gc : 0);
        const unsigned dst = (unsigned)__cvta_generic_to_shared(b_tile);
#pragma unroll
        for (int i = 0; i < BK / step; ++i) { /* 8 (BK 64), 4 (BK 32) */
            const int ok = n_in && i * step < rows_left, row = r0 + i * step;
            cp_async_16(dst + 4u * (unsigned)(row * B_LD + b_col(row, 4 * c4)),
                        base + (ok ? i * step * ldb : 0), ok);
        }
    } else { /* 4-byte copies (BK 64): column c of K rows r0, r0 + 2, ..., r0 + 62 */
        const int c = tid % BN, r0 = tid / BN, step = THREADS / BN;
        const int gc = n0 + c, rows_left = K - k0 - r0, n_in = gc < N;
        const float *base = B + (size_t)min(k0 + r0, K - 1) * ldb + min(gc, N - 1);
        const unsigned dst = (unsigned)__cvta_generic_to_shared(b_tile);
#pragma unroll
        for (int i = 0; i < BK / step; ++i) { /* 32 (BK 64), 16 (BK 32) */
            const int ok = n_in && i * step < rows_left, row = r0 + i * step;
            cp_async_4(dst + 4u * (unsigned)(row * B_LD + b_col(row, c)),
                       base + (ok ? i * step * ldb : 0), ok ? 4 : 0);
        }
    }
}

/* A warp tile's MI x NI fragments of 16x8 sums, 4 floats a lane, set to zero. */
static __device__ __forceinline__ void clear(float frags[MI][NI][4])
{
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                frags[i][j][r] = 0.0f;
}

/* K tiles [j0, j1) of the C tile at (m0, n0) added into acc, one K tile at a time in k order,
 * through STAGES shared-memory stages; Products::add_tile<BK>(a_tile, b_tile, wn0, acc, g, t)
 * adds one K tile's products (rung 20: TF32 into acc; from rung 21: tf32x3.cuh). */
template <int BK, int VA, int VB, class Products>
static __device__ __forceinline__ void k_range(float *smem, const float *A, int lda,
                                               const float *B, int ldb, int M, int N, int K,
                                               int m0, int n0, int j0, int j1,
                                               float acc[MI][NI][4])
{
    float *a_tiles = smem, *b_tiles = smem + STAGES * A_STAGE(BK);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int g = lane / 4, t = lane % 4;
    const int k_tiles = j1 - j0;
    /* STAGES - 1 tiles in flight before the loop, one commit group each (empty past the
     * range). */
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles)
            load_tile<BK, VA, VB>(a_tiles + s * A_STAGE(BK), b_tiles + s * B_STAGE(BK), A, lda,
                                  B, ldb, M, N, K, m0, n0, (j0 + s) * BK);
        cp_async_commit();
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
        const int stage = kt % STAGES;
        cp_async_wait(STAGES - 2); /* this thread's copies of tile kt have landed */
        __syncthreads();           /* everyone's; and everyone is done with tile kt - 1 */
        {
            /* into the stage tile kt - 1 used: free since the barrier */
            const int next = kt + STAGES - 1;
            if (next < k_tiles)
                load_tile<BK, VA, VB>(a_tiles + (next % STAGES) * A_STAGE(BK),
                                      b_tiles + (next % STAGES) * B_STAGE(BK), A, lda, B, ldb,
                                      M, N, K, m0, n0, (j0 + next) * BK);
            cp_async_commit();
        }
        Products::template add_tile<BK>(a_tiles + stage * A_STAGE(BK) + wm * WM * A_LD(BK),
                                        b_tiles + stage * B_STAGE(BK), wn * WN, acc, g, t);
    }
    cp_async_wait_all(); /* only empty groups are left; none may outlive the range */
}

#endif

#endif /* SGEMM_LADDER_MMA_TILE_CUH */
