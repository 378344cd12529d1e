/*
 * Rung 23 - 3xTF32 with wgmma and TMA: rung 22's arithmetic on Hopper's warpgroup tensor-core
 * instructions, fed by the Tensor Memory Accelerator, with the warps given separate jobs.
 *
 * What changes from rung 22
 *   The products. Rung 22 issues mma.sync.m16n8k8: each warp, synchronously, 16x8x8 from its
 *   registers. Here the four warps of a warpgroup issue wgmma.mma_async.m64n128k8 together:
 *   64x128x8, 128 times the work, run by the tensor core while the warps go on, A from
 *   registers, B from shared memory through a matrix descriptor (sm_90a only).
 *   The feeding. TMA copies whole tiles, 128 x 32 of A and 32 x 128 of B, from one instruction
 *   of one thread, zero-filled outside the matrix, and signals an mbarrier when the bytes have
 *   landed: no copy addresses in 256 threads, no half-used 32-byte sectors.
 *   The roles. Warpgroup 0 (the producer) issues TMA and sees that B arrives as wgmma reads it;
 *   warpgroups 1 and 2 (the consumers) split A and issue wgmma, each on 64 rows of the 128x128
 *   tile. They meet only at mbarriers, never at __syncthreads: while one consumer sums or
 *   splits, the other's wgmma keep the tensor core busy.
 *   The arithmetic is rung 22's (x = big + small, three products a k8 step into a tensor-core
 *   sum `chunk` that joins the FP32 sum with an FADD every 64 of K, a sequential FP32 loop for
 *   sums not finite, split-K), small rounded to TF32 too (rung 22's is cut: up to 8 u a product).
 *
 * B, split and transposed once, before the product
 *   TF32 wgmma reads B only K-major (the transpose flag exists for 16-bit types only), and the
 *   tensor core must see big and small, not the raw float: B^T big and B^T small, 128 rows (n)
 *   of 128 bytes (32 k) a tile, 16-byte chunk c of row n at c ^ (n % 8), the 128-byte swizzle
 *   the descriptor names (A keeps its K-major rows; TMA swizzles it the same way). Done by the
 *   producer (read 4 (K) x 4 (N) blocks of raw B, split, store transposed), every block redoes
 *   it for its own tile: M / 128 times for each element of B, ~200 instructions a tile in one
 *   warp a scheduler, about as long as the tile's 1536 clocks of tensor core. So where there are
 *   16 rows of tiles or more (M >= 2048), split_b_transposed() does it once, into memory from a
 *   pool (8 bytes per element of B, up to 1 GiB), and TMA brings B^T big and small like A: the
 *   producer only issues copies. Where the stream is capturing (the memory would belong to the
 *   graph), for fewer rows and for split-K, the producer splits B as above. B^T is twice raw B's
 *   bytes: in row order each wave of blocks reads all of it from DRAM (by the arithmetic; H100,
 *   8192: 1.89x, below the build before); whole tiles go in bands of 8 tile rows, by column.
 *
 * The pipeline (mbarriers, per stage)
 *   raw stages (4 x 32 KB): TMA -> raw_full -> consumers read A, producer reads B -> raw_empty
 *   B^T stages (3 x 32 KB): producer writes, fence.proxy.async (or TMA writes) -> split_full ->
 *     wgmma reads -> wgmma.wait -> split_empty. The third stage gives the producer a tile of
 *     slack (+3% at 8192; 225 KB of shared memory in all; 4 or 5 with B split first: < 1%).
 *   A consumer issues tile kt's twelve wgmma, waits only for tile kt - 1 (wait_group 1), and splits
 *   tile kt + 1's A into a second set of fragment registers while kt runs; every two tiles it waits
 *   for all and adds chunk to acc. setmaxnreg gives the producer's registers to the consumers. The
 *   epilogue goes through shared memory, as rung 22's: whole rows of C. Where TMA cannot describe
 *   an operand (a leading dimension not a multiple of 4, a base not 16-byte aligned), the producer
 *   copies raw tiles with 4-byte cp.async into the same layout. A block takes one tile and exits:
 *   persistent blocks, whose later tiles start with the B^T stages full, measured 1.57x at 4096
 *   (results/notes/step_23.md).
 *
 * The bound, computed (not counted), in clocks per 128x128x32 tile on one SM (H100 SXM: dense
 *   TF32 ~495 TFLOP/s, 1830 MHz, 132 SMs: 1024 multiply-adds a clock): 24 wgmma x 64 = 1536;
 *   shared memory at 128 bytes a clock, wgmma reading B^T 96 KB, TMA writing 32 KB, the
 *   producer 48 KB and the consumers 16 KB: 192 KB = 1500 clocks (B split first: 160 KB, 1250).
 *
 * Prediction (written before the run)
 *   The first build (256 threads copying, splitting, issuing; __syncthreads every tile) ran 1.84x
 *   at 4096: TMA and roles should remove its barrier and L2 waste, 2.1-2.3x. B split first: with
 *   B passed on unsplit (wrong sums) the loop ran 20% faster; the pass costs ~5%: ~2.4x.
 *
 * Measured (ratio to cuBLAS SGEMM in the same process; each step beside the build before it in
 *   results/notes/step_23.md): TMA and roles alone 1.82x at 4096, no gain (the wgmma of a tile
 *   drained before the next tile's A was split); wait_group 1, two sets of A fragments, a chunk
 *   every 2 tiles and a third B^T stage 2.14-2.22x; B split first (H200) 2.16 -> 2.52-2.54x at
 *   4096, 1.30 -> 2.53x where B's rows are not TMA's (on an H100 it lost from 6144 up until the
 *   tiles went in bands: 8192 2.66-2.68x); the epilogue through shared memory +2.8% at 4096, +48%
 *   at 4096x4096x128. H200, `make step=23 run`: 1.904 / 2.353 / 2.749 / 2.914x at 1024 / 2048 /
 *   4096 / 8192, 1.1-1.7 u against FP64 (cuBLAS 5.0-6.3 u); shape set 1.77-2.69x where K >= 1024
 *   and A is TMA's (1.72x at K = 128), 1.33-1.51x where it is not (odd sizes, ld = n + 1).
 *
 * Build: wgmma and setmaxnreg exist only for sm_90a (`make` picks it on an sm_90 GPU). Elsewhere
 *   the kernel is __trap(), and launch() returns cudaErrorNoKernelImageForDevice instead.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <cuda.h>          /* CUtensorMap and its enums (types only: no libcuda link) */
#include <cudaTypedefs.h>  /* PFN_cuTensorMapEncodeTiled */

#include "../common/step.h"
#include "../common/sgemm_common.h"
#include "../common/device_facts.h"
#include "../common/sgemm_workspace.h"
#include "../common/plan_costs.h"
#include "../common/cp_async.cuh" /* the fallback copies: cp_async_4, commit, wait */
#include "../common/tma.cuh"      /* mbarriers, TMA loads, fence.proxy.async */
#include "../common/split_sum.cuh" /* sum_slices, split_slices (rung 21), sequential_dot */

/* ---- The tile and the roles ----------------------------------------------------------------- */
#define BM        128 /* rows of C per block: two consumer warpgroups of 64 rows */
#define BN        128 /* cols of C per block: one m64n128k8 wgmma covers them */
#define BK        32  /* K depth of one tile: four k8 steps; one 128-byte row of a B^T part */
#define K8_STEPS  (BK / 8)
#define WG_ROWS   64  /* rows of C per consumer warpgroup (the wgmma M) */
#define WG        128 /* threads per warpgroup */
#define THREADS   (3 * WG) /* warpgroup 0: the producer; 1 and 2: the consumers */
#define ACC_REGS  (WG_ROWS * BN / WG) /* 64 floats of C per consumer thread */
#define RAW_STAGES   4 /* raw K tiles (A and B as TMA writes them) in flight */
/* B^T big/small buffers (the kernel's SPLIT_STAGES): one read by wgmma, one written, and for
 * whole tiles a spare (+3% at 8192; 15-20% slower on the split-K shapes). */
#define SPLIT_STAGES_WHOLE  3
#define SPLIT_STAGES_SLICED 2
/* `chunk` joins the FP32 sum every CHUNK_TILES K tiles (64 deep): the tensor core truncates as
 * it adds, so its sums stay short, but each sum drains the warpgroup's wgmma queue. */
#define CHUNK_TILES 2 /* consume_all() goes two tiles a turn: one chunk */
#define RASTER_ROWS 8 /* whole tiles go in bands of 8 tile rows (the kernel's start) */
/* Registers per thread after setmaxnreg: the consumers hold acc, chunk and A's fragments;
 * 128 * 56 + 256 * 224 = 64,512 = 384 * 168, what __launch_bounds__(384, 1) gives. */
#define PRODUCER_REGS 56
#define CONSUMER_REGS 224
/* How a tile's operands come in (the kernel's template parameter FEED): raw A and B by the
 * producer's 4-byte cp.async (COPY: TMA cannot describe them) or by TMA (TMA), B split by the
 * producer; or A raw and B^T big and small by TMA, B split before the product (SPLIT_B). */
#define FEED_COPY    0
#define FEED_TMA     1
#define FEED_SPLIT_B 2

/* Shared memory, from a 1024-byte aligned base (the 128-byte swizzle is a function of address
 * bits 4-9, so every swizzled tile starts on a 1024-byte boundary):
 *   raw stage r (r < RAW_STAGES): A raw, 128 rows x 128 bytes, as TMA's 128-byte swizzle lays
 *     it out (16-byte chunk c of row m at chunk c ^ (m % 8)); then B raw, 32 rows x 512 bytes,
 *     plain row-major (left unused by FEED_SPLIT_B);
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
#define SMEM_BYTES(split_stages) /* 230,400 whole, 197,632 sliced */ \
    (RAW_STAGES * RAW_STAGE_BYTES + (split_stages) * SPLIT_STAGE_BYTES + SMEM_ALIGN)
#define SWZ(row, chunk) ((row) * ROW_BYTES + ((((chunk) ^ ((row) % 8))) * 16))
/* The matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address >> 4 in bits
 * 0-13, leading byte offset >> 4 in 16-29 (unused by swizzled K-major layouts: 1), stride byte
 * offset >> 4 in 32-45 (from one 8-row group to the next: 1024 bytes), base offset 0 in 49-51
 * (every part starts on a 1024-byte boundary; a k8 step adds 32 bytes, which leaves address
 * bits 7-9 alone), layout 1 in 62-63 (128-byte swizzle). */
#define DESC_HIGH (1ull << 62 | (unsigned long long)(1024 >> 4) << 32 | 1ull << 16)
#define K8_BYTES  32 /* one k8 step along a B^T row */

static_assert(2 * WG_ROWS == BM, "two consumer warpgroups of 64 rows");
static_assert(BM == SPLIT_TILE && BN == SPLIT_TILE, "split-K's sum (split_sum.cuh) reads these");
static_assert(BN * BK / 16 == 2 * WG, "two 4x4 blocks of B per producer thread");
static_assert(SMEM_BYTES(SPLIT_STAGES_WHOLE) <= 227 * 1024, "an H100 block holds at most 227 KB");
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

/* The producer's share of one tile: two 4 (K) x 4 (N) blocks of raw B, split, written
 * transposed into B^T big and small. Block (kc, nb): B^T rows n = 4nb..4nb+3, chunk kc. A
 * quarter-warp (q = 0..7) takes nb % 8 = q (reads: all 32 banks) and kc % 4 = (q / 2 + rot) % 4
 * with kc / 4 shared, so chunk kc ^ (n % 8) differs for each of the 8 (writes: all 32 banks). */
static __device__ __forceinline__ void split_b(unsigned char *b_raw, unsigned char *bt, int p)
{
    const int q = p % 8, w = p / 8;
#pragma unroll
    for (int blk = 0; blk < 2; ++blk) {
        const int grp = w + 16 * blk; /* 0..31 */
        const int nb = 8 * (grp % 4) + q;
        const int kc = ((q / 2 + grp / 8) % 4) + 4 * ((grp / 4) % 2);
        float rows[4][4]; /* registers: every index is a constant once unrolled */
#pragma unroll
        for (int i = 0; i < 4; ++i)
            *(float4 *)rows[i] =
                *(const float4 *)(b_raw + b_tile_row(kc, i) * B_RAW_ROW_BYTES + nb * 16);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            unsigned big[4], small[4];
#pragma unroll
            for (int i = 0; i < 4; ++i)
                split(rows[i][j], &big[i], &small[i]);
            const int at = SWZ(4 * nb + j, kc);
            *(uint4 *)(bt + at) = make_uint4(big[0], big[1], big[2], big[3]);
            *(uint4 *)(bt + SPLIT_PART_BYTES + at) =
                make_uint4(small[0], small[1], small[2], small[3]);
        }
    }
}

/* FEED_COPY's copy of one raw tile: 4-byte cp.async into the layout TMA would have written,
 * zeros outside M, N and K; about 20 instructions a copy (copy_raw_inside(): the common case).
 * Offsets stay in int: A and B span <= INT_MAX floats (sgemm_prologue). */
static __device__ __forceinline__ void copy_raw(unsigned stage, const float *A, int lda,
                                                const float *B, int ldb, int M, int N, int K,
                                                int m0, int n0, int k0, int p)
{
#pragma unroll 4
    for (int i = 0; i < BM * BK / WG; ++i) {
        const int e = i * WG + p, row = e / BK, k = e % BK;
        const int ok = m0 + row < M && k0 + k < K;
        cp_async_4(stage + SWZ(row, k / 4) + 4 * (k % 4),
                   A + (ok ? (m0 + row) * lda + k0 + k : 0), ok ? 4 : 0);
    }
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
 * alone: 0.95-0.98x cuBLAS on odd leading dimensions, 1.26-1.37x with this): thread p copies
 * column p % 32 of A's rows p / 32 + 4i (row % 8 = p / 32 + 4 (i % 2): one of two swizzled
 * offsets plus 512 i) and column p of B's rows i, stepping the sources, checking nothing. */
static __device__ __forceinline__ void copy_raw_inside(unsigned stage, const float *a,
                                                       size_t lda4, const float *b, size_t ldb,
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
    const unsigned b_dst = stage + A_RAW_BYTES + 4 * p;
#pragma unroll 8
    for (int i = 0; i < BK; ++i) {
        cp_async_4_all(b_dst + i * B_RAW_ROW_BYTES, b);
        b += ldb;
    }
}

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

struct consumer { /* what a consumer thread keeps for its K loop */
    const unsigned char *raw; /* the raw stages */
    unsigned bt_s, bar;       /* shared addresses: the B^T split stages, the barriers */
    int a_row[2];             /* byte offsets in an A raw tile of its rows row0, row0 + 8 */
    int g, t;                 /* its lane's group and thread in group */
    int k_tiles;
    int in_flight; /* the wgmma of the tile before are still running (their chunk not summed) */
};

/* A of tile kt, split into `a` (a[step][big, small][a0..a3]; a0 / a1 rows row0 / row0 + 8 at
 * position t, a2 / a3 at t + 4): of each step st the 8 bytes at columns 8st + 2t (chunk 2st + t
 * / 2 of the swizzled raw tile, stored at that ^ g); 2-way bank conflicts (Nsight Compute). */
static __device__ __forceinline__ void load_a(const struct consumer *c, int kt,
                                              unsigned a[K8_STEPS][2][4])
{
    const int r = kt % RAW_STAGES;
    bar_wait(c->bar + 8u * (BAR_RAW_FULL + r), (kt / RAW_STAGES) & 1);
    const unsigned char *a_raw = c->raw + r * RAW_STAGE_BYTES;
    float2 v[K8_STEPS][2];
#pragma unroll
    for (int st = 0; st < K8_STEPS; ++st) {
        const int at = ((((2 * st + c->t / 2) ^ c->g)) * 16) + 8 * (c->t % 2);
#pragma unroll
        for (int rr = 0; rr < 2; ++rr)
            v[st][rr] = *(const float2 *)(a_raw + c->a_row[rr] + at);
    }
    bar_arrive(c->bar + 8u * (BAR_RAW_EMPTY + r));
#pragma unroll
    for (int st = 0; st < K8_STEPS; ++st)
#pragma unroll
        for (int rr = 0; rr < 2; ++rr) {
            split(v[st][rr].x, &a[st][0][rr], &a[st][1][rr]);
            split(v[st][rr].y, &a[st][0][2 + rr], &a[st][1][2 + rr]);
        }
}

/* Tile kt, whose A is split in `a`: twelve wgmma into chunk, per k8 step small*big, big*small,
 * big*big; a chunk's first tile (`starts`) starts it from zero. While they run: the wait for
 * the tile before (its B^T buffer goes back) and A of tile kt + 1 into `a_next`. After a chunk's
 * last tile (`sums`) and the last tile: the wait for all, chunk into acc by FADD. starts and
 * sums are constants where inlined: ptxas keeps wgmma in flight only across branches it sees
 * are uniform. */
template <int SPLIT_STAGES>
static __device__ __forceinline__ void consume_tile(struct consumer *c, int kt,
                                                    unsigned a[K8_STEPS][2][4],
                                                    unsigned a_next[K8_STEPS][2][4],
                                                    float chunk[ACC_REGS], float acc[ACC_REGS],
                                                    const int starts, const int sums)
{
    const int s = kt % SPLIT_STAGES;
    bar_wait(c->bar + 8u * (BAR_SPLIT_FULL + s), (kt / SPLIT_STAGES) & 1);
    const unsigned b_big = c->bt_s + s * SPLIT_STAGE_BYTES, b_small = b_big + SPLIT_PART_BYTES;
    pin_a(a);
    wgmma_fence();
#pragma unroll
    for (int st = 0; st < K8_STEPS; ++st) {
        const unsigned long long d_big = DESC_HIGH | ((b_big + st * K8_BYTES) & 0x3ffffu) >> 4;
        const unsigned long long d_small = DESC_HIGH | ((b_small + st * K8_BYTES) & 0x3ffffu) >> 4;
        wgmma_tf32(chunk, a[st][1], d_big, st > 0 || !starts);
        wgmma_tf32(chunk, a[st][0], d_small, 1);
        wgmma_tf32(chunk, a[st][0], d_big, 1);
    }
    wgmma_commit();
    if (c->in_flight) {
        wgmma_wait<1>(chunk, a_next);
        bar_arrive(c->bar + 8u * (BAR_SPLIT_EMPTY + (kt - 1) % SPLIT_STAGES));
    }
    if (kt + 1 < c->k_tiles)
        load_a(c, kt + 1, a_next);
    if (sums || kt == c->k_tiles - 1) {
        wgmma_wait<0>(chunk, a);
        bar_arrive(c->bar + 8u * (BAR_SPLIT_EMPTY + s));
#pragma unroll
        for (int i = 0; i < ACC_REGS; ++i)
            acc[i] += chunk[i];
        pin(acc);
        c->in_flight = 0;
    } else {
        c->in_flight = 1;
    }
}

/* The whole K loop of a consumer: two tiles a turn, so that each set of A fragments stays in
 * its own registers; chunk starts on the first and joins acc after the second. */
template <int SPLIT_STAGES>
static __device__ __forceinline__ void consume_all(struct consumer *c, unsigned a0[K8_STEPS][2][4],
                                                   unsigned a1[K8_STEPS][2][4],
                                                   float chunk[ACC_REGS], float acc[ACC_REGS])
{
    static_assert(CHUNK_TILES == 2, "a chunk is the two tiles of one turn");
    if (c->k_tiles > 0)
        load_a(c, 0, a0);
    for (int kt = 0; kt < c->k_tiles; kt += 2) {
        consume_tile<SPLIT_STAGES>(c, kt, a0, a1, chunk, acc, 1, 0);
        if (kt + 1 < c->k_tiles)
            consume_tile<SPLIT_STAGES>(c, kt + 1, a1, a0, chunk, acc, 0, 1);
    }
}

#endif /* sm_90a */

/* C (m0..m0+BM-1) x (n0..n0+BN-1) = A B, `slices` blocks per tile (block b: tile b / slices,
 * K slice b % slices). One slice: the block finishes C. Several: the block writes its partial
 * sums, unscaled, to work[b][BM][BN], and sum_slices() finishes C. FEED: how tiles come in
 * (FEED_COPY, FEED_TMA: tmap_a and tmap_b raw A and B; FEED_SPLIT_B: tmap_b B^T big and small). */
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

    const int tiles_m = (M - 1) / BM + 1, tiles_n = (N - 1) / BN + 1;
    const int tile = (int)blockIdx.x / slices, slice = (int)blockIdx.x % slices;
    /* Whole tiles in bands of RASTER_ROWS tile rows, column by column: the blocks running at
     * once share a few panels of A and B^T in L2 (split-K: row by row, as sum_slices() reads) */
    const int band = slices == 1 ? RASTER_ROWS : 1, first = tile / (band * tiles_n) * band;
    const int rows = min(band, tiles_m - first), in_band = tile - first * tiles_n;
    const int m0 = (first + in_band % rows) * BM, n0 = in_band / rows * BN;
    const int tid = (int)threadIdx.x;

    /* This block's K tiles: [kt0, kt0 + k_tiles), the slices as even as whole tiles allow. */
    const int all_k_tiles = (K - 1) / BK + 1;
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
                tma_load_2d(b_big + SPLIT_PART_BYTES, &tmap_b, k0, tiles_n * BN + n0,
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
                if (m0 + BM <= M && n0 + BN <= N && k0 + BK <= K)
                    copy_raw_inside(stage, A + (size_t)(m0 + p / BK) * lda + p % BK + k0,
                                    (size_t)4 * lda, B + (size_t)k0 * ldb + n0 + p, ldb, p);
                else
                    copy_raw(stage, A, lda, B, ldb, M, N, K, m0, n0, (kt0 + j) * BK, p);
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
            split_b(raw + r * RAW_STAGE_BYTES + A_RAW_BYTES, bt + s * SPLIT_STAGE_BYTES, p);
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
    const int cwg = tid / WG - 1, warp = (tid / 32) % 4, lane = tid % 32;
    const int g = lane / 4, t = lane % 4;
    const int row0 = cwg * WG_ROWS + warp * 16 + g; /* this thread's rows: row0, row0 + 8 */
    struct consumer c = {raw, bt_s, bar, {row0 * ROW_BYTES, (row0 + 8) * ROW_BYTES},
                         g,   t,    k_tiles, 0};

    float acc[ACC_REGS], chunk[ACC_REGS];
#pragma unroll
    for (int i = 0; i < ACC_REGS; ++i) {
        acc[i] = 0.0f;
        chunk[i] = 0.0f; /* never read (a chunk's first wgmma ignores it), but defined */
    }
    /* Two sets of A fragments: the tensor core reads one while the other is filled. The loop
     * goes two tiles at a time so that each set stays in its own registers. */
    unsigned a0[K8_STEPS][2][4], a1[K8_STEPS][2][4];
    consume_all<SPLIT_STAGES>(&c, a0, a1, chunk, acc);

    /* acc[4j + r] of lane (g, t), warp w: row 16w + g + 8 (r / 2), column 8j + 2t + (r % 2). */
    if (slices > 1) { /* the whole tile, edges too (zeros there): sum_slices() reads in range */
        float *out = work + (size_t)blockIdx.x * (BM * BN);
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                *(float2 *)(out + (row0 + 8 * h) * BN + 8 * j + 2 * t) =
                    make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
        return;
    }
    /* The epilogue, through shared memory as in rung 22: the consumers meet (named barrier 2;
     * 1 is the producers') once every K tile is read, put acc in the raw stages, meet again, and
     * each warp writes rows of C as float4s. A sum not finite is recomputed below. */
    float *c_tile = (float *)raw;
    asm volatile("bar.sync 2, %0;\n" ::"n"(2 * WG) : "memory");
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            *(float2 *)(c_tile + (row0 + 8 * h) * C_LD + 8 * j + 2 * t) =
                make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
    asm volatile("bar.sync 2, %0;\n" ::"n"(2 * WG) : "memory");
    const int c4 = (tid - WG) % (BN / 4), r0 = (tid - WG) / (BN / 4);
    const int rows_per_pass = 2 * WG / (BN / 4), col = n0 + 4 * c4;
    const int vec = ldc % 4 == 0 && (uintptr_t)C % 16 == 0 && col + 3 < N;
    int redo = 0;
#pragma unroll 8
    for (int p = 0; p < BM / rows_per_pass; ++p) {
        const int row = m0 + r0 + p * rows_per_pass;
        if (row >= M)
            break;
        const float4 v = *(const float4 *)(c_tile + (r0 + p * rows_per_pass) * C_LD + 4 * c4);
        float *cp = C + (size_t)row * ldc + col;
        if (vec && isfinite(v.x) && isfinite(v.y) && isfinite(v.z) && isfinite(v.w)) {
            float4 out = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
            if (beta != 0.0f) {
                const float4 old = *(const float4 *)cp;
                out = make_float4(out.x + beta * old.x, out.y + beta * old.y,
                                  out.z + beta * old.z, out.w + beta * old.w);
            }
            *(float4 *)cp = out;
        } else {
            const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                if (col + q >= N)
                    continue;
                if (!isfinite(e[q]))
                    redo = 1;
                else
                    cp[q] = (beta == 0.0f) ? alpha * e[q] : alpha * e[q] + beta * cp[q];
            }
        }
    }
    /* Rare: the loop stays rolled (a K loop in each of 64 copies would only bloat the kernel). */
#pragma unroll 1
    for (int e = 0; redo && e < 4 * (BM / rows_per_pass); ++e) {
        const int lr = r0 + (e / 4) * rows_per_pass, row = m0 + lr, cq = col + e % 4;
        if (row >= M || cq >= N || isfinite(c_tile[lr * C_LD + 4 * c4 + e % 4]))
            continue;
        const float v = sequential_dot(A, lda, B, ldb, K, row, cq);
        float *cp = C + (size_t)row * ldc + cq;
        *cp = (beta == 0.0f) ? alpha * v : alpha * v + beta * *cp;
    }
#undef BAR
#elif defined(__CUDA_ARCH__)
    __trap(); /* no wgmma in this image: launch() asks wgmma_image_probe and never gets here */
#endif
}

/* B split once, before the product: bt[n][k] big and bt[n_pad + n][k] small, rows of k_pad
 * floats, k in the tile's K order (b_tile_row()), zeros outside K and N. A 32 x 32 block of B
 * through shared memory, read along B's rows and written along bt's (no bank conflicts). */
#define SPLIT_B_TILE 32
static __global__ void __launch_bounds__(SPLIT_B_TILE * 8)
    split_b_transposed(int K, int N, const float *B, int ldb, int k_pad, int n_pad, unsigned *bt)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ float block[SPLIT_B_TILE][SPLIT_B_TILE + 1]; /* [k][n] */
    const int n0 = (int)blockIdx.x * SPLIT_B_TILE, k0 = (int)blockIdx.y * SPLIT_B_TILE;
    const int x = (int)threadIdx.x, y = (int)threadIdx.y;
#pragma unroll
    for (int r = y; r < SPLIT_B_TILE; r += 8)
        block[r][x] = k0 + r < K && n0 + x < N ? B[(size_t)(k0 + r) * ldb + n0 + x] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int r = y; r < SPLIT_B_TILE; r += 8) { /* row n0 + r of bt, position k0 + x */
        unsigned big, small;
        split(block[b_tile_row(x / 4, x % 4)][r], &big, &small);
        const size_t at = (size_t)(n0 + r) * k_pad + k0 + x;
        bt[at] = big;
        bt[(size_t)n_pad * k_pad + at] = small;
    }
#elif defined(__CUDA_ARCH__)
    __trap(); /* as the product: launch() never gets here without the sm_90a image */
#endif
}

/* Never launched. Its static shared memory tells the launcher which image the driver loaded:
 * PROBE_MARK_INTS ints where the sm_90a body was compiled, none where the kernel is __trap(). */
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

typedef void (*tf32x3_kernel)(const CUtensorMap, const CUtensorMap, int, int, int, float,
                              const float *, int, const float *, int, float, float *, int, int,
                              float *);
/* [FEED][whole tiles] */
#define KERNEL_PAIR(feed) {sgemm_tf32x3_wgmma<feed, SPLIT_STAGES_SLICED>, \
                           sgemm_tf32x3_wgmma<feed, SPLIT_STAGES_WHOLE>}
static const tf32x3_kernel kernels[3][2] = {
    KERNEL_PAIR(FEED_COPY), KERNEL_PAIR(FEED_TMA),
    {NULL, sgemm_tf32x3_wgmma<FEED_SPLIT_B, SPLIT_STAGES_WHOLE>}}; /* split-b: whole tiles only */

/* ---- Per device, once, no stream work (a stream may be capturing; common/device_facts.h):
 * whether the image has the wgmma body, the 225 KB opt-in. Per process: cuTensorMapEncodeTiled. */
struct facts {
    int wgmma;
    cudaMemPool_t pool; /* split_b_first()'s memory; NULL until its first use */
    int no_pool;        /* making it failed: no split-b on this device */
};
static struct facts facts_of[SGEMM_MAX_DEVICES];
static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled;
static pthread_once_t encode_once = PTHREAD_ONCE_INIT;

static void find_encode_tiled(void)
{
    void *fn = NULL;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) == cudaSuccess &&
        found == cudaDriverEntryPointSuccess)
        encode_tiled = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    (void)cudaGetLastError(); /* a failed lookup is not this call's error */
}

static cudaError_t ask_device(const struct sgemm_device *d, void *entry)
{
    struct facts *f = (struct facts *)entry;
    struct cudaFuncAttributes probe;
    (void)d;
    cudaError_t err = cudaFuncGetAttributes(&probe, (const void *)wgmma_image_probe);
    f->wgmma = (err == cudaSuccess) && probe.sharedSizeBytes >= PROBE_MARK_INTS * sizeof(int);
    for (int i = 0; i < 6 && err == cudaSuccess && f->wgmma; ++i)
        if (kernels[i / 2][i % 2] != NULL)
            err = cudaFuncSetAttribute((const void *)kernels[i / 2][i % 2],
                                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       i % 2 ? SMEM_BYTES(SPLIT_STAGES_WHOLE)
                                             : SMEM_BYTES(SPLIT_STAGES_SLICED));
    return err;
}
static struct sgemm_rung_facts facts_table = SGEMM_RUNG_FACTS(facts_of, ask_device);

/* A row-major matrix (rows x cols, leading dimension ld) as a TMA tensor: boxes of box_rows x
 * box_cols, zeros outside. 0 when TMA cannot describe it: ld not a multiple of 16 bytes, a base
 * not 16-byte aligned, or no cuTensorMapEncodeTiled. A plain host-side encode: no stream work. */
static int tensor_map(CUtensorMap *map, const float *base, int rows, int cols, int ld,
                      int box_rows, int box_cols, CUtensorMapSwizzle swizzle)
{
    if (!encode_tiled || ld % 4 != 0 || !sgemm_aligned16(base))
        return 0;
    const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)ld * sizeof(float)};
    const cuuint32_t box[2] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows};
    const cuuint32_t steps[2] = {1, 1};
    return encode_tiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, (void *)base, dims, strides, box,
                        steps, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* B split before the product (FEED_SPLIT_B) where enough rows of tiles share it (each would
 * split all of B again) and its copy is not too large (1 GiB: K x N = 2^27, 11585^2). */

/* Memory for split B from the rung's own pool on this device (made at first use: it keeps what
 * is given back, and never makes one stream wait for another's memory), taken (bytes > 0) or
 * given back in stream order, in relaxed capture mode (a global capture elsewhere stays valid). */
static cudaError_t split_b_memory(size_t bytes, unsigned **bt, cudaStream_t stream)
{
    int device = 0;
    cudaError_t err = cudaGetDevice(&device); /* < SGEMM_MAX_DEVICES: sgemm_rung_facts() saw */
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    if (err != cudaSuccess || (err = cudaThreadExchangeStreamCaptureMode(&mode)) != cudaSuccess)
        return err;
    pthread_mutex_lock(&facts_table.lock);
    cudaMemPool_t *pool = &facts_of[device].pool;
    if (*pool == NULL && !facts_of[device].no_pool) {
        cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        cuuint64_t keep = UINT64_MAX;
        int no = 0;
        if ((err = cudaMemPoolCreate(pool, &props)) == cudaSuccess &&
            ((err = cudaMemPoolSetAttribute(*pool, cudaMemPoolAttrReleaseThreshold, &keep)) ||
             (err = cudaMemPoolSetAttribute(*pool, cudaMemPoolReuseAllowInternalDependencies,
                                            &no))))
            (void)cudaMemPoolDestroy(*pool);
        facts_of[device].no_pool = err != cudaSuccess;
        *pool = err != cudaSuccess ? NULL : *pool;
    }
    const cudaMemPool_t use = *pool;
    pthread_mutex_unlock(&facts_table.lock);
    if (err == cudaSuccess)
        err = !bytes ? cudaFreeAsync(*bt, stream)
              : use  ? cudaMallocFromPoolAsync((void **)bt, bytes, use, stream)
                     : cudaErrorNotSupported;
    const cudaError_t back = cudaThreadExchangeStreamCaptureMode(&mode);
    if (err == cudaSuccess && back != cudaSuccess && bytes) /* (never seen) */
        (void)cudaFreeAsync(*bt, stream);
    return err != cudaSuccess ? err : back;
}

/* B split once, queued on the stream: *bt := B^T big (rows 0..n_pad - 1) and small (from row
 * n_pad), rows of k_pad floats; NULL where it does not pay, the stream captures (a graph would
 * own the memory) or there is no memory: the producers split B. launch() gives it back. */
static cudaError_t split_b_first(int M, int N, int K, const float *B, int ldb, unsigned **bt,
                                 int *k_pad, int *n_pad, cudaStream_t stream)
{
    *bt = NULL;
    *k_pad = (K - 1) / BK * BK + BK;
    *n_pad = (N - 1) / BN * BN + BN;
    const size_t bytes = 2 * sizeof(unsigned) * (size_t)*k_pad * (size_t)*n_pad;
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t err = cudaSuccess;
    if (M < SPLIT_B_MIN_M || bytes > SPLIT_B_MAX_BYTES ||
        (err = cudaStreamIsCapturing(stream, &capture)) || capture != cudaStreamCaptureStatusNone)
        return err;
    if (split_b_memory(bytes, bt, stream) != cudaSuccess) {
        *bt = NULL; /* no memory, or no pool on this device: the producers split B */
        (void)cudaGetLastError();
        return cudaSuccess;
    }
    /* grid.y: k_pad / 32 <= 2^30 / (8 x 128 x 32) = 32768, within its 65535 */
    const dim3 grid(*n_pad / SPLIT_B_TILE, *k_pad / SPLIT_B_TILE), block(SPLIT_B_TILE, 8);
    split_b_transposed<<<grid, block, 0, stream>>>(K, N, B, ldb, *k_pad, *n_pad, *bt);
    if ((err = cudaGetLastError()) != cudaSuccess) {
        (void)split_b_memory(0, bt, stream);
        *bt = NULL;
    }
    return err;
}

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    cudaError_t err = sgemm_prologue(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, &done);
    if (err != cudaSuccess || done)
        return err;
    if (sgemm_current_cc() != 90)
        return cudaErrorInvalidDevice; /* wgmma is sm_90a: Hopper only, not its successors */
    struct sgemm_device d;
    struct facts f;
    if ((err = sgemm_rung_facts(&facts_table, &d, &f)) != cudaSuccess)
        return err;
    if (!f.wgmma)
        return cudaErrorNoKernelImageForDevice; /* built without sm_90a */
    pthread_once(&encode_once, find_encode_tiled);
    CUtensorMap map_a, map_b;
    memset(&map_a, 0, sizeof map_a);
    memset(&map_b, 0, sizeof map_b);
    const int tma_a = tensor_map(&map_a, A, M, K, lda, BM, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    /* One 1-D grid: C spans <= INT_MAX floats, so the block count fits. */
    const long long tiles = (long long)((M - 1) / BM + 1) * ((N - 1) / BN + 1);
    double split_cost = 0.0;
    int slices = split_slices(tiles, K, BK, d.sms, &split_cost);
    float *work = NULL;
    if (slices > 1) {
        /* NULL while the stream captures before its first launch (or with no memory for it):
         * then the whole tiles, which need none. */
        err = sgemm_stream_workspace(stream, SGEMM_WORKSPACE_BYTES(d.sms), (void **)&work);
        if (err != cudaSuccess)
            return err;
        slices = work ? slices : 1;
    }
    const int whole = slices == 1;
    unsigned *bt = NULL;
    int k_pad = 0, n_pad = 0;
    if (whole && tma_a && (err = split_b_first(M, N, K, B, ldb, &bt, &k_pad, &n_pad, stream)))
        return err;
    int feed = FEED_COPY; /* (B^T's map cannot fail: rows of k_pad floats, from the pool) */
    if (bt != NULL && tensor_map(&map_b, (const float *)bt, 2 * n_pad, k_pad, k_pad, BN, BK,
                                 CU_TENSOR_MAP_SWIZZLE_128B))
        feed = FEED_SPLIT_B;
    else if (tma_a && tensor_map(&map_b, B, K, N, ldb, BK, BN, CU_TENSOR_MAP_SWIZZLE_NONE))
        feed = FEED_TMA;
    const size_t smem = whole ? SMEM_BYTES(SPLIT_STAGES_WHOLE) : SMEM_BYTES(SPLIT_STAGES_SLICED);
    kernels[feed][whole]<<<(unsigned)(tiles * slices), THREADS, smem, stream>>>(
        map_a, map_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slices, work);
    err = cudaGetLastError();
    if (bt != NULL) { /* after the product in stream order, whatever happened to it */
        const cudaError_t freed = split_b_memory(0, &bt, stream);
        err = err != cudaSuccess ? err : freed;
    }
    if (err != cudaSuccess || slices == 1) {
        sgemm_trace(23, feed == FEED_SPLIT_B ? "split-b" : "whole", M, N, K, tiles, 1);
        return err;
    }
    sgemm_trace(23, "split-k", M, N, K, tiles * slices, slices);
    return launch_sum_slices(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slices, work, stream);
}

extern "C" const struct step step_23 = {
    23, "tf32x3_wgmma",
    "3xTF32 with wgmma and TMA: FP32 accuracy from TF32 warpgroup products (sm_90a)", 90, launch,
    "whole split-b split-k",
};
