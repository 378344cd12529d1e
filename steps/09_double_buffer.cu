/*
 * Rung 09 - double buffering: the next tile's global loads run under this tile's math.
 *
 * What changes from rung 08
 *   The order of work in the K loop, and a second copy of everything it overlaps:
 *
 *     rung 08, per K tile:  load global -> store shared -> barrier -> 8 k steps -> barrier
 *     rung 09, per K tile:  issue global loads of tile t+1 into registers (a_ld, b_ld)
 *                           8 k steps on tile t, from shared buffer t % 2
 *                           store a_ld, b_ld into buffer (t+1) % 2 -> barrier
 *
 *   - shared memory: two buffers of each tile, a_tile[2][BK*BM] and b_tile[2][BK*BN]
 *     (16 KB per block instead of 8).  Each buffer has rung 08's layout.
 *   - registers: fragments are double-buffered too, frag_a[2][8] and frag_b[2][8]: step k
 *     multiplies set k % 2 while the four LDS.128 of step k+1 fill set (k+1) % 2, so no FMA
 *     waits for a shared-memory load.  The first set of the next tile is loaded right after
 *     the barrier.
 *   - one barrier per K tile instead of two.
 *   - every iteration is the same code: the last one, which has no tile t+1, fetches its own
 *     tile again (in bounds, and never used) instead of every iteration testing "is there a
 *     next tile?" around its loads and its store.  That costs one extra tile of loads per
 *     block, and leaves the compiler one straight run of code to schedule per tile.
 *   - the loop is unrolled by two (#pragma unroll 2), so that in each copy of the body the
 *     buffer numbers are constants and every shared-memory address is a register plus an
 *     immediate.
 *   The last two are not needed for correctness; they are what made the loop fast (H200,
 *   4096: 0.81x cuBLAS with neither, 0.85x with the unrolling alone, 0.92x with the uniform
 *   loop alone, 0.94x with both; results/notes/step_09.md).
 *
 * Why one barrier is enough (the race this design must not have)
 *   Iteration t computes from buffer t%2 and writes only buffer (t+1)%2, after its math.
 *   (1) Write-after-read: buffer (t+1)%2 is buffer (t-1)%2, last read by iteration t-1's
 *       math, before that iteration's barrier; a thread writing it in iteration t has passed
 *       that barrier, so every thread has finished those reads.
 *   (2) Read-after-write: tile t+1 is written before iteration t's barrier and first read
 *       after it (the k = 0 fragments), by every thread.
 *   The last iteration's store and barrier change nothing: the same argument holds, and the
 *   epilogue does not touch shared memory.  Every barrier is reached by every thread: the
 *   trip count depends only on K.
 *
 * Why the hardware rewards it
 *   A global load takes several hundred cycles.  In rung 08 every warp waited for it between
 *   two barriers, with no math of its own to hide it; only the SM's other block could run
 *   meanwhile.  Now the loads for tile t+1 are in flight during tile t's 512 FMAs per thread
 *   and have landed before the registers are stored.  Inside a tile, the register double
 *   buffer gives each LDS.128 a whole k step (64 FMAs) to arrive.
 *   Half of the barriers are gone. The last two changes show in the issue rate (ncu, 4096):
 *   0.85 instructions per cycle per scheduler instead of 0.76, mostly fewer "dispatch" stalls
 *   (0.52 a cycle instead of 0.82), which track FFMAs whose three sources share a register bank
 *   (43 per tile in the first version, none now).
 *
 * The register budget: 128, the occupancy cliff
 *   Two blocks of 256 threads fit an SM's 65536 registers only at 128 registers a thread; at
 *   129 the SM holds one block and half the latency hiding is gone. The payload is 104 (64
 *   accumulators, 2 x 16 fragments, 8 staged floats), so __launch_bounds__(THREADS, 2) holds
 *   ptxas to 128 (unbounded it took 145, and ran 1% slower at one block an SM). The copy-in
 *   sources are 32-bit offsets from A and B (64-bit pointers spilled on sm_75 and sm_80). At
 *   this limit ptxas recomputed both buffers' addresses every tile, ~20 instructions: the
 *   reason for the unrolling above. Shared memory is no limit: 2 x 16 KB per SM.
 *
 * Bank conflicts (tests/test_banks.c): none, as rung 08 (each buffer starts a multiple of
 * 128 bytes after the other, so both have the same banks).
 *
 * Edges and alignment: as rung 06 (vec_a/vec_b/vec_c chosen at launch; load4/store4 read and
 * write only what exists; beta == 0 never reads C).  The prefetch of tile t+1 uses the same
 * counts, so only the last tile meets the K edge.
 *
 * Expected speed (written before measuring): 0.85-0.92x cuBLAS at 4096, about 1.2x rung 08
 * (the 128x128x8 kernel of salykova's article, of this design, ran at 0.88x at 2048 on an H200).
 *
 * Measured (H200): the first version (a rolled loop that tested for a next tile) 0.81x;
 * this one, predicted at 0.85x before its run, 0.943x at 4096 (0.945x at 2048, 0.951x at
 * 8192; results/notes/step_09.md), and in make all-bench 48,356 GFLOP/s, 0.945x (0.635 /
 * 0.943 / 0.945 / 0.953 at 1024 / 2048 / 4096 / 8192; results/nvidia-h200/bench.csv), 1.24x
 * rung 08.  Nsight Compute: FMA pipe 75.4% busy (rung 08: 59.9%).  A goal
 * of 0.95 is missed by 0.3% (the replays' spread at 4096: 0.3%).
 *
 * Resources (ptxas -v): 127-128 registers, 16384 bytes smem, 0 spills; 1226 K-loop
 * instructions per two tiles (sm_90), 1024 of them FFMA.
 */
#define BM      128 /* rows of the C tile (and of the A tile) one block computes */
#define BN      128 /* cols of the C tile (and of the B tile) one block computes */
#define BK      8   /* K depth of one A tile and one B tile in shared memory */
#define TM      8   /* rows of C per thread */
#define TN      8   /* cols of C per thread */
#define THREADS ((BM / TM) * (BN / TN)) /* 256 threads = 8 warps, a 1-D block */

/* ==== Shared-memory layout ===================================================================
 * Plain C from here to the #ifndef below: tests/test_banks.c includes this part of the file
 * (with SGEMM_LAYOUT_ONLY defined) and replays every warp's shared-memory addresses. */
#ifndef __CUDACC__
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#endif

/* The 8 warps form a 4 x 2 grid over the C tile, each warp a WARP_M x WARP_N tile; a warp's
 * 32 lanes form a LANES_M x LANES_N grid over it. */
#define WARPS_N 2                               /* warps side by side along N */
#define WARP_M  (BM / (THREADS / 32 / WARPS_N)) /* 32 rows of C per warp */
#define WARP_N  (BN / WARPS_N)                  /* 64 cols of C per warp */
#define LANES_M 4
#define LANES_N 8

/* Where element (k, m) of the A tile and (k, n) of the B tile live, in floats from the start
 * of a_tile / b_tile.  A keeps rung 07's swizzle (bit 2 of k flips bit 4 of m): the
 * transposed store is unchanged and still needs it.  B needs none any more: the new
 * fragment loads below are conflict-free on a plain row. */
static __host__ __device__ inline int a_tile_offset(int k, int m)
{
    return k * BM + (m ^ ((k & 4) << 2));
}
static __host__ __device__ inline int b_tile_offset(int k, int n)
{
    return k * BN + n;
}

/* Copying in: thread tid reads one float4 of A (tile row a_load_row, k = a_load_col .. +3)
 * and one float4 of B (k = b_load_row, tile cols b_load_col .. +3) per K tile. */
static __host__ __device__ inline int a_load_row(unsigned tid)
{
    return tid / (BK / 4);
}
static __host__ __device__ inline int a_load_col(unsigned tid)
{
    return (tid % (BK / 4)) * 4;
}
static __host__ __device__ inline int b_load_row(unsigned tid)
{
    return tid / (BN / 4);
}
static __host__ __device__ inline int b_load_col(unsigned tid)
{
    return (tid % (BN / 4)) * 4;
}

/* Computing: thread tid owns tile rows frag_a_row(tid, h) + 0..3 and tile cols
 * frag_b_col(tid, h) + 0..3 for h = 0, 1: four 4x4 sub-tiles of C, 16 rows and 32 cols
 * apart, inside its warp's 32x64 tile.  Lane (lane_m, lane_n) of the 4 x 8 lane grid is
 *     lane_m = (lane / 2) % 4,   lane_n = (lane / 8) * 2 + lane % 2
 * so that the 8 lanes of one quarter-warp form a 4 x 2 block of the grid (the interleaving
 * of seed 000 and CUTLASS): per LDS.128 they read 4 distinct float4s of A, each shared by 2
 * lanes, and 2 of B, each shared by 4. */
static __host__ __device__ inline int frag_a_row(unsigned tid, int h)
{
    const unsigned warp_m = (tid / 32) / WARPS_N, lane_m = (tid % 32 / 2) % LANES_M;
    return warp_m * WARP_M + lane_m * 4 + h * (LANES_M * 4);
}
static __host__ __device__ inline int frag_b_col(unsigned tid, int h)
{
    const unsigned warp_n = (tid / 32) % WARPS_N, lane_n = (tid % 32 / 8) * 2 + tid % 2;
    return warp_n * WARP_N + lane_n * 4 + h * (LANES_N * 4);
}
/* ==== End of the shared-memory layout ======================================================= */

#ifndef SGEMM_LAYOUT_ONLY

#include "../common/step.h"
#include "../common/sgemm_common.h"

/* p[0..3] as one 16-byte load when `vec` allows it and all four floats exist (count >= 4);
 * otherwise one load per float that exists (i < count), 0.0f for the rest (count <= 0: p is
 * never dereferenced). `vec` is the same for every thread (chosen at launch) and count < 4
 * happens only at the matrix edges, so almost every thread takes the 16-byte side. */
static __device__ __forceinline__ float4 load4(const float *p, int count, int vec)
{
    if (vec && count >= 4)
        return *(const float4 *)p;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (count > 0)
        v.x = p[0];
    if (count > 1)
        v.y = p[1];
    if (count > 2)
        v.z = p[2];
    if (count > 3)
        v.w = p[3];
    return v;
}

/* row[first .. first+3] := alpha*acc + beta*row[...] for the floats that exist (i < count);
 * beta == 0 never reads C. One 16-byte store (and load) when `vec` allows it and all four
 * exist, else one float at a time. */
static __device__ __forceinline__ void store4(float *row, int first, int count, int vec, float4 acc,
                                              float alpha, float beta)
{
    if (vec && count >= 4) {
        float4 *c = (float4 *)(row + first);
        if (beta == 0.0f) {
            *c = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
        } else {
            const float4 old = *c;
            *c = make_float4(alpha * acc.x + beta * old.x, alpha * acc.y + beta * old.y,
                             alpha * acc.z + beta * old.z, alpha * acc.w + beta * old.w);
        }
        return;
    }
    const float v[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        if (j < count) {
            float *c = &row[first + j];
            *c = (beta == 0.0f) ? alpha * v[j] : alpha * v[j] + beta * *c;
        }
    }
}

/* Four floats of a tile in shared memory; the offset is a multiple of 4 (16-byte aligned). */
static __device__ __forceinline__ float4 lds4(const float *tile, int offset)
{
    return *(const float4 *)&tile[offset];
}

/* Registers -> shared memory, into one buffer: this thread's float4 of B as one STS.128, and
 * its float4 of A, k .. k+3 of one row m, transposed: four scalar stores into four rows of
 * the A tile, (k+j, m) = (k, m) + j*BM (the layout keeps that true; tests/test_banks.c
 * checks it). */
static __device__ __forceinline__ void store_tiles(float *a_buf, float *b_buf, float4 a_ld,
                                                   float4 b_ld, unsigned tid)
{
    float *a_dst = &a_buf[a_tile_offset(a_load_col(tid), a_load_row(tid))];
    a_dst[0 * BM] = a_ld.x;
    a_dst[1 * BM] = a_ld.y;
    a_dst[2 * BM] = a_ld.z;
    a_dst[3 * BM] = a_ld.w;
    *(float4 *)&b_buf[b_tile_offset(b_load_row(tid), b_load_col(tid))] = b_ld;
}

/* Shared memory -> registers: the thread's 8 rows of A and 8 cols of B at step k of one
 * buffer, two LDS.128 each. */
static __device__ __forceinline__ void load_frags(float frag_a[TM], float frag_b[TN],
                                                  const float *a_buf, const float *b_buf, int k,
                                                  unsigned tid)
{
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const float4 a4 = lds4(a_buf, a_tile_offset(k, frag_a_row(tid, h)));
        const float4 b4 = lds4(b_buf, b_tile_offset(k, frag_b_col(tid, h)));
        frag_a[4 * h + 0] = a4.x;
        frag_a[4 * h + 1] = a4.y;
        frag_a[4 * h + 2] = a4.z;
        frag_a[4 * h + 3] = a4.w;
        frag_b[4 * h + 0] = b4.x;
        frag_b[4 * h + 1] = b4.y;
        frag_b[4 * h + 2] = b4.z;
        frag_b[4 * h + 3] = b4.w;
    }
}

/* The math of one K tile from one buffer: one outer product per k. The fragments of step k+1
 * load during step k; those of step 0 are loaded before the call. */
static __device__ __forceinline__ void tile_math(float acc[TM][TN], float frag_a[2][TM],
                                                 float frag_b[2][TN], const float *a_buf,
                                                 const float *b_buf, unsigned tid)
{
#pragma unroll
    for (int k = 0; k < BK; ++k) {
        if (k + 1 < BK)
            load_frags(frag_a[(k + 1) % 2], frag_b[(k + 1) % 2], a_buf, b_buf, k + 1, tid);
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                acc[i][j] += frag_a[k % 2][i] * frag_b[k % 2][j];
    }
}

/* __launch_bounds__(THREADS, 2): two blocks per SM, so ptxas must fit a thread in
 * 65536 / (2 * 256) = 128 registers. */
static __global__ void __launch_bounds__(THREADS, 2)
    sgemm_double_buffer(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                        int ldb, float beta, float *C, int ldc, int vec_a, int vec_b, int vec_c)
{
    /* Two buffers of each tile: the block computes from one while the other is refilled.
     * a_tile holds A transposed (k-major); 16-byte alignment makes every float4 access legal. */
    __shared__ __align__(16) float a_tile[2][BK * BM];
    __shared__ __align__(16) float b_tile[2][BK * BN];

    const unsigned tid = threadIdx.x;
    const int block_row0 = blockIdx.y * BM;
    const int block_col0 = blockIdx.x * BN;

    /* Copy-in sources, as offsets in floats from A and B, moved one tile along K per fetch.
     * They are 32-bit: a 64-bit pointer costs two registers, and this rung has none to spare
     * (see the header). A float outside A or B is counted out (count <= 0) and never read.
     * Offsets that are read lie inside an operand, so below 2^31; a row of A beyond M takes
     * row 0's offset, and the offset of a row of B beyond K may wrap (unsigned, so defined):
     * both are counted out. */
    const int a_row = block_row0 + a_load_row(tid);
    unsigned a_off = (unsigned)(a_row < M ? a_row : 0) * (unsigned)lda + a_load_col(tid);
    const int a_k_left = (a_row < M) ? K - a_load_col(tid) : 0; /* floats of A from a_off on */
    const int b_col = block_col0 + b_load_col(tid);
    unsigned b_off = (unsigned)b_load_row(tid) * (unsigned)ldb + (unsigned)b_col;
    const int b_k_left = K - b_load_row(tid); /* rows of B from b_off down */
    const int b_n_left = N - b_col;           /* floats of B's row from b_off on */

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
            acc[i][j] = 0.0f;
    /* Two sets of fragments: step k computes with set k % 2 while set (k+1) % 2 is loaded. */
    float frag_a[2][TM], frag_b[2][TN];

    /* Prologue: tile 0 into buffer 0, then the fragments of its step k = 0. Floats outside A
     * or B become 0.0f, so the math needs no bounds checks. */
    float4 a_ld = load4(A + a_off, a_k_left, vec_a);
    float4 b_ld = load4(B + b_off, (b_k_left > 0) ? b_n_left : 0, vec_b);
    store_tiles(a_tile[0], b_tile[0], a_ld, b_ld, tid);
    __syncthreads();
    load_frags(frag_a[0], frag_b[0], a_tile[0], b_tile[0], 0, tid);

    /* Iteration t computes tile t from buffer t % 2 and refills buffer (t+1) % 2 with tile
     * t+1. The last iteration has no tile t+1: it fetches its own tile again (in bounds, never
     * used), so that every iteration runs the same code, with no test on the way. */
    const int tiles = (K + BK - 1) / BK;
    /* Unrolled by two, so that in each copy of the body the buffer numbers cur and cur ^ 1 are
     * constants: every shared-memory address is then a register the thread keeps plus an
     * immediate offset. Rolled, the compiler rebuilt both buffers' addresses every tile, at
     * the 128-register limit. */
#pragma unroll 2
    for (int t = 0; t < tiles; ++t) {
        const int cur = t % 2;            /* the buffer this iteration computes from */
        const int next = (t + 1 < tiles); /* 0 on the last tile: fetch tile t again */
        const int k0 = (t + next) * BK;   /* first k of the tile fetched now */
        a_off += next ? BK : 0;
        b_off += next ? BK * (unsigned)ldb : 0;

        /* Global -> registers for tile t+1, issued now: the loads are in flight during the
         * 512 FMAs of tile t, and land in shared memory only after them. */
        a_ld = load4(A + a_off, a_k_left - k0, vec_a);
        b_ld = load4(B + b_off, (b_k_left - k0 > 0) ? b_n_left : 0, vec_b);

        tile_math(acc, frag_a, frag_b, a_tile[cur], b_tile[cur], tid);

        /* Registers -> the other buffer, then one barrier. It is safe to overwrite buffer
         * cur^1 without a barrier before: it was last read in iteration t-1, and every thread
         * passed iteration t-1's barrier after those reads. The barrier below makes tile t+1
         * visible before anyone reads it, and nobody writes buffer cur again before passing
         * it, i.e. before every thread is done with tile t. */
        store_tiles(a_tile[cur ^ 1], b_tile[cur ^ 1], a_ld, b_ld, tid);
        __syncthreads();
        load_frags(frag_a[0], frag_b[0], a_tile[cur ^ 1], b_tile[cur ^ 1], 0, tid);
    }

    /* Epilogue: acc[4*hm + i][4*hn + j] is C(row0(hm) + i, col0(hn) + j). Each row of four is
     * one 16-byte store (and, for beta != 0, one 16-byte load); rows outside C are skipped. */
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = block_row0 + frag_a_row(tid, i / 4) + i % 4;
        if (row < M) {
            float *c_row = C + (size_t)row * ldc;
#pragma unroll
            for (int hn = 0; hn < 2; ++hn) {
                const int col = block_col0 + frag_b_col(tid, hn);
                const float4 acc4 = make_float4(acc[i][4 * hn + 0], acc[i][4 * hn + 1],
                                                acc[i][4 * hn + 2], acc[i][4 * hn + 3]);
                store4(c_row, col, N - col, vec_c, acc4, alpha, beta);
            }
        }
    }
}

static int ceil_div(int a, int b)
{
    return (a + b - 1) / b;
}

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    cudaError_t err = sgemm_prologue(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, &done);
    if (err != cudaSuccess || done)
        return err;

    /* 16-byte accesses need a 16-byte aligned base and rows a multiple of 4 floats apart;
     * otherwise the kernel reads (writes) that operand one float at a time. A slab's base,
     * A + row0*lda, keeps A's alignment when lda % 4 == 0. */
    const int vec_a = (lda % 4 == 0) && sgemm_aligned16(A);
    const int vec_b = (ldb % 4 == 0) && sgemm_aligned16(B);
    const int vec_c = (ldc % 4 == 0) && sgemm_aligned16(C);

    /* gridDim.y is capped at 65535: taller matrices run as slabs of rows. */
    const int slab_rows = SGEMM_MAX_GRID_Y * BM;
    for (int row0 = 0; row0 < M; row0 += slab_rows) {
        const int rows = (M - row0 < slab_rows) ? M - row0 : slab_rows;
        const dim3 grid(ceil_div(N, BN), ceil_div(rows, BM));
        sgemm_double_buffer<<<grid, THREADS, 0, stream>>>(rows, N, K, alpha, A + (size_t)row0 * lda,
                                                          lda, B, ldb, beta, C + (size_t)row0 * ldc,
                                                          ldc, vec_a, vec_b, vec_c);
        err = cudaGetLastError();
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

extern "C" const struct step step_09 = {
    9, "double_buffer", "double buffering: next tile loads during this one's math", 0, launch,
};

#endif /* SGEMM_LAYOUT_ONLY */
