/*
 * plan_costs.h - the measured costs the rungs' plans weigh, in one table.
 *
 * A plan (which tile, how many K slices, stream-K or not) compares the time of the busiest SM
 * under each choice. What the device is (its SMs, how many blocks or clusters fit at once) is
 * asked of the device at run time (common/device_facts.h); what cannot be asked, the relative
 * speed of two kernels and the fixed cost of a mechanism, is measured once and kept here, with
 * how and where it was measured. They were fitted on an H100 and an H200 (the same SM and
 * clocks; the H200's memory is faster), CUDA 13.0: on another GPU a plan may be less than the
 * best, never wrong (every plan computes the same C). results/notes/step_15.md and
 * step_18.md keep the forced-plan sweeps behind them.
 *
 * Units: the FFMA rungs count in hundredths of the time one 128x256 tile takes on an SM that
 * runs one at a time (choose_plan()), or in K tiles (8 deep) of one 64x128 block alone on an
 * SM (split_slices()); the tensor-core rungs in K tiles of one 128x128 block.
 */
#ifndef SGEMM_LADDER_PLAN_COSTS_H
#define SGEMM_LADDER_PLAN_COSTS_H

/* ---- FFMA rungs (13-19) ------------------------------------------------------------------- */

/* A round of 64x128 tiles (four blocks an SM) takes LARGE_TILE_GAIN / 4 hundredths: forced onto
 * 4096^2 on an H200, the 128x256 tile ran at 1.006 of cuBLAS, the 64x128 one at 0.967 (1.04x). */
#define LARGE_TILE_GAIN 104

/* A round of stream-K shares takes STREAM_K_COST hundredths: a round of shares ran ~13% slower
 * than a round of whole tiles (a second K-loop entry, a partial tile through L2; H100). */
#define STREAM_K_COST 113

/* Split-K through global memory (rung 14): a slice's fixed cost, in K tiles: a pipeline fill
 * and a 32 KB partial sum through L2. Fitted to every plan forced every 64 from 256 to 1792
 * (H200). */
#define SPLIT_BLOCK_COST 8

/* The large-tile split: a 128x256 K tile in tenths of a lone 64x128 block's: 4 times the work at
 * ~83% of the FFMA peak, where a lone 64x128 block runs at ~68% (H100, 1024x1024x16384):
 * 4 x 0.68 / 0.83 = 3.3. Plus PIPELINE_FILL_KT K tiles to fill a block's pipeline, and the slabs
 * written and read back: 8 bytes a float at ~1 MB a unit, SLAB_COST_TENTHS a million floats. */
#define LARGE_KT_COST    33
#define PIPELINE_FILL_KT 4
#define SLAB_COST_TENTHS 80

/* The 64x64 tile (rung 17): its K tile takes T_KT_COST% of a 64x128 block's, both alone on an
 * SM (64x256x16384 in 8 slices, a block an SM, H200: 71.6 against 108 us). */
#define T_KT_COST 66

/* Split-K in clusters (rung 16): a slice's fixed cost in K tiles (8 through L2, 2 in the
 * cluster), and the most blocks an SM the model is trusted with. Fitted to every plan forced
 * every 64 from 256 to 1792 on an H200: within 3% of the fastest at 20 of 25 sizes. */
#define CLUSTER_BLOCK_COST 2
#define CLUSTER_MAX_SHARE  6

/* The 64x128 tile's split into slabs (rung 18): two blocks of 4 warps on an SM each run at
 * SHARED_SM_SPEED% of a lone block's time per K tile (a lone block idles its SM between its own
 * instructions; 4096x128x4096, H100), each with SMALL_FILL_KT K tiles of pipeline fill. */
#define SHARED_SM_SPEED 92
#define SMALL_FILL_KT   2

/* The uneven tail (rung 18): a short piece runs SHORT_PIECE_KT K tiles beyond its own (the add
 * and the launch; 3, 5 and 8 within 0.3%, H100); the plan pays UNEVEN_COST hundredths for its
 * extra launches. */
#define SHORT_PIECE_KT 5
#define UNEVEN_COST    2

/* C's rows not 16-byte aligned (rung 19): store_c4() writes single floats 16 bytes apart, ~3.5
 * ps an element of C beyond the float4 path (4096x4096x128, ldc + 1: 104 -> 162 us, H200);
 * written by rows of the lane grid, ~1 ps, but in kernels of their own whose K loop may run up to
 * ~6% slower (the rows epilogue inside the shared kernels cost aligned shapes 4-7%). The rows
 * kernels pay while 2.5 ps > 0.06 x 2 K flops / 53 TFLOP/s, K below ~1100; taken to
 * C_ROWS_MAX_K with a margin (derived, to be checked on the GPU: results/notes/step_18.md). */
#define C_ROWS_MAX_K 512

/* ---- Tensor-core rungs (22-29), in K tiles of one 128x128 block ------------------------- */

/* Split-K: a slice's partial tile written and read back costs MMA_SPLIT_TILE_COST K tiles (set
 * with 32-deep K tiles, kept with 64); the sum kernel SUM_KERNEL_COST plus
 * SUM_KERNEL_COST_PER_BLOCK per block it sums (H100). */
#define MMA_SPLIT_TILE_COST       1.3
#define SUM_KERNEL_COST           2.0
#define SUM_KERNEL_COST_PER_BLOCK 0.01

/* The uneven tail (rung 28): the second launch of rung 27, its prologue and pipeline fill, ~4
 * us, about one K tile of a block (the unit above; derived). */
#define TAIL_LAUNCH_COST 1.0

/* B split once before the product (rung 26) where at least SPLIT_B_MIN_M rows share it, and at
 * most SPLIT_B_MAX_BYTES of split B (K x N = 2^27). The pass moves 12 bytes an element of B (4
 * read, 8 written: ~3.4 ps at ~3.5 TB/s); the K loop it spares the producers' split runs ~20%
 * faster (rung 25 -> 26 at 4096, H200: +19% with the pass inside), 0.2 x 2 M flops an element
 * of B at ~135 TFLOP/s: M x 0.003 ps. It pays from M ~ 1150: 9 rows of 128-row tiles. Where
 * B's rows are not 16-byte aligned (rung 27) the split replaces B's copy (8 bytes an element),
 * 4 bytes more, and pays from a third of the rows: SPLIT_B_COPIED_MIN_M, 3 rows of tiles. Both
 * derived; on an H200 1152-1536 rows gained 5-7% over the earlier 2048, and 640-1801 rows with
 * B's rows unaligned 19-23% (results/notes/step_26.md). */
#define SPLIT_B_MIN_M        1152
#define SPLIT_B_COPIED_MIN_M 384
#define SPLIT_B_MAX_BYTES    ((size_t)1 << 30)

/* An operand copied into 16-byte rows (rung 27) where TMA cannot read its own, when the other
 * side of C (N for A, M for B) is at least ALIGN_COPY_MIN: the copy moves 8 bytes per element
 * (~4 TB/s); each element then feeds 2 x (other side) flops of product, which TMA runs about
 * twice as fast as the producers' 4-byte copies (~50 against ~100+ TFLOP/s): the copy pays from
 * an other side of 8 x 50e12 / 4e12 = ~100, and is taken with a margin of 2.5 (derived, not
 * fitted: the H200 measurements in results/notes/step_27.md check it). */
#define ALIGN_COPY_MIN 256

/* ---- Routing (rung 29): the FFMA path or the tensor cores -------------------------------- */

/* An SM's FP32 rate: 128 lanes, a fused multiply-add (2 flops) each a clock (sm_80 and on). */
#define FFMA_FLOPS_PER_CLOCK 256

/* The tensor-core path (rung 27) against the FFMA path (rung 19; measured as rung 18, the same
 * kernels on aligned rows), both priced at their rate on a large product, the tensor cores
 * TC_OVER_FFMA_TENTHS / 10 times the FFMA path's (2.5-2.7 at 4096 and 8192, H200), plus
 * TC_FIXED_CLOCKS of the tensor cores' fixed cost (extra launches, a deeper pipeline to fill, a
 * longer epilogue). Where the two cross is measured: in make all-bench (H200) the FFMA path
 * wins 512^3 (0.27 GFLOP, 1.117 against 0.862 of cuBLAS) and loses 768^3 (0.91 GFLOP, 1.152
 * against 1.572); 12,000 clocks put the crossing at 12,000 x 256 x 2.5 / 1.5 = 5.1 MFLOP an SM,
 * 0.68 GFLOP on 132 SMs, between the two. */
#define TC_FIXED_CLOCKS     12000
#define TC_OVER_FFMA_TENTHS 25

#endif /* SGEMM_LADDER_PLAN_COSTS_H */
