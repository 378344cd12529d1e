/*
 * aligned_rows.cuh - rung 27's copy, kept apart from the rung's launch: an operand whose rows
 * 16-byte loads cannot read (an odd size, a padded leading dimension, an offset pointer) copied
 * into 16-byte rows before the product, from the rung's own pool (rung_pool.cuh).
 *
 *   copy_rows_aligned()  kernel: rows x cols into rows of ld floats, zeros past cols
 *   copy_rows_first()    the copy queued on the stream, where it fits and the stream is not captured
 *   give_back_rows()     the copy given back, in stream order, after the kernels that read it
 */
#ifndef SGEMM_LADDER_ALIGNED_ROWS_CUH
#define SGEMM_LADDER_ALIGNED_ROWS_CUH

#include "plan_costs.h"    /* SPLIT_B_MAX_BYTES */
#include "rung_pool.cuh"   /* struct rung_pool, rung_memory */

/* rows x cols of src (rows of ld_src floats) copied into rows of ld floats (cols rounded up to
 * 4: 16-byte rows), zeros past cols, so that TMA or 16-byte copies can read them. A 32 x 8 block copies 32
 * columns of 8 rows a step, coalesced both ways. */
#define COPY_ROWS 8
static __global__ void __launch_bounds__(32 * COPY_ROWS)
    copy_rows_aligned(int rows, int cols, const float *src, int ld_src, int ld, float *out)
{
    const int col = (int)blockIdx.x * 32 + (int)threadIdx.x;
    if (col >= ld)
        return;
    for (int row = (int)blockIdx.y * COPY_ROWS + (int)threadIdx.y; row < rows;
         row += (int)gridDim.y * COPY_ROWS)
        out[(size_t)row * ld + col] = col < cols ? src[(size_t)row * ld_src + col] : 0.0f;
}

/* An operand of rows x cols (rows of ld_src floats) copied into 16-byte rows, queued on the
 * stream: *copy := the copy (rows of *ld floats); NULL where it is too large (SPLIT_B_MAX_BYTES),
 * the stream captures (the memory would belong to the graph) or there is no memory: then the
 * operand is read as it is. The caller gives it back (give_back_rows()). */
static cudaError_t copy_rows_first(struct sgemm_rung_facts *table, struct rung_pool *pools,
                                   int rows, int cols, const float *src, int ld_src, float **copy,
                                   int *ld, cudaStream_t stream)
{
    *copy = NULL;
    *ld = (cols + 3) / 4 * 4;
    const size_t bytes = sizeof(float) * (size_t)rows * (size_t)*ld;
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t err = cudaSuccess;
    if (bytes > SPLIT_B_MAX_BYTES ||
        (err = cudaStreamIsCapturing(stream, &capture)) || capture != cudaStreamCaptureStatusNone)
        return err;
    if (rung_memory(table, pools, bytes, (void **)copy, stream) != cudaSuccess) {
        *copy = NULL; /* no memory, or no pool on this device: read as it is */
        (void)cudaGetLastError();
        return cudaSuccess;
    }
    /* grid.x: ld / 32 <= 2^30 / 128; grid.y at most 65535, the rows beyond in a loop */
    const int row_blocks = (rows + COPY_ROWS - 1) / COPY_ROWS;
    const dim3 grid((unsigned)((*ld + 31) / 32),
                    (unsigned)(row_blocks < 65535 ? row_blocks : 65535));
    copy_rows_aligned<<<grid, dim3(32, COPY_ROWS), 0, stream>>>(rows, cols, src, ld_src, *ld,
                                                               *copy);
    if ((err = cudaGetLastError()) != cudaSuccess) {
        (void)rung_memory(table, pools, 0, (void **)copy, stream);
        *copy = NULL;
    }
    return err;
}

/* A copy given back (NULL: nothing) after the kernels that read it, in stream order; err, or
 * the error of giving it back. */
static cudaError_t give_back_rows(struct sgemm_rung_facts *table, struct rung_pool *pools,
                                  float **copy, cudaError_t err, cudaStream_t stream)
{
    if (*copy != NULL) {
        const cudaError_t freed = rung_memory(table, pools, 0, (void **)copy, stream);
        err = err != cudaSuccess ? err : freed;
        *copy = NULL;
    }
    return err;
}

#endif /* SGEMM_LADDER_ALIGNED_ROWS_CUH */
