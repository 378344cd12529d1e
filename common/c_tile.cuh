/*
 * c_tile.cuh - the last step of the tensor-core rungs' epilogue (20-27): a C tile of sums, put
 * in shared memory by the rung in its own fragment layout, written to C in whole rows.
 *   write_c_tile<...>()   C := alpha tile + beta C, a row of 128 floats a warp in whole 32-byte
 *                         sectors: a float4 a thread, or where C's rows are not 16-byte aligned a
 *                         float a thread, consecutive threads on consecutive floats; a sum that
 *                         is not finite recomputed by sequential_dot(), SGEMM's own answer.
 */
#ifndef SGEMM_LADDER_C_TILE_CUH
#define SGEMM_LADDER_C_TILE_CUH

#include <math.h>   /* isfinite */
#include <stdint.h> /* uintptr_t */

#include "sequential_dot.cuh"

/* The TILE_ROWS x TILE_COLS tile at c_tile (rows TILE_LD floats apart) into C at (m0, n0), by
 * thread tid of TILE_THREADS (an int, or threadIdx.x's unsigned, as the caller counts): float4
 * c4 of rows r0, r0 + TILE_THREADS / (TILE_COLS / 4), ... Edges and sums that are not finite
 * take the scalar path; those sums are found again in the tile afterwards. Where C's rows are
 * not 16-byte aligned, the thread writes floats c4, c4 + TILE_COLS / 4, ... of the same rows
 * instead: four floats 16 bytes apart would fill a quarter of each sector a store touches. */
template <int TILE_ROWS, int TILE_COLS, int TILE_LD, int TILE_THREADS, class Tid>
static __device__ __forceinline__ void write_c_tile(const float *c_tile, Tid tid, int M, int N,
                                                    int K, float alpha, const float *A, int lda,
                                                    const float *B, int ldb, float beta,
                                                    float *C, int ldc, int m0, int n0)
{
    const int c4 = tid % (TILE_COLS / 4), r0 = tid / (TILE_COLS / 4);
    const int rows_per_pass = TILE_THREADS / (TILE_COLS / 4), col = n0 + 4 * c4;
    const int aligned = ldc % 4 == 0 && (uintptr_t)C % 16 == 0, vec = aligned && col + 3 < N;
    int redo = 0;
#pragma unroll 8 /* in full, the mma.sync stream-K kernel spilled on sm_80-89 */
    for (int p = 0; p < TILE_ROWS / rows_per_pass; ++p) {
        const int row = m0 + r0 + p * rows_per_pass;
        if (row >= M)
            break;
        const float4 v = *(const float4 *)(c_tile + (r0 + p * rows_per_pass) * TILE_LD + 4 * c4);
        float *c = C + (size_t)row * ldc + col;
        if (vec && isfinite(v.x) && isfinite(v.y) && isfinite(v.z) && isfinite(v.w)) {
            float4 out = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
            if (beta != 0.0f) {
                const float4 old = *(const float4 *)c;
                out = make_float4(out.x + beta * old.x, out.y + beta * old.y,
                                  out.z + beta * old.z, out.w + beta * old.w);
            }
            *(float4 *)c = out;
        } else if (aligned) {
            const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                if (col + q >= N)
                    continue;
                if (!isfinite(e[q]))
                    redo = 1;
                else
                    c[q] = (beta == 0.0f) ? alpha * e[q] : alpha * e[q] + beta * c[q];
            }
        } else { /* NEW: a float a thread, consecutive threads on consecutive floats */
            const float *t_row = c_tile + (r0 + p * rows_per_pass) * TILE_LD;
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int tc = c4 + q * (TILE_COLS / 4);
                if (n0 + tc >= N)
                    continue;
                const float e = t_row[tc];
                float *cq = C + (size_t)row * ldc + n0 + tc;
                if (!isfinite(e))
                    redo = 1;
                else
                    *cq = (beta == 0.0f) ? alpha * e : alpha * e + beta * *cq;
            }
        }
    }
    /* Rare: the sums that are not finite, found again in c_tile; the loop stays rolled (a K
     * loop in each of 64 copies would only bloat the kernel). */
#pragma unroll 1
    for (int e = 0; redo && e < 4 * (TILE_ROWS / rows_per_pass); ++e) {
        const int tc = aligned ? 4 * c4 + e % 4 : c4 + (e % 4) * (TILE_COLS / 4);
        const int lr = r0 + (e / 4) * rows_per_pass, row = m0 + lr, cq = n0 + tc;
        if (row >= M || cq >= N || isfinite(c_tile[lr * TILE_LD + tc]))
            continue;
        const float v = sequential_dot(A, lda, B, ldb, K, row, cq);
        float *c = C + (size_t)row * ldc + cq;
        *c = (beta == 0.0f) ? alpha * v : alpha * v + beta * *c;
    }
}

#endif /* SGEMM_LADDER_C_TILE_CUH */
