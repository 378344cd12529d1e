/*
 * tf32x3.cuh - 3xTF32 (rung 21, and the mma.sync rungs after it): a float as a TF32 big part and
 * a TF32 small part, three tensor-core products where one TF32 product loses 2^-11 of each
 * operand, and the sums of a K tile kept apart from the long sum over K.
 *   split()                   x = big + small;
 *   tile_products()           one K tile's three products a fragment, into a zeroed chunk;
 *   tf32x3_products::add_tile the Products of k_range() (mma_tile.cuh): a K tile's chunk,
 *                             added to acc by FADD, outside the truncating tensor core.
 * Include after mma_tile.cuh.
 */
#ifndef SGEMM_LADDER_TF32X3_CUH
#define SGEMM_LADDER_TF32X3_CUH

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800

/* x as big + small, both as the 32-bit registers the mma reads (it ignores the low 13 bits);
 * small = x - big as a float. sm_90 rounds big in one instruction (cvt.rn.tf32.f32: SASS
 * F2FP.TF32), sm_80-89 by the carry of 0x1000 (two: IADD, LOP3). */
static __device__ __forceinline__ void split(float x, unsigned *big, unsigned *small)
{
#if __CUDA_ARCH__ >= 900
    unsigned b;
    asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(b) : "f"(x));
    *big = b;
    *small = __float_as_uint(x - __uint_as_float(b));
#else
    const unsigned b = __float_as_uint(x) + 0x1000u;
    *big = b;
    *small = __float_as_uint(x - __uint_as_float(b & 0xffffe000u));
#endif
}

/* One K tile's products into chunk, two k8 steps at a time. The mma sums its eight k in one
 * step, so which eight k a step takes, and in which slots, is free as long as A's and B's
 * fragments agree. In this layout lane t takes k = 4t..4t+3 of the 16-deep pair: the first step
 * 4t and 4t + 1 (as the mma's k = t and t + 4), the second 4t + 2 and 4t + 3. Then a lane's A
 * elements of both steps are four consecutive floats of its row: one LDS.128 per row (rows g
 * and g + 8) loads what took eight LDS.32 (k = t and t + 4 of two steps, two rows). B's
 * fragment reads rows 4t + 2h and 4t + 2h + 1 of column g. Per pair, the warp's B fragments are
 * split once (both steps), then per 16-row A fragment the three products into each of its four
 * 16x8 chunks, small terms first (the smallest: a truncating sum loses least when it starts
 * with them). */
template <int BK>
static __device__ __forceinline__ void tile_products(const float *a_tile, const float *b_tile,
                                                     int wn0, float chunk[MI][NI][4], int g,
                                                     int t)
{
#pragma unroll
    for (int kp = 0; kp < BK / 16; ++kp) {
        unsigned b_big[2][NI][2], b_small[2][NI][2]; /* [step of the pair][fragment][k slot] */
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                const int k = kp * 16 + 4 * t + 2 * h;
                const float *p = b_tile + k * B_LD + b_col(k, wn0 + j * 8 + g);
                split(p[0], &b_big[h][j][0], &b_small[h][j][0]);
                split(p[B_LD], &b_big[h][j][1], &b_small[h][j][1]); /* k + 1: same swizzle */
            }
#pragma unroll
        for (int i = 0; i < MI; ++i) {
            const float *p = a_tile + (i * 16 + g) * A_LD(BK) + kp * 16 + 4 * t;
            const float4 row_g = *(const float4 *)p, row_g8 = *(const float4 *)(p + 8 * A_LD(BK));
            /* Fragment layout (PTX ISA, mma.m16n8k8 .tf32): a0 = (g, k slot t), a1 = (g + 8, t),
             * a2 = (g, t + 4), a3 = (g + 8, t + 4). */
            unsigned a_big[2][4], a_small[2][4];
            split(row_g.x, &a_big[0][0], &a_small[0][0]);
            split(row_g8.x, &a_big[0][1], &a_small[0][1]);
            split(row_g.y, &a_big[0][2], &a_small[0][2]);
            split(row_g8.y, &a_big[0][3], &a_small[0][3]);
            split(row_g.z, &a_big[1][0], &a_small[1][0]);
            split(row_g8.z, &a_big[1][1], &a_small[1][1]);
            split(row_g.w, &a_big[1][2], &a_small[1][2]);
            split(row_g8.w, &a_big[1][3], &a_small[1][3]);
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int j = 0; j < NI; ++j) {
                    mma_tf32(chunk[i][j], a_small[h], b_big[h][j]);
                    mma_tf32(chunk[i][j], a_big[h], b_small[h][j]);
                    mma_tf32(chunk[i][j], a_big[h], b_big[h][j]);
                }
        }
    }
}

#endif

/* One K tile into acc: its products summed by the tensor core into a zeroed chunk, which joins
 * acc by FADD, rounded to nearest: the tensor core's truncation then cuts 2^-23 of a 64-term
 * partial sum, not of the growing sum over all of K. */
struct tf32x3_products {
    template <int BK>
    static __device__ __forceinline__ void add_tile(const float *a_tile, const float *b_tile,
                                                    int wn0, float acc[MI][NI][4], int g, int t)
    {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        float chunk[MI][NI][4];
        clear(chunk);
        tile_products<BK>(a_tile, b_tile, wn0, chunk, g, t);
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r)
                    acc[i][j][r] += chunk[i][j][r]; /* rounded to nearest, outside the TC */
#endif
    }
};

#endif /* SGEMM_LADDER_TF32X3_CUH */
