/*
 * wgmma.cuh - the 3xTF32 wgmma rungs (23-27): the 128x128 tile of two 64-row warpgroups, its
 * shared-memory layouts, Hopper's warpgroup product as inline PTX, and what every rung of them
 * does the same way.
 *   split()                  x = big + small, both rounded to TF32;
 *   wgmma_tf32() ...         wgmma.mma_async m64n128k8 and its fence, commit, wait (PTX ISA);
 *   split_b_block()          a 4 (K) x 4 (N) block of raw B split into B^T big and small;
 *   copy_a_raw(), copy_b_raw(), copy_a_inside(), copy_b_inside()
 *                            a raw K tile by 4-byte cp.async, where neither 16-byte copies nor
 *                            TMA can describe the operand;
 *   read_a(), split_a()      A's wgmma fragments from a raw tile, split;
 *   tile_wgmma()             one K tile's twelve products into `chunk`;
 *   tile_origin()            which C tile a block takes: in bands of rows (rasterization);
 *   finish_tile()            a slice's partial sums, or C := alpha acc + beta C;
 *   wgmma_image_loaded()     host: whether the device runs the sm_90a body;
 *   wgmma_start(), wgmma_finish()
 *                            host: a launch's start (prologue, Hopper, the rung's facts, the
 *                            tiles, split-K's slices and workspace) and end (split-K's sum,
 *                            the trace line, the workspace given back).
 * wgmma and setmaxnreg exist only for sm_90a: elsewhere the device code is left out and the
 * kernels __trap(); a launch asks wgmma_image_probe first and never gets there.
 */
#ifndef SGEMM_LADDER_WGMMA_CUH
#define SGEMM_LADDER_WGMMA_CUH

#include <math.h>
#include <stdint.h>


#include "sgemm_common.h"   /* sgemm_aligned16 */
#include "cp_async.cuh"     /* cp_async_4, cp_async_16, commit, wait */
#include "c_tile.cuh"       /* write_c_tile */
#include "split_sum.cuh"    /* SPLIT_TILE, split_slices, launch_sum_slices */
#include "device_facts.h"   /* sgemm_rung_facts */
#include "sgemm_workspace.h" /* sgemm_stream_workspace, sgemm_workspace_done */

/* ---- The tile ---- */
#define BM       128 /* rows of C per block: two warpgroups of 64 rows */
#define BN       128 /* cols of C per block: one m64n128k8 wgmma covers them */
#define BK       32  /* K depth of one tile: four k8 steps; one 128-byte row of a B^T part */
#define K8_STEPS (BK / 8)
#define WG_ROWS  64  /* rows of C per warpgroup (the wgmma M) */
#define WG       128 /* threads per warpgroup */
#define ACC_REGS (WG_ROWS * BN / WG) /* 64 floats of C per thread of a product warpgroup */
#define RAW_STAGES  4 /* raw K tiles (A and B as they come from memory) in flight */
#define RASTER_ROWS 8 /* whole tiles go in bands of 8 tile rows */
/* Below SHORT_K_TILES K tiles in a block, the rungs that sum `chunk` into `acc` every two tiles
 * (23-26) sum it every tile: a short K is where cuBLAS's own error is smallest, and two tiles
 * of the tensor core's truncating sum measured 8.06 u at 3523x67x74 (H200; cuBLAS 3.73 u,
 * over the gate); the extra drains cost little over so few tiles. */
#define SHORT_K_TILES 8

/* Shared memory, from a 1024-byte aligned base (the 128-byte swizzle is a function of address
 * bits 4-9, so every swizzled tile starts on a 1024-byte boundary):
 *   raw stage r (r < RAW_STAGES): A raw, 128 rows x 128 bytes, in the 128-byte swizzle TMA
 *     writes (16-byte chunk c of row m at chunk c ^ (m % 8)); then B raw, 32 rows x 512 bytes,
 *     plain row-major;
 *   split stage p: B^T big, then B^T small: 128 rows n x 128 bytes (k), chunk c of row n at
 *     c ^ (n % 8), the K-major 128-byte swizzled layout the wgmma descriptor names. */
#define ROW_BYTES         (BK * 4)        /* 128 */
#define A_RAW_BYTES       (BM * ROW_BYTES) /* 16,384 */
#define B_RAW_ROW_BYTES   (BN * 4)         /* 512 */
#define B_RAW_BYTES       (BK * B_RAW_ROW_BYTES) /* 16,384 */
#define RAW_STAGE_BYTES   (A_RAW_BYTES + B_RAW_BYTES)
#define SPLIT_PART_BYTES  (BN * ROW_BYTES) /* 16,384: big or small */
#define SPLIT_STAGE_BYTES (2 * SPLIT_PART_BYTES)
#define SMEM_ALIGN        1024
#define C_LD              (BN + 8) /* the epilogue's C tile, in the raw stages: 69,632 bytes */
#define SMEM_BYTES(split_stages) \
    (RAW_STAGES * RAW_STAGE_BYTES + (split_stages) * SPLIT_STAGE_BYTES + SMEM_ALIGN)
#define SWZ(row, chunk) ((row) * ROW_BYTES + ((((chunk) ^ ((row) % 8))) * 16))
/* The matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address >> 4 in bits
 * 0-13, leading byte offset >> 4 in 16-29 (unused by swizzled K-major layouts: 1), stride byte
 * offset >> 4 in 32-45 (from one 8-row group to the next: 1024 bytes), base offset 0 in 49-51
 * (every part starts on a 1024-byte boundary; a k8 step adds 32 bytes, which leaves address
 * bits 7-9 alone), layout 1 in 62-63 (128-byte swizzle). */
#define DESC_HIGH (1ull << 62 | (unsigned long long)(1024 >> 4) << 32 | 1ull << 16)
#define K8_BYTES  32 /* one k8 step along a B^T row */

static_assert(BM == SPLIT_TILE && BN == SPLIT_TILE, "split-K's sum (split_sum.cuh) reads these");
static_assert(BK == WGMMA_K_TILE, "rung 28 plans rung 27's launches with split_plan.h's K tile");
static_assert(BN * BK / 16 == 2 * WG, "256 4x4 blocks of B a tile");
static_assert(BM * C_LD * 4 <= RAW_STAGES * RAW_STAGE_BYTES, "the C tile fits the raw stages");

#if defined(__CUDA_ARCH_FEAT_SM90_ALL) /* sm_90a: wgmma, setmaxnreg */

/* x as big + small, both TF32: big adds half of the last kept bit and cuts (two instructions);
 * small = x - big, exact in 13 bits, is rounded by cvt.rn.tf32.f32 (one F2FP.TF32), where the
 * tensor core would cut it (up to 8 u a product, 10 u at K = 2). cvt.rn for big too spilled. */
static __device__ __forceinline__ void split(float x, unsigned *big, unsigned *small)
{
    const unsigned b = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
    unsigned s;
    asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(s) : "f"(x - __uint_as_float(b)));
    *big = b;
    *small = s;
}

/* ---- wgmma (PTX ISA: wgmma.mma_async) ---- */
/* The 64 accumulator registers of m64n128k8 as asm operands, 8 at a time. */
#define D8(d, i)                                                                          \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]),             \
        "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define D64(d) D8(d, 0), D8(d, 8), D8(d, 16), D8(d, 24), D8(d, 32), D8(d, 40), D8(d, 48), D8(d, 56)
/* The four registers of A fragment [s][h] (k8 step s, big or small) as asm operands. */
#define A4(a, s, h) "+r"(a[s][h][0]), "+r"(a[s][h][1]), "+r"(a[s][h][2]), "+r"(a[s][h][3])

/* d = a b (accumulate == 0) or a b + d, 64x8 A in registers (lane (g, t) of warp w: a[0..3] =
 * (16w + g, t), (16w + g + 8, t), (16w + g, t + 4), (16w + g + 8, t + 4)) and 8x128 B in shared
 * memory (K-major, desc). Asynchronous: d and a belong to the tensor core until wgmma_wait(). */
static __device__ __forceinline__ void wgmma_tf32(float d[ACC_REGS], const unsigned a[4],
                                                  unsigned long long desc, int accumulate)
{
    asm volatile("{\n"
                 ".reg .pred scale_d;\n"
                 "setp.ne.b32 scale_d, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
                 "{%64, %65, %66, %67}, %68, scale_d, 1, 1;\n"
                 "}\n"
                 : D64(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(accumulate)
                 : "memory");
}

/* Orders this thread's accesses to A's and the accumulator's registers before the next wgmma. */
static __device__ __forceinline__ void wgmma_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void wgmma_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* Waits until at most PENDING of this thread's committed groups still run (1: the tile before
 * is done, its A fragments free). d and a are operands, so that the compiler reads d only after
 * the wait and keeps a's registers unchanged until it. */
template <int PENDING>
static __device__ __forceinline__ void wgmma_wait(float d[ACC_REGS], unsigned a[K8_STEPS][2][4])
{
    asm volatile("wgmma.wait_group.sync.aligned %96;\n"
                 : D64(d), A4(a, 0, 0), A4(a, 0, 1), A4(a, 1, 0), A4(a, 1, 1), A4(a, 2, 0),
                   A4(a, 2, 1), A4(a, 3, 0), A4(a, 3, 1)
                 : "n"(PENDING)
                 : "memory");
}

/* Pins values computed in registers (acc's FADDs, A's split) before the next wgmma.fence,
 * which orders register accesses for the hardware, not the compiler. */
static __device__ __forceinline__ void pin(float d[ACC_REGS])
{
    asm volatile("" : D64(d) : : "memory");
}

static __device__ __forceinline__ void pin_a(unsigned a[K8_STEPS][2][4])
{
#pragma unroll
    for (int s = 0; s < K8_STEPS; ++s)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            asm volatile("" : A4(a, s, h) : : "memory");
}

/* This thread's generic-proxy writes to shared memory, visible to the async proxy (wgmma reads
 * B^T through it). */
static __device__ __forceinline__ void fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* ---- The K order inside a tile ----
 * A's fragment gives lane t the k = t and t + 4 of each k8 step; here position c (0..7) of step
 * s is tile column 8s + 2 (c % 4) + c / 4, so lane t's two k of a step are adjacent columns 8s +
 * 2t, 8s + 2t + 1: one LDS.64 per row and step. A step still covers 8 consecutive columns, so a
 * short K uses few steps (each costs three truncating additions: K = 2 over two steps was 10 u).
 * B^T uses the same order: position 4kc + i of a B^T row (16-byte chunk kc: step kc / 2, c = 4
 * (kc % 2) + i) is B's tile row 8 (kc / 2) + 2i + kc % 2. */
static __device__ __forceinline__ int b_tile_row(int kc, int i)
{
    return 8 * (kc / 2) + 2 * i + kc % 2;
}


/* Block grp (0..31) of a tile's 256 4 (K) x 4 (N) blocks of raw B, split, written transposed
 * into B^T big and small: B^T rows n = 4nb..4nb+3, chunk kc. The 8 threads q = 0..7 of a
 * quarter-warp (grp shared) take nb % 8 = q (reads: all 32 banks) and kc % 4 = (q / 2 + rot) %
 * 4 with kc / 4 shared, so chunk kc ^ (n % 8) differs for each of the 8 (writes: all 32 banks). */
static __device__ __forceinline__ void split_b_block(const unsigned char *b_raw, unsigned char *bt,
                                                     int grp, int q)
{
    const int nb = 8 * (grp % 4) + q;
    const int kc = ((q / 2 + grp / 8) % 4) + 4 * ((grp / 4) % 2);
    float rows[4][4]; /* registers: every index is a constant once unrolled */
#pragma unroll
    for (int i = 0; i < 4; ++i)
        *(float4 *)rows[i] = *(const float4 *)(b_raw + b_tile_row(kc, i) * B_RAW_ROW_BYTES + nb * 16);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        unsigned big[4], small[4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
            split(rows[i][j], &big[i], &small[i]);
        const int at = SWZ(4 * nb + j, kc);
        *(uint4 *)(bt + at) = make_uint4(big[0], big[1], big[2], big[3]);
        *(uint4 *)(bt + SPLIT_PART_BYTES + at) = make_uint4(small[0], small[1], small[2], small[3]);
    }
}

/* ---- A raw K tile by 4-byte cp.async: 128 copying threads p for A, 128 for B ----
 * Into the layout the other copies write, zeros outside M, N and K; about 20 instructions a
 * copy. Offsets stay in int: A and B span <= INT_MAX floats (sgemm_prologue). */
static __device__ __forceinline__ void copy_a_raw(unsigned stage, const float *A, int lda, int M,
                                                  int K, int m0, int k0, int p)
{
#pragma unroll 4
    for (int i = 0; i < BM * BK / WG; ++i) {
        const int e = i * WG + p, row = e / BK, k = e % BK;
        const int ok = m0 + row < M && k0 + k < K;
        cp_async_4(stage + SWZ(row, k / 4) + 4 * (k % 4),
                   A + (ok ? (m0 + row) * lda + k0 + k : 0), ok ? 4 : 0);
    }
}
static __device__ __forceinline__ void copy_b_raw(unsigned stage, const float *B, int ldb, int N,
                                                  int K, int n0, int k0, int p)
{
#pragma unroll 4
    for (int i = 0; i < BK * BN / WG; ++i) {
        const int e = i * WG + p, k = e / BN, col = e % BN;
        const int ok = k0 + k < K && n0 + col < N;
        cp_async_4(stage + A_RAW_BYTES + e * 4, B + (ok ? (k0 + k) * ldb + n0 + col : 0),
                   ok ? 4 : 0);
    }
}

/* 4 bytes, all of them from src (no zero-fill count for ptxas to fold into the address). */
static __device__ __forceinline__ void cp_async_4_all(unsigned dst, const float *src)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src) : "memory");
}

/* The same copies for a tile wholly inside A and B, ~3 instructions each (the general form
 * alone: 0.95-0.98x cuBLAS on odd leading dimensions, 1.26-1.37x with this, rung 25): thread p
 * copies column p % 32 of A's rows p / 32 + 4i (row % 8 = p / 32 + 4 (i % 2): one of two
 * swizzled offsets plus 512 i), from a = its first element, lda4 = 4 lda; or column p of B's
 * rows i, from b = its first element; stepping the sources, checking nothing. */
static __device__ __forceinline__ void copy_a_inside(unsigned stage, const float *a, size_t lda4,
                                                     int p)
{
    const int k = p % BK, r0 = p / BK;
    const unsigned a_even = stage + SWZ(r0, k / 4) + 4 * (k % 4);
    const unsigned a_odd = stage + SWZ(r0 + 4, k / 4) + 4 * (k % 4) - 4 * ROW_BYTES;
#pragma unroll 8
    for (int i = 0; i < BM / 4; ++i) {
        cp_async_4_all((i % 2 ? a_odd : a_even) + 4 * i * ROW_BYTES, a);
        a += lda4;
    }
}
static __device__ __forceinline__ void copy_b_inside(unsigned stage, const float *b, size_t ldb,
                                                     int p)
{
    const unsigned b_dst = stage + A_RAW_BYTES + 4 * p;
#pragma unroll 8
    for (int i = 0; i < BK; ++i) {
        cp_async_4_all(b_dst + i * B_RAW_ROW_BYTES, b);
        b += ldb;
    }
}

/* ---- A from a raw tile into wgmma fragments ----
 * a[step][big, small][a0..a3]: a0 / a1 rows row0 / row0 + 8 at position t, a2 / a3 at t + 4.
 * Of each step st, lane (g, t) reads the 8 bytes at columns 8st + 2t (chunk 2st + t / 2 of the
 * swizzled raw tile, stored at that ^ g), a_row: the byte offsets of its rows; 2-way bank
 * conflicts (Nsight Compute). Read and split apart, so that a rung can free the stage between. */
static __device__ __forceinline__ void read_a(const unsigned char *a_raw, const int a_row[2],
                                              int g, int t, float2 v[K8_STEPS][2])
{
#pragma unroll
    for (int st = 0; st < K8_STEPS; ++st) {
        const int at = ((((2 * st + t / 2) ^ g)) * 16) + 8 * (t % 2);
#pragma unroll
        for (int rr = 0; rr < 2; ++rr)
            v[st][rr] = *(const float2 *)(a_raw + a_row[rr] + at);
    }
}
static __device__ __forceinline__ void split_a(const float2 v[K8_STEPS][2],
                                               unsigned a[K8_STEPS][2][4])
{
#pragma unroll
    for (int st = 0; st < K8_STEPS; ++st)
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
            split(v[st][rr].x, &a[st][0][rr], &a[st][1][rr]);
            split(v[st][rr].y, &a[st][0][2 + rr], &a[st][1][2 + rr]);
        }
}

/* One K tile's twelve wgmma into chunk, per k8 step small*big, big*small, big*big (the smallest
 * first: a truncating sum loses least when it starts with them), B^T big at shared address
 * b_big, small after it. starts: the first product replaces chunk instead of adding to it. The
 * caller fences before (wgmma_fence) and commits after. */
static __device__ __forceinline__ void tile_wgmma(float chunk[ACC_REGS], unsigned a[K8_STEPS][2][4],
                                                  unsigned b_big, int starts)
{
    const unsigned b_small = b_big + SPLIT_PART_BYTES;
#pragma unroll
    for (int st = 0; st < K8_STEPS; ++st) {
        const unsigned long long d_big = DESC_HIGH | ((b_big + st * K8_BYTES) & 0x3ffffu) >> 4;
        const unsigned long long d_small = DESC_HIGH | ((b_small + st * K8_BYTES) & 0x3ffffu) >> 4;
        wgmma_tf32(chunk, a[st][1], d_big, st > 0 || !starts);
        wgmma_tf32(chunk, a[st][0], d_small, 1);
        wgmma_tf32(chunk, a[st][0], d_big, 1);
    }
}

/* The C tile of block `tile` (slices > 1: split-K, row by row, as sum_slices() reads; else in
 * bands of RASTER_ROWS tile rows, column by column, so that the blocks running at once share a
 * few panels of A and B in L2: rasterization, as rung 13's). */
static __device__ __forceinline__ void tile_origin(int tile, int slices, int M, int N, int *m0,
                                                   int *n0)
{
    const int tiles_m = (M - 1) / BM + 1, tiles_n = (N - 1) / BN + 1;
    const int band = slices == 1 ? RASTER_ROWS : 1, first = tile / (band * tiles_n) * band;
    const int rows = min(band, tiles_m - first), in_band = tile - first * tiles_n;
    *m0 = (first + in_band % rows) * BM;
    *n0 = in_band / rows * BN;
}

/* The end of a block, by its 256 product threads (ctid 0..255; BARRIER: the named barrier they
 * meet at). acc[4j + r] of lane (g, t), warp w: row row0 = 16w + g (+ 64 in the second
 * warpgroup) + 8 (r / 2), column 8j + 2t + (r % 2).
 *   slices > 1: the whole tile, edges too (zeros there), unscaled, to work[blockIdx.x]:
 *     sum_slices() reads in range.
 *   else C := alpha acc + beta C through shared memory (the raw stages, free once every K tile
 *     is read): each warp writes rows of C as float4s, whole 32-byte sectors; a sum that is not
 *     finite is recomputed by sequential_dot(). */
template <int BARRIER>
static __device__ __forceinline__ void finish_tile(float *c_tile, int ctid, int row0,
                                                   const float acc[ACC_REGS], int slices,
                                                   float *work, int M, int N, int K, float alpha,
                                                   const float *A, int lda, const float *B,
                                                   int ldb, float beta, float *C, int ldc,
                                                   int m0, int n0)
{
    const int t = ctid % 4;
    if (slices > 1) {
        float *out = work + (size_t)blockIdx.x * (BM * BN);
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                *(float2 *)(out + (row0 + 8 * h) * BN + 8 * j + 2 * t) =
                    make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
        return;
    }
    asm volatile("bar.sync %0, %1;\n" ::"n"(BARRIER), "n"(2 * WG) : "memory");
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            *(float2 *)(c_tile + (row0 + 8 * h) * C_LD + 8 * j + 2 * t) =
                make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
    asm volatile("bar.sync %0, %1;\n" ::"n"(BARRIER), "n"(2 * WG) : "memory");
    write_c_tile<BM, BN, C_LD, 2 * WG>(c_tile, ctid, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                                       m0, n0);
}

#endif /* sm_90a */

/* ---- Host ---- */

/* Never launched. Its static shared memory tells the launcher which image the driver loaded:
 * PROBE_MARK_INTS ints where the sm_90a body was compiled, none where the kernels __trap(). */
#define PROBE_MARK_INTS 4
static __global__ void wgmma_image_probe(int *sink)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ int mark[PROBE_MARK_INTS];
    mark[threadIdx.x % PROBE_MARK_INTS] = (int)threadIdx.x;
    __syncthreads();
    *sink = mark[(threadIdx.x + 1) % PROBE_MARK_INTS];
#else
    *sink = 0;
#endif
}

/* Whether this device's image of the rung has the wgmma body (a question about a kernel in the
 * device's context: no stream work, so it may be asked while a stream captures). */
static inline int wgmma_image_loaded(void)
{
    struct cudaFuncAttributes probe;
    return cudaFuncGetAttributes(&probe, (const void *)wgmma_image_probe) == cudaSuccess &&
           probe.sharedSizeBytes >= PROBE_MARK_INTS * sizeof(int);
}

/* A launch's plan: whole C tiles, split-K's slices of each (1: none) and their workspace. */
struct wgmma_plan {
    long long tiles;
    int slices;
    float *work;
};

/* What a launch of rungs 23-27 does first: sgemm_prologue() (*done: the call is settled there),
 * Hopper alone (wgmma is sm_90a), the rung's facts for the device (*entry; *has_wgmma, a field of
 * it: whether the image has the wgmma body), the tile count (one 1-D grid: C spans <= INT_MAX
 * floats), and split-K's slices with the stream's workspace (NULL where there is no memory for
 * it: then whole tiles, which need none). */
static inline cudaError_t wgmma_start(int M, int N, int K, float alpha, const float *A, int lda,
                                      const float *B, int ldb, float beta, float *C, int ldc,
                                      cudaStream_t stream, struct sgemm_rung_facts *table,
                                      struct sgemm_device *d, void *entry, const int *has_wgmma,
                                      int *done, struct wgmma_plan *p)
{
    cudaError_t err = sgemm_prologue(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, done);
    if (err != cudaSuccess || *done)
        return err;
    if (sgemm_current_cc() != 90)
        return cudaErrorInvalidDevice; /* wgmma is sm_90a: Hopper only, not its successors */
    if ((err = sgemm_rung_facts(table, d, entry)) != cudaSuccess)
        return err;
    if (!*has_wgmma)
        return cudaErrorNoKernelImageForDevice; /* built without sm_90a */
    p->tiles = (long long)((M - 1) / BM + 1) * ((N - 1) / BN + 1);
    double split_cost = 0.0;
    p->slices = split_slices(p->tiles, K, BK, d->sms, &split_cost);
    p->work = NULL;
    if (p->slices > 1) {
        err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d->sms), (void **)&p->work);
        if (err != cudaSuccess)
            return err;
        p->slices = p->work ? p->slices : 1;
    }
    return cudaSuccess;
}

/* The end, after the product's launch returned err: whole tiles trace `whole_path`; split-K
 * queues the slices' sum, traces, and gives back a workspace made in a capture's graph
 * (sgemm_workspace_done()). */
static inline cudaError_t wgmma_finish(int step, const char *whole_path, cudaError_t err,
                                       const struct wgmma_plan *p, int M, int N, int K,
                                       float alpha, const float *A, int lda, const float *B,
                                       int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    if (err != cudaSuccess || p->slices == 1) { /* (p->work is NULL for whole tiles) */
        sgemm_trace(step, whole_path, M, N, K, p->tiles, 1);
        return sgemm_workspace_done(stream, p->work, err);
    }
    sgemm_trace(step, "split-k", M, N, K, p->tiles * p->slices, p->slices);
    return sgemm_workspace_done(stream, p->work,
                                launch_sum_slices(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                                                  p->slices, p->work, stream));
}

#endif /* SGEMM_LADDER_WGMMA_CUH */
