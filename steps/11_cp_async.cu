/*
 * Rung 11 - cp.async: global -> shared copies that skip the registers, a multi-stage
 * pipeline, and a 128x256 block tile (with a 64x128 one for small C, chosen by size,
 * stream-K, a split tail or an uneven tail for the last round of tiles, and split-K where
 * tiles are too few, its slices meeting in a cluster on sm_90). The ladder's final answer
 * for every size.
 *
 * What changes from rung 10
 *   1. Copies. Rung 10 loads a tile into registers (LDG, or a texture fetch) and stores it to
 *      shared memory (STS) after the load returns. Here one instruction, cp.async (SASS:
 *      LDGSTS), moves the bytes from L2 straight into shared memory: no staging registers,
 *      no store instruction, and the thread never waits for the data, it only waits (later,
 *      cp.async.wait_group) until a whole tile has landed. B moves 16 bytes per copy
 *      (.cg, L2 only). A moves 4 bytes per copy (.ca): A is transposed on the way in
 *      (a_tile[k][m]), and a 16-byte copy cannot scatter 4 floats of a row into 4 rows.
 *      With one float per copy, rows of BM+4 floats (padding) spread those transposing
 *      writes over all 32 banks, where rung 07's XOR swizzle would leave 2-way conflicts. One
 *      copy instruction of a warp covers 4 rows x 8 consecutive floats (4 whole 32-byte
 *      sectors): Nsight Compute showed that 8 rows x every other float cost 8 shared-memory
 *      wavefronts per copy instead of 1 (A_WHOLE_SECTORS below). Measured on an H200 at
 *      4096, the copies are still not free of conflicts: the instruction-level counter
 *      smsp__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts reports 25.2M
 *      extra wavefronts on top of the 25.2M the copies need (results/NOTES.md); which of
 *      the A or B copies pays them is not yet separated.
 *   2. A pipeline of L_STAGES (default 3) shared-memory stages instead of 2: up to
 *      L_STAGES-1 tiles are in flight while one is computed. Fragments are still double
 *      buffered in registers (LDS.128 of step k+1 is issued before the FMAs of step k).
 *   3. A 128x256 block tile: 8 warps (2 x 4) of 64x64, 16x8 of C per thread (rung 10: 8x8).
 *      Per k step a thread issues 128 FFMA for 6 LDS.128 (rung 10: 64 for 4), and the
 *      block does 128*256/(128+256) = 85 FMAs per float it copies (rung 10: 64).
 *   4. Dispatch. 128x256 tiles at 1024^2 give only 32 blocks for 132 SMs, so the launcher
 *      also has a 64x128 kernel (4 warps of 32x64, 8x8 per thread: rung 10's warp tile)
 *      and picks whichever finishes first by a cost model (choose_plan() below).
 *      Measured on the H200 (same FFMA order): at 1024 the 64x128 kernel runs 1.16x cuBLAS
 *      where 128x256 would leave 100 SMs idle; at 2048-8192 the 128x256 kernel wins
 *      (forced 64x128: 0.95 / 0.97 / 0.99 at 2048 / 4096 / 8192).
 *   5. Block rasterization: blocks walk RASTER_GROUP (8) tile rows down a column before
 *      moving right, so the blocks resident together share A and B panels in L2.
 *   6. FFMA order: column by column with the rows snaking down and up, so that neighbouring
 *      FFMAs share an operand that ptxas serves from the operand reuse cache (.reuse)
 *      instead of the register file. Row by row, Nsight Compute showed 0.22 dispatch stalls
 *      per instruction, sampled on the FFMAs (cuBLAS: none); this order cut them to 0.15
 *      and was the largest single gain on the H200 (+6-7%, results/notes/step_11.md).
 *   7. Stream-K for the last round. 512 tiles of 128x256 at 4096^2 are 3.88 rounds of 132
 *      SMs: whole tiles leave the 4th round 12% idle; at 5632^2 (968 tiles, 7.33 rounds) the
 *      8th round is 67% idle, at 2560^2 (200 tiles) the 2nd is 48% idle. Where the model says
 *      it pays, the launcher runs the whole rounds but one as whole tiles, and shares the K
 *      tiles of the rest out evenly over one block per SM (sgemm_cp_async_128x256_sk; the
 *      schedule, and how a tile split between two blocks still adds its K terms in order,
 *      are explained at "Stream-K" below). Predicted: +3% at 4096 and 8192, +5-10% where the
 *      last round is mostly idle. Measured on the H200 (ratio to cuBLAS, sweep before -> after):
 *      2560 0.96 -> 0.995, 3328 0.98 -> 1.07, 5632 0.98 -> 1.055, 5888 0.98 -> 1.09,
 *      6912 1.01 -> 1.09, 8192 1.018 -> 1.036. At 4096 it does not pay (forced: 1.001 against
 *      1.010): end to end a round of shares costs ~7% more than a round of whole tiles; of
 *      that, the stream-K kernel itself runs 4% slower per tile (Nsight Compute: dispatch
 *      stalls 0.27 vs 0.16-0.20 per instruction, L2 hit rate 59% vs 81%: blocks at different
 *      K offsets share fewer panels). That eats the 3% of the idle round, so the model keeps
 *      whole tiles there.
 *   8. Split-K where 64x128 tiles cannot fill the SMs: below ~1100^2 they are fewer than the
 *      SMs (512^2: 32 tiles for 132 SMs, a lone block per SM, one warp per scheduler), and
 *      at 1536^2 288 tiles make 2.2 rounds. There the launcher cuts each tile's K loop over
 *      2-8 blocks (sgemm_cp_async_64x128_split; "Split-K" below, slice counts from the cost
 *      model in split_slices()); the last block of a tile to finish adds the partial sums
 *      up in a fixed order and writes C. Predicted: up to 3x at 512^2 (31 us -> ~10 us).
 *      Measured on the H200 (ratio to cuBLAS; unsplit: a SPLIT_K=0 build, split: `make
 *      step=11 run`): 256 0.65 -> 0.85, 512 0.56 -> 0.97, 768 0.86 -> 1.05, 1536 0.94 ->
 *      1.03. At 512 that is 1.7x, not 3x: every block adds ~3 us of partial-sum traffic
 *      through L2 (fitted from slice counts forced 2..8, results/notes/step_11.md), and it
 *      pays only where the blocks fill their last round: at 1024^2 (128 tiles) two slices
 *      lose 8%, so the model keeps whole tiles there. Unlike stream-K this changes the
 *      rounding: not bit for bit like cuBLAS at those sizes any more (rel err 2-6e-7), but
 *      the same floats every run.
 *   9. The FFMA order, measured. Which column of the thread tile comes first, and in which
 *      order the rows run down it, changes nothing in the sums (each accumulator still adds
 *      k = 0, 1, ..., K-1 in order, so the floats are the same) but everything in the code:
 *      ptxas schedules the LDS.128 and allocates the registers from the order it is given.
 *      160 random orders (the 8 columns in a random order with the 16 rows in a random
 *      order down and up, the same with rows outside, or in bands of 4 or 8 rows) ran from
 *      0.91 to 1.03x cuBLAS at 4096 on the H200. The measurement is sharp: an order timed
 *      twice in one run agrees within 0.2%, and the 8 best timed again in a later run kept
 *      their lead over the plain order (+1.2 to +2.3%). None of the static counts we tried
 *      (register reads, register bank conflicts, how early each LDS.128 is issued) ranks
 *      them. The large kernels use the fastest one, FFMA_ORDER_16x8 below: +2.0-2.3% at
 *      2048, 4096 and 8192 over columns 0..7 and rows 0..15 (1.033 / 1.034 / 1.057 against
 *      1.010 / 1.011 / 1.036 in the same run). It is tuned to this compiler (CUDA 13.0):
 *      another ptxas may schedule it differently; FFMA_TUNED=0 gives the plain order back.
 *      Later, on an H100 (session 7), its neighbours: 52 orders one or two swaps of columns
 *      or rows away ran 0.96-1.048 at 4096, two dozen of them within 0.4% of each other (a
 *      plateau, not a peak). The one now below swaps rows 10 and 12: 0.1-0.3% faster at
 *      2048, 3328, 4096, 6144 and 8192 (two runs each; 4096 1.046 -> 1.048-1.049).
 *  10. A split tail. Where the 128x256 tiles fill some rounds and then at most half of one
 *      more (3072^2: 288 tiles = 2 rounds of 132 + 24), the tiles of that last round are cut
 *      along K into s = 132 / 24 = 5 equal slices (sgemm_cp_async_128x256_split: item 8's
 *      split-K on the large tile), so that 120 blocks take a fifth of a tile each instead of
 *      24 SMs taking a whole one. Stream-K (item 7) spreads the last two rounds instead; on
 *      the H100 its shares run ~13% slower per tile than whole tiles, a round of pieces only
 *      ~5-8% of a round beyond its share. Measured on an H100 (ratio to cuBLAS, session 4's
 *      rung -> this one, same process; STREAM_K_COST refitted to 113 at the same time):
 *      2816 0.996 -> 1.027 (whole tiles now), 3072 1.095 -> 1.147, 3840 1.088 -> 1.100,
 *      4864 1.092 -> 1.118, 5632 1.071 -> 1.083, 6400 1.082 -> 1.099, 6656 1.089 -> 1.100;
 *      4096 and 8192 unchanged (1.025, 1.047). What was predicted first, and missed: an
 *      uneven cut of a last round MORE than half busy (4096^2: 116 tiles for 132 SMs, each
 *      cut at 8/9 of K, the 116 short ends following each other on the 16 free SMs) should
 *      end the run 1/9 of a round sooner, +2.5% at 4096. It lost 4%: Nsight Compute showed
 *      the split kernel's K loop at a 66% busy FMA pipe, against 82% in the whole-tile
 *      kernel. The same source, compiled into another kernel, got another schedule from
 *      ptxas (254 registers; short-scoreboard, barrier and MIO stalls 0.42 / 0.17 / 0.08
 *      per instruction against 0.14 / 0.05 / 0). Summing the slices from memory instead of
 *      registers (sum_slots()) brought it to ~230 registers and a 69-74% busy pipe: enough
 *      for a small last round, not for 8/9 of one, and the uneven cut lost at every size
 *      tried (2560, 2816, 4096, 4608). Kept: equal slices, where the last round is half busy
 *      or less.
 *  11. An uneven tail. Where the last round is MORE than half busy (4096^2: 116 tiles for
 *      132 SMs), each of its tiles is cut once along K, unevenly: a long piece (460 of the 512
 *      K tiles) on an SM of its own, and a short one (52) that runs, with the other short
 *      ones, one after another on the 16 SMs the round leaves free: 8 waves of 16. Item 10
 *      showed that a piece computed by another kernel gets another K-loop schedule from
 *      ptxas, ~20% slower; so here every piece runs in the whole-tile kernel itself. That
 *      kernel only gained a `first_tile` argument (its K loop and epilogue are the same SASS
 *      instructions as before), and a piece is that kernel launched on a K range: the long
 *      pieces write C (with beta), the short ones write their sums, as the GEMM of C's last
 *      rows, into a buffer that a small kernel then adds to C (sgemm_cp_async_add_short_pieces).
 *      Side by side means two streams (launch_uneven_tail()): the long pieces and then the
 *      whole tiles on the caller's own stream; the short pieces and the add on a second one,
 *      the short pieces one launch per wave, so that they can never hold more than the free
 *      SMs, whichever grid the block scheduler starts first. Predicted: the last round
 *      takes 0.90 of a round, +2.5% at 4096 minus the add (1.024 -> ~1.045). Measured on the
 *      H100, same process, session 5's plan -> this one: 2560 0.993 -> 1.020, 2816 1.028 ->
 *      1.094, 3328 1.070 -> 1.106, 4096 1.026 -> 1.045, 4608 1.029 -> 1.042, 5376 1.046 ->
 *      1.065, 6144 1.042 -> 1.060, 7168 1.033 -> 1.040, 7680 1.088 -> 1.097, 8192 1.047 ->
 *      1.053. Two first versions lost most of that: with all short pieces in one launch, the
 *      priorities did not keep them off the long pieces' SMs in every replay (+0.3% on
 *      average, replays 3-5% apart); and an add in which each thread walked one column down
 *      the tile was latency-bound (~65 us when it ran after the whole tiles) and cost 1-5% even
 *      beside them. CUDA events between the launches at 4096 (recorded with that slow add):
 *      the long pieces end at ~592 us, the 8th wave of short ones at ~600, the add at ~2065,
 *      the whole tiles at ~2550 (3 rounds of ~653 us). The rounding is that of a two-slice
 *      split sum (C = long + short), the same on every run. The long pieces and the whole
 *      tiles first ran on a stream of their own, of the greatest priority, that waited for
 *      the caller's (an event): that hop cost ~5 us per call (1.5-10 us at the 10 sizes of the
 *      uneven tail, measured on the H100 in session 7, three runs each: 2560 0.7066 ->
 *      0.7008 ms, 4096 2.5431 -> 2.5388, 8192 20.234 -> 20.228), so they now run on the
 *      caller's stream.
 *  12. Split-K through clusters (sm_90). Item 8's slices meet in global memory: each stores
 *      its 32 KB of partial sums, fences, counts itself on an atomic, and the last one reads
 *      all the slots back alone. At 256^2 that chain is most of the run: a build that skips
 *      it (wrong C, the floor) ran in 9.0 us instead of 13.8, and under Nsight Compute the
 *      kernel took 7.3 us instead of 12.2. On Hopper the slices of a tile can run as one
 *      thread block cluster, whose blocks read each other's shared memory: each slice
 *      parks its sums in its own shared memory, one cluster barrier replaces the fences
 *      and the count, and every slice then adds up its own 1/slices of the tile (slice
 *      order, so the same floats as item 8) and writes that part of C (cluster_finish();
 *      sgemm_cp_async_64x128_cluster). Which slice counts pay changed: a cluster never
 *      spans two GPCs, so on the H200 only 30 clusters of 4, or 15 of 8, run at one block
 *      per SM; the rest double up on SMs while others idle, and 512^2 in 32 clusters of 4
 *      ran slower than with global slots (20.0 against 17.9 us). So the cost model asks the
 *      driver how many clusters fit at one block per SM (cluster_capacities()) and counts
 *      the blocks on the busiest SM from that. Predicted: 256^2 13.8 -> ~10 us, 512^2 18 ->
 *      ~14, 768^2 36 -> ~32. Measured on the H200 (ratio to cuBLAS, three runs, global
 *      slots -> clusters): 128 0.78 -> 1.05, 256 0.87 -> 1.20, 384 1.01 -> 1.29, 512 0.95 ->
 *      1.00, 640 0.97 -> 1.08, 768 1.03 -> 1.15; from 896 up the model keeps what it chose
 *      before. GPUs before sm_90 keep item 8 (`make` also builds bin/step11-global-split,
 *      -DCLUSTER_SPLIT=0, so that the GPU tests check that path on an H100 too). Between
 *      the sweep's sizes (every 64, session 9) the model's first limit, at most 2 blocks of
 *      a split launch per SM, ruled out the fastest plan at 576, 832, 1216 and 1600; refit
 *      (split_slices()): 576 0.88 -> 1.04-1.08, 832 0.91 -> 1.00-1.02, 896 0.87-0.89 ->
 *      0.97-0.99, 1216 1.01 -> 1.10, 1600 1.05 -> 1.15.
 *
 * Why the hardware rewards it
 *   An FP32 GEMM on an SM is bounded by issue slots: each of the 4 schedulers issues one
 *   instruction per clock and the FP32 pipe takes one warp FFMA per clock, so every LDG,
 *   STS, address add or barrier displaces an FFMA. The K loop of the 128x256 kernel is
 *   1111 SASS instructions per tile, 1024 of them FFMA (92.2%); LDGSTS replaces the
 *   rung-10 pair LDG + STS and needs no registers to hold a tile in flight, which is what
 *   lets 214 registers hold 128 accumulators + 48 fragment floats. The deeper pipeline
 *   matters because one block of 8 warps fills an SM (2 warps per scheduler): there are few
 *   other warps to run while a copy is late, so the copy must have been issued tiles ago.
 *
 * Predicted speed (written before measuring), ratio to cuBLAS on the H200 of ANCHORS.md:
 *   4096: 1.04x (~53 TFLOP/s), 8192: 1.04x, 2048: 1.05x (128 blocks, one wave),
 *   1024: 1.15x (64x128 kernel, 128 blocks on 132 SMs, vs cuBLAS at 33.7 TFLOP/s).
 *   Reasoning: 92% FFMA issue share, minus barrier and bank stalls (~5%), times 97% wave
 *   quantization (512 blocks = 3.88 waves at 4096) gives ~84% of the 64.1 TFLOP/s FFMA peak.
 *
 * Measured (NVIDIA H200, 1980 MHz, ratio to cuBLAS timed in the same process):
 *   first version (row-by-row FFMAs): 1.07 / 0.94 / 0.94 / 0.95 at 1024 / 2048 / 4096 / 8192.
 *   with items 1-6: 1.149 / 1.010 / 1.009 / 1.017 (`make step=11 run`, session 1).
 *   with stream-K (item 7): 1.157 / 1.010 / 1.010 / 1.034 (`make step=11 run`, session 2;
 *   results/NOTES.md). The whole-tile K loop compiles to the same 1111 SASS instructions as
 *   before; a first version that passed the accumulators into tile_product() instead of
 *   declaring them there got a different register allocation and ran 1% slower.
 *   with split-K (item 8): 1.150 / 1.012 / 1.006 / 1.030 (session 3; those four sizes do not
 *   split, and the other kernels' SASS is unchanged: the same within the run-to-run spread).
 *   with the measured FFMA order (item 9): 1.139 / 1.033 / 1.030 / 1.052 (session 4;
 *   52.8 TFLOP/s at 4096 = 82% of the 64.1 TFLOP/s FFMA peak, 53.9 at 8192 = 84%).
 *   with the split tail (item 10): those four sizes do not split; see item 10 for the ones
 *   that do (session 5, on an H100).
 *   with the uneven tail (item 11), on the H100: 1.132 / 1.033 / 1.046 / 1.050 (session 6;
 *   session 5's rung there: 1.131 / 1.036 / 1.024 / 1.044). 53.9 TFLOP/s at 4096 (84% of
 *   the FFMA peak), 54.3 at 8192 (85%).
 *   with the order's neighbour (item 9) and the tail on the caller's stream (item 11),
 *   session 7: on the H100 1.127 / 1.035 / 1.048 / 1.051 (at its power cap; 1.049-1.051 at
 *   4096 in six more runs), on the H200 1.137 / 1.036 / 1.057 / 1.060, 54.2 TFLOP/s at 4096
 *   (85% of the peak). The kernel's time is the same on both; cuBLAS is 0.6% slower on the
 *   H200.
 *   with split-K through clusters (item 12): those four sizes do not split; see item 12
 *   (session 8, H200).
 *   The prediction missed at 4096: before item 9 the FMA pipe ran 80% busy (cuBLAS 79%) with
 *   87% of the issue slots used (after it: 81.9% and 88.6%). The idle slots are not the
 *   LDS.128 latency we first blamed (short scoreboard stalls at the first FFMAs of each k
 *   step; ptxas issues each LDS only ~48 instructions before its use): built with ptxas
 *   -regUsageLevel=6, the same source issues them ~78 ahead, the short-scoreboard stalls
 *   halve (0.21 -> 0.11 per instruction), and the FMA pipe stays at 80.2%. With 2 warps per
 *   scheduler, the stalls that remain (dispatch 0.15, barrier 0.07, short scoreboard) are
 *   what is left to win; a third warp needs <= 168 registers, where this tile spills 296
 *   bytes. Nor are the idle slots for want of warps: a 96x128 tile (4 warps, 12x8 per
 *   thread, 164 registers, 3 blocks = 3 warps per scheduler; session 4) keeps the issue
 *   slots just as busy (86.9%) and runs 0.955 at 4096. What did move the speed is the order
 *   of the FFMAs (item 9). Tried and lost: BK = 16, a 128x128 tile with 2 or 3 blocks per
 *   SM (4 or 8 warps each), 3 fragment buffers, 4 stages.
 *
 * The pipeline (stages = L_STAGES or S_STAGES; tile t is commit group t)
 *   prologue: copy tiles 0..stages-2, one commit each; wait_group(stages-2); barrier.
 *   iteration t: copy tile t+stages-1 into the stage tile t-1 used (its last reads came
 *   before the barrier that ended iteration t-1), commit (an empty group past the end keeps
 *   the count uniform); k steps 0..6; then wait_group(stages-2) (groups 0..t+1 complete)
 *   and a barrier (everyone's copies visible) before the fragments of tile t+1 are read.
 *   With stages = 2 the wait covers the copy issued at the top of the same iteration.
 *
 * Edges and alignment (correct for any M, N, K >= 1, any ld, any 4-byte aligned pointers)
 *   - Zero-fill without reading: a 4-byte cp.async with src-size 0, or a 16-byte one with
 *     its ignore-src predicate set, reads nothing and writes zeros. Rows below M and columns
 *     right of N become zeros in shared memory, and their source pointers are clamped inside
 *     the operand anyway (row 0 / column 0 of the tile).
 *   - K: the FIRST K tile is the partial one (k = K-8*kt .. , slots k < 0 zero-filled),
 *     so every later tile is full and the main loop has no K test; the order of the FMAs
 *     is still k = 0, 1, ..., K-1 (the zero slots come first, adding exact zeros to 0).
 *   - A is always copied 4 bytes at a time: legal for any lda and alignment.
 *   - B: 16-byte copies need ldb % 4 == 0, N % 4 == 0 and B 16-byte aligned (checked at
 *     launch); otherwise the *_b4 kernels copy B 4 bytes at a time. With N % 4 == 0 a
 *     4-float segment is wholly inside N or wholly outside (zero-filled, nothing read).
 *   - C: float4 stores (and loads when beta != 0) where ldc % 4 == 0, C is 16-byte
 *     aligned and all 4 columns are inside N; scalar stores otherwise. beta == 0 never
 *     reads C. With this lane layout each warp store already covers 4 rows x 128 contiguous
 *     bytes, so no staging through shared memory is needed to coalesce.
 *   - Grid: one dimension, block -> tile computed in the kernel (C spans <= INT_MAX floats,
 *     so the block count fits gridDim.x); no row slabs needed.
 *   - Stream-K: a tile split between blocks w and w+1 gets the same floats as a whole one
 *     (block w+1 continues block w's accumulators, k in order); the launch is cooperative,
 *     so a block never waits on one that is not running; if the GPU cannot hold all the
 *     blocks at once (cudaErrorCooperativeLaunchTooLarge), the launcher runs whole tiles.
 *   - Split-K and the split tail: each slice starts at a whole K tile (only tile 0 is
 *     partial), the counts are atomic and the last block reads the slots only after a
 *     fence, so any finishing order gives the same floats (a split sum's, not K in order);
 *     a device without a workspace slot (more than 64 devices) runs whole tiles. Through
 *     clusters: the sums are read only between two cluster barriers (after every slice
 *     has stored, before any block may exit), in slice order: the same floats.
 *   - The uneven tail: the long piece covers whole K tiles (the partial one, if any, is the
 *     short piece's first), the short pieces write a buffer of the launcher's (beta 0: never
 *     read before written), and the add starts only after both (events), so C gets
 *     long + short in that order on every run. The buffer is at most 256 MB; a C that would
 *     need more, or a device without a slot (more than 64 devices), runs whole tiles.
 *   - Below sm_80 there is no cp.async: the launcher returns cudaErrorInvalidDevice.
 *
 * Resources (ptxas -v, sm_90, CUDA 13.0, defaults L_STAGES=3, S_STAGES=4), 0 spills:
 *   sgemm_cp_async_128x256, _b4: 214 / 214 registers, 1 barrier, 0 stack; dynamic shared
 *     memory 3 x 12,416 = 37,248 bytes; 1 block (8 warps) per SM.
 *   sgemm_cp_async_128x256_sk, _sk_b4: 241 / 241 registers (three copies of the K loop, one
 *     per piece), 1 barrier, 0 stack; the same shared memory; 1 block per SM.
 *   sgemm_cp_async_64x128, _b4: 128 / 124 registers (launch bound 128), 1 barrier, 0 stack;
 *     dynamic shared memory 4 x 6,272 = 25,088 bytes; up to 4 blocks per SM.
 *   sgemm_cp_async_64x128_split, _split_b4: 126 / 126 registers (sm_80-89: 128), the same
 *     shared memory and 16 bytes of static shared memory (the "last slice" flag).
 *   sgemm_cp_async_128x256_split, _split_b4: 231 / 231 registers, the large kernel's shared
 *     memory and the 16-byte flag; 1 block per SM.
 *   sgemm_cp_async_64x128_cluster, _cluster_b4 (sm_90 only): 142 / 142 registers, 1 barrier,
 *     0 stack; dynamic shared memory 32,768 bytes (the stages, then the partial sums); launch
 *     bound 3 blocks per SM, not 4: at 128 registers ptxas re-derived the thread index and
 *     the shared-memory base inside the K loop (638 instructions per K tile, against 582
 *     in the whole-tile kernel; at 142 registers: 581).
 *   sgemm_cp_async_add_short_pieces: 18 registers, no shared memory; beside a 128x256 block
 *     (55,296 registers) it fits in the SM's 65,536.
 *   (sm_80: 209, 234-236 and 128; sm_86 / sm_89: 206, 239-241 and 126; all 0 spills, 0
 *   stack.)
 *   Above 48 KB of dynamic shared memory (L_STAGES >= 4) the launcher opts in with
 *   cudaFuncSetAttribute.
 *
 * Knobs (-D): L_STAGES, S_STAGES (or STAGES for both), RASTER_GROUP, LARGE_TILE_GAIN,
 * A_WHOLE_SECTORS (0: the first A copy layout), STREAM_K (0: whole tiles only),
 * STREAM_K_COST, FORCE_KERNEL (1: always 128x256, whole or stream-K; 2: always 64x128),
 * SPLIT_K (0: no split-K), SPLIT_BLOCK_COST, SPLIT_MAX, SPLIT_MIN_KT,
 * FORCE_SPLIT (n: every 64x128 launch in n slices), FFMA_TUNED (0: the plain FFMA order),
 * TAIL_SPLIT (0: no split tail), TAIL_SPLIT_COST, FORCE_TAIL (1: split every last round
 * that is at most half busy, whatever the cost model says), CLUSTER_SPLIT (0: split-K
 * through global memory on sm_90 too), CLUSTER_BLOCK_COST, CLUSTER_MAX_SHARE,
 * CLUSTER_MIN_BLOCKS.
 * See results/notes/step_11.md.
 */
#include <pthread.h>
#include <stdint.h>

#include "../common/step.h"
#include "../common/sgemm_common.h"

/* ---- Knobs for experiments (-DSTAGES=4 etc.; results/notes/step_11.md) ---------------- */
/* Pipeline depth = K tiles resident in shared memory per block (2 = plain double buffering).
 * -DSTAGES=n sets both kernels; -DL_STAGES / -DS_STAGES set one. The small kernel runs one
 * warp per scheduler at 1024, so it has no other warps to hide a late copy: it gets more. */
#ifdef STAGES
#ifndef L_STAGES
#define L_STAGES STAGES
#endif
#ifndef S_STAGES
#define S_STAGES STAGES
#endif
#endif
#ifndef L_STAGES
#define L_STAGES 3 /* 128x256 kernel */
#endif
#ifndef S_STAGES
#define S_STAGES 4 /* 64x128 kernel */
#endif
#ifndef RASTER_GROUP
#define RASTER_GROUP 8 /* block tiles walked down a column before moving right; 1 = row order */
#endif
/* Dispatch: one 128x256 block does the work of four 64x128 blocks in 100/LARGE_TILE_GAIN of
 * their time (104: forced onto 4096^2 on the H200, the two ran at 1.006 and 0.967 of cuBLAS;
 * 110 sent 2304^2 to stream-K, 7% slower there than 64x128). See choose_plan(). */
#ifndef LARGE_TILE_GAIN
#define LARGE_TILE_GAIN 104
#endif
/* A copy layout: 1 (default) = a warp's 4-byte copies of A cover 4 rows x 8 consecutive k,
 * i.e. 4 whole 32-byte sectors; 0 = the first layout, 8 rows x every other k (8 sectors per
 * copy instruction, which Nsight Compute shows costing 8 shared-memory wavefronts, not 1). */
#ifndef A_WHOLE_SECTORS
#define A_WHOLE_SECTORS 1
#endif
/* Stream-K for the large kernel when its tiles do not fill whole rounds (1, default), or
 * whole tiles only (0). See "Stream-K" below. */
#ifndef STREAM_K
#define STREAM_K 1
#endif
/* Dispatch: the cost of a round of stream-K shares, in % of a round of whole tiles (107 was
 * fitted on the H200 in session 2; 113 on the H100 in session 5, where, with each plan
 * timed forced at 2048..8192 step 256, the model picks the fastest or one within 0.3%). */
#ifndef STREAM_K_COST
#define STREAM_K_COST 113
#endif
/* Split tail (item 10): where the 128x256 tiles leave at most half of the last round busy,
 * the tiles of that round are cut along K instead (1, default), or never (0).
 * TAIL_SPLIT_COST is what the cut costs beyond the pieces' share of a tile, in hundredths of
 * a round of whole tiles (dispatch, choose_plan()). FORCE_TAIL 1 splits the last round
 * wherever the 128x256 kernel would leave it at most half busy (for the check matrix). */
#ifndef TAIL_SPLIT
#define TAIL_SPLIT 1
#endif
#ifndef TAIL_SPLIT_COST
#define TAIL_SPLIT_COST 7
#endif
#ifndef FORCE_TAIL
#define FORCE_TAIL 0
#endif
/* Uneven tail (item 11): where the last round of 128x256 tiles is MORE than half busy, each of
 * its tiles is cut once along K, a long piece on its own SM and a short one that runs, with
 * the other short ones, on the SMs the round leaves free (1, default), or never (0). A short
 * piece is taken to cost TAIL_SHORT_KT K tiles of time beyond its own (its pipeline fill, its
 * 128 KB partial sum written out, the launch of its wave; 3, 5 and 8 timed within 0.3% of
 * each other at 11 sizes on the H100); TAIL_UNEVEN_COST is what the cut costs beyond the
 * pieces' time, in hundredths of a round (the add, the events). With these the model picks
 * the uneven tail at every size where it measured fastest (2560-8192, r > w/2) and keeps
 * whole tiles at 3584, where it lost. FORCE_UNEVEN 1 cuts the last round this way wherever
 * K allows (for the check matrix). */
#ifndef TAIL_UNEVEN
#define TAIL_UNEVEN 1
#endif
#ifndef TAIL_SHORT_KT
#define TAIL_SHORT_KT 5
#endif
#ifndef TAIL_UNEVEN_COST
#define TAIL_UNEVEN_COST 2
#endif
#ifndef FORCE_UNEVEN
#define FORCE_UNEVEN 0
#endif
/* Split-K for the 64x128 kernel where the cost model in split_slices() says it pays (1,
 * default), or never (0): at most SPLIT_MAX slices, each of at least SPLIT_MIN_KT K tiles;
 * SPLIT_BLOCK_COST is the model's overhead per block, in K tiles of time.
 * FORCE_SPLIT = n > 1 cuts every 64x128 launch into n slices (capped by the K tiles), so that
 * the check matrix can run all its shapes through the split-K kernels. */
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef SPLIT_BLOCK_COST
#define SPLIT_BLOCK_COST 8
#endif
#ifndef SPLIT_MAX
#define SPLIT_MAX 8
#endif
#ifndef SPLIT_MIN_KT
#define SPLIT_MIN_KT 4
#endif
#ifndef FORCE_SPLIT
#define FORCE_SPLIT 0
#endif
/* Split-K through a thread block cluster (sm_90 and newer; item 12 of the header): the
 * slices of a tile run as one cluster and add their partial sums up through distributed
 * shared memory instead of global slots, an atomic count and fences (1, default; 0: the
 * global scheme on every GPU). CLUSTER_BLOCK_COST is what a cluster slice adds in the cost
 * model of split_slices() (in K tiles of time), and CLUSTER_MAX_SHARE the most blocks of a
 * split launch the model lets share an SM, one after another or at once (refit in session 9:
 * 2 -> 6). */
#ifndef CLUSTER_SPLIT
#define CLUSTER_SPLIT 1
#endif
#ifndef CLUSTER_MIN_BLOCKS
#define CLUSTER_MIN_BLOCKS 3 /* the cluster kernels' launch bound: 3 blocks per SM */
#endif
#ifndef CLUSTER_BLOCK_COST
#define CLUSTER_BLOCK_COST 2
#endif
#ifndef CLUSTER_MAX_SHARE
#define CLUSTER_MAX_SHARE 6
#endif
#if SPLIT_MAX > 8
#error "SPLIT_MAX must be <= 8: a cluster holds a tile's slices, and 8 blocks is the portable limit"
#endif
/* The order of the 128 FFMAs of a k step in the large kernel (item 9 of the header): X(i, j)
 * is acc[i][j] += frag_a[i] * frag_b[j]. Column by column (1, 6, 0, 3, 4, 5, 7, 2), the 16
 * rows of each in one fixed order, reversed every other column: the fastest of 160 random
 * orders measured on the H200 with CUDA 13.0 (results/notes/step_11.md, session 4), with
 * rows 10 and 12 then swapped, the best of 52 neighbours timed on an H100 (session 7).
 * FFMA_TUNED 0: the plain serpentine (columns 0..7, rows 0..15 down and up), as in sessions
 * 1-3. To time another order, put its own "#define FFMA_ORDER_16x8 X(..) ..." in a file and
 * build with -DFFMA_ORDER_FILE=\"path\" (scripts/build_variant.sh). */
#ifndef FFMA_TUNED
#define FFMA_TUNED 1
#endif
#ifdef FFMA_ORDER_FILE
#include FFMA_ORDER_FILE
#else
#define FFMA_ORDER_16x8                                                                            \
    X(11, 1) X(15, 1) X(12, 1) X(10, 1) X(13, 1) X(6, 1) X(4, 1) X(7, 1)                           \
    X(1, 1) X(9, 1) X(14, 1) X(2, 1) X(3, 1) X(5, 1) X(8, 1) X(0, 1)                               \
    X(0, 6) X(8, 6) X(5, 6) X(3, 6) X(2, 6) X(14, 6) X(9, 6) X(1, 6)                               \
    X(7, 6) X(4, 6) X(6, 6) X(13, 6) X(10, 6) X(12, 6) X(15, 6) X(11, 6)                           \
    X(11, 0) X(15, 0) X(12, 0) X(10, 0) X(13, 0) X(6, 0) X(4, 0) X(7, 0)                           \
    X(1, 0) X(9, 0) X(14, 0) X(2, 0) X(3, 0) X(5, 0) X(8, 0) X(0, 0)                               \
    X(0, 3) X(8, 3) X(5, 3) X(3, 3) X(2, 3) X(14, 3) X(9, 3) X(1, 3)                               \
    X(7, 3) X(4, 3) X(6, 3) X(13, 3) X(10, 3) X(12, 3) X(15, 3) X(11, 3)                           \
    X(11, 4) X(15, 4) X(12, 4) X(10, 4) X(13, 4) X(6, 4) X(4, 4) X(7, 4)                           \
    X(1, 4) X(9, 4) X(14, 4) X(2, 4) X(3, 4) X(5, 4) X(8, 4) X(0, 4)                               \
    X(0, 5) X(8, 5) X(5, 5) X(3, 5) X(2, 5) X(14, 5) X(9, 5) X(1, 5)                               \
    X(7, 5) X(4, 5) X(6, 5) X(13, 5) X(10, 5) X(12, 5) X(15, 5) X(11, 5)                           \
    X(11, 7) X(15, 7) X(12, 7) X(10, 7) X(13, 7) X(6, 7) X(4, 7) X(7, 7)                           \
    X(1, 7) X(9, 7) X(14, 7) X(2, 7) X(3, 7) X(5, 7) X(8, 7) X(0, 7)                               \
    X(0, 2) X(8, 2) X(5, 2) X(3, 2) X(2, 2) X(14, 2) X(9, 2) X(1, 2)                               \
    X(7, 2) X(4, 2) X(6, 2) X(13, 2) X(10, 2) X(12, 2) X(15, 2) X(11, 2)
#endif
#ifndef FORCE_KERNEL
#define FORCE_KERNEL                                                                               \
    0 /* 0: choose by size; 1: always 128x256 (whole or stream-K); 2: always 64x128 */
#endif
#if L_STAGES < 2 || L_STAGES > 6 || S_STAGES < 2 || S_STAGES > 6
#error "stage counts must be 2..6"
#endif
#if RASTER_GROUP < 1
#error "RASTER_GROUP must be >= 1"
#endif

/* ---- The shape shared by both kernels ---------------------------------------------------- */
#define BK        8  /* K depth of one shared-memory tile */
#define WARPS_M   2  /* warps stacked along M in a block */
#define WARP_N    64 /* cols of C one warp computes */
#define LANES_M   4  /* a warp's 32 lanes form a 4 x 8 grid over its warp tile */
#define LANES_N   8
#define SUB       4 /* a thread's C is made of SUB x SUB sub-tiles, each read with LDS.128 */
#define SUB_N     2 /* sub-tiles per thread along N, LANES_N*SUB = 32 cols apart */
#define TN        (SUB_N * SUB) /* 8 cols of C per thread */
#define MAX_SUB_M 4 /* sub-tiles per thread along M in the large kernel (16 rows apart) */
#define TM_MAX    (MAX_SUB_M * SUB) /* 16 rows of C per thread in the large kernel */
#define A_PAD     4 /* a_tile rows are BM+4 floats long: conflict-free transposing copies */
/* Per K tile each thread copies 4 floats of A (BM*BK = 4 * threads in both kernels):
 * A_PAIR neighbouring floats of each of A_ROWS rows. */
#define A_PAIR (A_WHOLE_SECTORS ? 1 : 2)
#define A_ROWS (4 / A_PAIR)

/* Large kernel: 128x256 block tile, 8 warps (2 x 4) of 64x64, 16x8 of C per thread. */
#define L_WARPS_N 4
#define L_SUB_M   4
#define L_BM      (WARPS_M * LANES_M * SUB * L_SUB_M) /* 128 */
#define L_BN      (L_WARPS_N * WARP_N)                /* 256 */
#define L_THREADS (32 * WARPS_M * L_WARPS_N)          /* 256 */

/* The uneven tail's add (item 11): a block per ADD_ROWS rows of a tile, a thread per float4. */
#define ADD_ROWS    4
#define ADD_THREADS (ADD_ROWS * L_BN / 4)

/* Small kernel: 64x128 block tile, 4 warps (2 x 2) of 32x64, 8x8 of C per thread. */
#define S_WARPS_N 2
#define S_SUB_M   2
#define S_BM      (WARPS_M * LANES_M * SUB * S_SUB_M) /* 64 */
#define S_BN      (S_WARPS_N * WARP_N)                /* 128 */
#define S_THREADS (32 * WARPS_M * S_WARPS_N)          /* 128 */

/* One pipeline stage: a_tile[BK][BM + A_PAD] (A transposed) then b_tile[BK][BN]. */
#define STAGE_FLOATS(bm, bn)       (BK * ((bm) + A_PAD) + BK * (bn))
#define SMEM_BYTES(stages, bm, bn) ((stages)*STAGE_FLOATS(bm, bn) * (int)sizeof(float))

/* The stream-K schedule (see "Stream-K" further down). */
struct stream_k {
    int dp_tiles;     /* tiles before the shared ones: the whole-tile kernel does them */
    int sk_tiles;     /* the tiles after them, whose K tiles are shared out evenly */
    float4 *partials; /* one slot of bm*bn floats per block */
    unsigned *flags;  /* flags[w] != 0: slot w holds block w's part of a tile, for block w+1 */
};

/* Split-K (a few small tiles, or the last round of large ones; see "Split-K" below): block
 * (slice s, tile t) computes K tiles [s*kt/slices, (s+1)*kt/slices) of tile first_tile + t;
 * the last of a tile's slices to finish adds them up, slice 0 first, and writes C. */
struct split_k {
    int slices;       /* blocks per tile, >= 2 */
    int slice;        /* this block's slice (set in the kernel) */
    int first_tile;   /* the launch's tile t is tile first_tile + t of C (0, or the whole rounds) */
    float4 *partials; /* slices slots of bm*bn floats per tile, slice-major within a tile */
    unsigned *counts; /* counts[t]: slices of tile t done; the last one resets it to 0 */
};

/* Everything from here to the kernels is sm_80+ device code: cp.async does not exist below
 * sm_80, so those builds compile only the trapping kernel stubs further down. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800

/* ---- cp.async, as inline PTX (sm_80+) ------------------------------------------------------
 * dst is a shared-memory address (32 bits), src a global one. src_bytes < cp-size copies
 * src_bytes and zero-fills the rest; src_bytes == 0 reads nothing at all, so a tile edge
 * becomes zeros in shared memory without a branch and without reading outside A or B. */
static __device__ __forceinline__ void cp_async_4(unsigned dst, const float *src, int src_bytes)
{
    /* .ca: 4-byte copies must go through L1 (.cg only exists for 16 bytes) */
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes)
                 : "memory");
}

/* 16-byte copy of a segment that lies wholly inside B (copy != 0) or wholly outside it
 * (copy == 0: the "ignore-src" predicate writes 16 zeros and reads nothing). The predicate
 * form needs no zero-fill byte count, which ptxas would otherwise fold into the address
 * with 4 extra integer instructions per copy per tile. */
static __device__ __forceinline__ void cp_async_16(unsigned dst, const float *src, int copy)
{
    /* .cg: cache in L2 only; each 16 bytes lands in shared memory exactly once per block */
    asm volatile("{\n"
                 " .reg .pred skip;\n"
                 " setp.eq.s32 skip, %2, 0;\n"
                 " cp.async.cg.shared.global [%0], [%1], 16, skip;\n"
                 "}\n" ::"r"(dst),
                 "l"(src), "r"(copy)
                 : "memory");
}

/* Closes the group of copies this thread issued since the last commit. */
static __device__ __forceinline__ void cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most `pending` (a constant 0..4) of this thread's groups are still in flight.
 * The "memory" clobber keeps the compiler from hoisting shared-memory reads above the wait. */
static __device__ __forceinline__ void cp_async_wait(const int pending)
{
    /* wait_group takes an immediate: one asm per value, the constant picks one */
    if (pending <= 0)
        asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    else if (pending == 1)
        asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    else if (pending == 2)
        asm volatile("cp.async.wait_group 2;\n" ::: "memory");
    else if (pending == 3)
        asm volatile("cp.async.wait_group 3;\n" ::: "memory");
    else
        asm volatile("cp.async.wait_group 4;\n" ::: "memory");
}

static __device__ __forceinline__ void cp_async_wait_all(void)
{
    asm volatile("cp.async.wait_all;\n" ::: "memory");
}

/* ---- Where each thread copies from and to ----------------------------------------------- */
struct copy_plan {
    const float *a_src[A_ROWS]; /* this thread's first A float in each of its rows, next K tile */
    const float *b_src;         /* this thread's first B float (row b_kr), next K tile */
    long long b_row_gap;        /* floats between this thread's B rows: b_row_step * ldb */
    long long b_tile_step;      /* floats from one K tile of B to the next: BK * ldb */
    int a_bytes[A_ROWS];        /* 4, or 0 for a row below M: zero-fill, nothing read */
    int b_bytes;                /* b16: 1 if the 16-byte segment is inside N, else 0; b4: 4 or 0 */
    unsigned a_dst, b_dst;      /* shared addresses of this thread's first A, B float (stage 0) */
};

/* Copies per thread and the row steps between them (same in both kernels: A 4 x 4 bytes;
 * B 2 x 16 bytes, rows b_kr and b_kr+4, or 8 x 4 bytes, rows 0..7). A's rows are
 * A_ROW_STEP apart: a warp's copies cover 32 / (BK / A_PAIR) consecutive rows. */
#define A_ROW_STEP(threads)          ((threads) / (BK / A_PAIR))
#define B_LOADS(b16, bn, threads)    ((b16) ? BK * (bn) / (4 * (threads)) : BK * (bn) / (threads))
#define B_ROW_STEP(b16, bn, threads) (BK / B_LOADS(b16, bn, threads))

/*
 * Issues this thread's copies of one FULL K tile into the stage at byte offset `stage`, then
 * steps the sources on to the next K tile. (Only tile 0 can be partial; it is copied by hand
 * in the kernel.) Per tile: 6 LDGSTS and 5 pointer additions, no bounds tests.
 */
static __device__ __forceinline__ void copy_tile(struct copy_plan *p, unsigned stage, int a_ld,
                                                 int bn, int threads, int b16)
{
#pragma unroll
    for (int i = 0; i < A_ROWS; ++i) {
#pragma unroll
        for (int e = 0; e < A_PAIR; ++e) /* A[row][k+e] -> a_tile[kk+e][row] */
            cp_async_4(p->a_dst + stage + 4u * (unsigned)(i * A_ROW_STEP(threads) + e * a_ld),
                       p->a_src[i] + e, p->a_bytes[i]);
        p->a_src[i] += BK;
    }
#pragma unroll
    for (int j = 0; j < B_LOADS(b16, bn, threads); ++j) {
        const unsigned dst =
            p->b_dst + stage + 4u * (unsigned)(j * B_ROW_STEP(b16, bn, threads) * bn);
        if (b16)
            cp_async_16(dst, p->b_src + j * p->b_row_gap, p->b_bytes);
        else
            cp_async_4(dst, p->b_src + j * p->b_row_gap, p->b_bytes);
    }
    p->b_src += p->b_tile_step;
}

/* The fragments of one k step: TM_MAX (or 8) values of A's column, 8 of B's row, by LDS.128. */
static __device__ __forceinline__ void load_frags(float *frag_a, float *frag_b, const float *a_k,
                                                  const float *b_k, int sub_m)
{
#pragma unroll
    for (int s = 0; s < sub_m; ++s) { /* sub-tile s: rows 16*s + 0..3 of the warp tile */
        const float4 v = *(const float4 *)(a_k + s * LANES_M * SUB);
        frag_a[4 * s + 0] = v.x;
        frag_a[4 * s + 1] = v.y;
        frag_a[4 * s + 2] = v.z;
        frag_a[4 * s + 3] = v.w;
    }
#pragma unroll
    for (int q = 0; q < SUB_N; ++q) { /* sub-tile q: cols 32*q + 0..3 of the warp tile */
        const float4 v = *(const float4 *)(b_k + q * LANES_N * SUB);
        frag_b[4 * q + 0] = v.x;
        frag_b[4 * q + 1] = v.y;
        frag_b[4 * q + 2] = v.z;
        frag_b[4 * q + 3] = v.w;
    }
}

/* The shape of one kernel: constants at every call (the functions below are inlined into the
 * four small __global__ wrappers), so every loop is fully unrolled and every array lives in
 * registers.
 *   warps_n: warps along N (4: BN = 256, 2: BN = 128)
 *   sub_m:   4x4 sub-tiles per thread along M (4: 16 rows per thread, BM = 128; 2: 8, BM = 64)
 *   b16:     1 when B may be copied 16 bytes at a time (ldb % 4 == 0, N % 4 == 0, B 16-byte
 *            aligned)
 *   stages:  K tiles resident in shared memory (L_STAGES / S_STAGES)
 *   cluster: 1 in the split-K kernels whose slices add up through a cluster (item 12) */
struct shape {
    int warps_n, sub_m, stages, b16, cluster;
};

struct gemm_args {
    int M, N, K;
    float alpha;
    const float *A;
    int lda;
    const float *B;
    int ldb;
    float beta;
    float *C;
    int ldc;
};

/* Tile number -> (tile_m, tile_n), walked in groups of RASTER_GROUP tile rows: the blocks
 * running at the same time share a few A row panels and B column panels, which then stay in
 * L2. */
static __device__ __forceinline__ void tile_coords(int tile, int tiles_m, int tiles_n, int *tile_m,
                                                   int *tile_n)
{
    const int per_group = RASTER_GROUP * tiles_n;
    const int group = tile / per_group;
    const int in_group = tile - group * per_group;
    const int group_m0 = group * RASTER_GROUP;
    const int group_rows = min(tiles_m - group_m0, RASTER_GROUP);
    *tile_m = group_m0 + in_group % group_rows;
    *tile_n = in_group / group_rows;
}

/* The thread's patch of C inside a tile: rows row0 + 16*s + 0..3 (s < sub_m), cols
 * col0 + 32*q + 0..3. Lanes form a 4 x 8 grid (lane_m, lane_n) interleaved so that each
 * 8-lane quarter of a warp reads 4 distinct A float4s and 2 distinct B float4s per LDS.128
 * (each broadcast to at most 4 lanes). */
static __device__ __forceinline__ void thread_patch(struct shape sh, int *row0, int *col0)
{
    const int bm = WARPS_M * LANES_M * SUB * sh.sub_m;
    const int tid = threadIdx.x;
    const int lane = tid % 32, warp = tid / 32;
    const int warp_m = warp / sh.warps_n, warp_n = warp % sh.warps_n;
    const int lane_m = (lane / 2) % LANES_M;
    const int lane_n = (lane / 8) * 2 + lane % 2;
    *row0 = warp_m * (bm / WARPS_M) + lane_m * SUB;
    *col0 = warp_n * WARP_N + lane_n * SUB;
}

/* ---- Stream-K: sharing the last tiles' K iterations out evenly -----------------------------
 * With W resident blocks (one per SM) and T tiles, whole tiles leave the last round T % W
 * busy SMs and the others idle (at 4096^2: 512 tiles = 3.88 rounds of 132, 3% idle; at
 * 2560^2: 200 = 1.52 rounds, 24% idle). So, where the cost model says so, the launcher runs
 *   - tiles [0, dp_tiles), whole rounds but one, as whole tiles (the whole-tile kernel), and
 *   - the sk_tiles = W + T % W tiles after them with exactly W blocks (the stream-K kernel),
 *     each taking an equal share of their K tiles counted as one row: sk_tiles*kt K tiles
 *     cut into W ranges of kt .. 2*kt-1. A range holds the end of one tile, at most one whole
 *     tile, and the start of another: a tile is shared by at most two blocks.
 * A shared tile must still add its K terms in the order k = 0, 1, ..., K-1 (so the result is
 * the same float for float as an unshared tile, and as cuBLAS's). So the block holding its
 * start, w, computes that part FIRST, stores the raw accumulators in its slot of a workspace
 * and raises flags[w]; block w+1 computes the rest LAST: it waits for the flag (by then long
 * raised: w did it first, w+1 did a whole share of other work before), loads the accumulators
 * and carries on with the next k. Waiting on another block is safe only if both are resident
 * at once: the launcher uses a cooperative launch, which fails rather than start more blocks
 * than the GPU holds at once. */

/* Block w's raw accumulators to / from slot w of the workspace: thread tid's float4 number
 * v lives at v*threads + tid, so each warp moves 512 contiguous bytes per access. .cg: the
 * data goes through L2 only (the L1 of the reading SM may hold stale lines). */
static __device__ __forceinline__ void store_partial(struct shape sh, float4 *slot,
                                                     float acc[TM_MAX][TN])
{
    const int threads = 32 * WARPS_M * sh.warps_n, tm = sh.sub_m * SUB;
    float4 *mine = slot + threadIdx.x; /* + a constant per access: one base register */
#pragma unroll
    for (int i = 0; i < tm; ++i)
#pragma unroll
        for (int q = 0; q < SUB_N; ++q)
            __stcg(&mine[(i * SUB_N + q) * threads],
                   make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2],
                               acc[i][4 * q + 3]));
}

static __device__ __forceinline__ void load_partial(struct shape sh, const float4 *slot,
                                                    float acc[TM_MAX][TN])
{
    const int threads = 32 * WARPS_M * sh.warps_n, tm = sh.sub_m * SUB;
    const float4 *mine = slot + threadIdx.x;
#pragma unroll
    for (int i = 0; i < tm; ++i)
#pragma unroll
        for (int q = 0; q < SUB_N; ++q) {
            const float4 v = __ldcg(&mine[(i * SUB_N + q) * threads]);
            acc[i][4 * q] = v.x;
            acc[i][4 * q + 1] = v.y;
            acc[i][4 * q + 2] = v.z;
            acc[i][4 * q + 3] = v.w;
        }
}

/* Raise a flag once every thread's stores before the call are visible to the whole GPU
 * (barrier, then a release by one thread), and wait for one (an acquire by one thread, then
 * a barrier). The waiter clears the flag: the next launch finds the workspace clean. */
static __device__ __forceinline__ void raise_flag(unsigned *flag)
{
    __threadfence(); /* each thread: its own stores first */
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(1u) : "memory");
    }
}

static __device__ __forceinline__ void wait_flag(unsigned *flag)
{
    if (threadIdx.x == 0) {
        unsigned up = 0;
        for (;;) {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(up) : "l"(flag) : "memory");
            if (up)
                break;
            __nanosleep(256);
        }
        *(volatile unsigned *)flag = 0u;
    }
    __syncthreads();
}

/* C[row][col .. col+3] := alpha * v + beta * C (c_row: the row's start in the tile), as a
 * float4 where ldc, C and the columns allow, else float by float inside N. beta == 0 never
 * reads C. */
static __device__ __forceinline__ void store_c4(const struct gemm_args *g, float *c_row, int col,
                                                int cols_left, int c_vec, const float *v)
{
    const float alpha = g->alpha, beta = g->beta;
    if (c_vec && col + 3 < cols_left) {
        float4 *c4 = (float4 *)(c_row + col);
        float4 out = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
        if (beta != 0.0f) {
            const float4 old = *c4;
            out.x += beta * old.x;
            out.y += beta * old.y;
            out.z += beta * old.z;
            out.w += beta * old.w;
        }
        *c4 = out;
    } else {
#pragma unroll
        for (int c = 0; c < SUB; ++c) {
            if (col + c < cols_left) {
                float *cp = c_row + col + c;
                *cp = (beta == 0.0f) ? alpha * v[c] : alpha * v[c] + beta * *cp;
            }
        }
    }
}

/* ---- epilogue: C := alpha*acc + beta*C straight from registers ----
 * Per store instruction the 32 lanes write 4 rows x 8 lanes x 16 bytes: four full 128-byte
 * rows of C, so no staging through shared memory is needed for coalescing. float4 stores need
 * ldc % 4 == 0, a 16-byte aligned C, and 4 columns inside N; otherwise scalar stores.
 * beta == 0 never reads C. */
static __device__ __forceinline__ void store_c(struct shape sh, const struct gemm_args *g,
                                               int tile_m, int tile_n, int row0, int col0,
                                               float acc[TM_MAX][TN])
{
    const int bm = WARPS_M * LANES_M * SUB * sh.sub_m;
    const int bn = sh.warps_n * WARP_N;
    const int rows_left = g->M - tile_m * bm, cols_left = g->N - tile_n * bn;
    const int c_vec = ((g->ldc & 3) == 0) && ((((uintptr_t)g->C) & 15u) == 0);
#pragma unroll
    for (int s = 0; s < sh.sub_m; ++s) {
#pragma unroll
        for (int r = 0; r < SUB; ++r) {
            const int row = row0 + s * LANES_M * SUB + r;
            if (row >= rows_left)
                continue;
            float *c_row = g->C + (size_t)(tile_m * bm + row) * g->ldc + tile_n * bn;
#pragma unroll
            for (int q = 0; q < SUB_N; ++q)
                store_c4(g, c_row, col0 + q * LANES_N * SUB, cols_left, c_vec,
                         &acc[s * SUB + r][q * SUB]);
        }
    }
}

/* ---- Split-K: a few tiles, each cut along K over several blocks ----------------------------
 * Below ~1100^2 even the 64x128 kernel has fewer tiles than the GPU has SMs (512^2: 32 tiles
 * for 132 SMs), and a lone block per SM, one warp per scheduler, spends each K tile mostly
 * waiting. So the launcher gives each tile `slices` blocks, block (s, t) taking the s-th
 * stretch of t's K tiles: more blocks, each with a shorter K loop. A block stores its raw
 * accumulators in its own slot and counts itself done (atomicAdd on the tile's counter);
 * whichever block of the tile comes last adds the slots up in slice order, 0 first, and
 * writes C := alpha*sum + beta*C. The order is fixed, so the result does not depend on which
 * block finishes last (the same floats on every run), but it is not K in order: the sum
 * rounds like any split-K GEMM, within the check's bound, not bit for bit like cuBLAS. No
 * block ever waits for another, so no cooperative launch is needed.
 * The split tail (item 10) is the same scheme on the 128x256 tile, for the tiles of a last
 * round that would leave more than half of the SMs idle: the launch covers only those tiles
 * (C tile first_tile + t), after the whole rounds have gone to the whole-tile kernel. */

/* acc += the partial sums in slot (same layout as store_partial). */
static __device__ __forceinline__ void add_partial(struct shape sh, const float4 *slot,
                                                   float acc[TM_MAX][TN])
{
    const int threads = 32 * WARPS_M * sh.warps_n, tm = sh.sub_m * SUB;
    const float4 *mine = slot + threadIdx.x;
#pragma unroll
    for (int i = 0; i < tm; ++i)
#pragma unroll
        for (int q = 0; q < SUB_N; ++q) {
            const float4 v = __ldcg(&mine[(i * SUB_N + q) * threads]);
            acc[i][4 * q] += v.x;
            acc[i][4 * q + 1] += v.y;
            acc[i][4 * q + 2] += v.z;
            acc[i][4 * q + 3] += v.w;
        }
}

/* Slice s's float4 number `at` of a tile's partial sums: in global memory, slot s of `slots`
 * (slot_f4 float4s each; .cg, the L2 copy, since other SMs wrote it), or, in_cluster, at
 * offset `at` of the shared memory of the cluster's block s (item 12; `slots` is then this
 * block's own shared-memory base). in_cluster is a constant at every call. */
static __device__ __forceinline__ float4 slice_float4(const float4 *slots, size_t slot_f4, int s,
                                                      size_t at, int in_cluster)
{
#if __CUDA_ARCH__ >= 900
    if (in_cluster)
        return ((const float4 *)__cluster_map_shared_rank(slots, (unsigned)s))[at];
#endif
    (void)in_cluster;
    return __ldcg(&slots[s * slot_f4 + at]);
}

/* C := alpha * (slice 0 + slice 1 + ...) + beta * C for float4s v0 .. v1-1 of each thread's
 * patch (v = i * SUB_N + q: acc[i][4q .. 4q+3]), float4 by float4 straight from the slices,
 * in slice order: the same floats as the register sum of split_finish(), on every run.
 * The last slice of a large tile (the split tail) takes the whole patch this way: a loop,
 * not 128 accumulators. With the sum held in registers the 128x256 split kernel took 254
 * registers and ptxas scheduled its K loop worse (Nsight Compute, H100: FMA pipe 66% busy
 * against 82% in the whole-tile kernel); this way 231 registers and 69% (at 3072^2). The
 * 64x128 split kernel keeps the register sum: with this loop its own K loop grew from 591 to
 * 675 instructions and 512^2 ran 25% slower. A cluster slice (item 12) takes its 1/slices
 * share of the patch from the cluster's shared memory. */
static __device__ __forceinline__ void sum_slots(struct shape sh, const struct gemm_args *g,
                                                 const float4 *slots, int slices, int in_cluster,
                                                 int v0, int v1, int tile_m, int tile_n, int row0,
                                                 int col0)
{
    const int threads = 32 * WARPS_M * sh.warps_n, tm = sh.sub_m * SUB;
    const int bm = WARPS_M * LANES_M * SUB * sh.sub_m;
    const int bn = sh.warps_n * WARP_N;
    const size_t slot_f4 = (size_t)(tm * TN / 4) * threads;
    const int rows_left = g->M - tile_m * bm, cols_left = g->N - tile_n * bn;
    const int c_vec = ((g->ldc & 3) == 0) && ((((uintptr_t)g->C) & 15u) == 0);
#pragma unroll 4
    for (int v = v0; v < v1; ++v) {
        const int i = v / SUB_N, q = v % SUB_N;
        const int row = row0 + (i / SUB) * LANES_M * SUB + i % SUB;
        const int col = col0 + q * LANES_N * SUB;
        if (row >= rows_left)
            continue;
        const size_t at = (size_t)v * threads + threadIdx.x;
        float4 sum = slice_float4(slots, slot_f4, 0, at, in_cluster);
        for (int s = 1; s < slices; ++s) { /* slice order: the same floats every run */
            const float4 p = slice_float4(slots, slot_f4, s, at, in_cluster);
            sum.x += p.x;
            sum.y += p.y;
            sum.z += p.z;
            sum.w += p.w;
        }
        const float out[4] = {sum.x, sum.y, sum.z, sum.w};
        store_c4(g, g->C + (size_t)(tile_m * bm + row) * g->ldc + tile_n * bn, col, cols_left,
                 c_vec, out);
    }
}

/* The end of one slice: store it, count it, and if it was the tile's last, sum and write C. */
static __device__ __forceinline__ void split_finish(struct shape sh, const struct gemm_args *g,
                                                    const struct split_k *sp, int tile, int tile_m,
                                                    int tile_n, int row0, int col0,
                                                    float acc[TM_MAX][TN])
{
    __shared__ int is_last;
    const size_t slot_f4 = (size_t)(sh.sub_m * SUB * TN / 4) * (32 * WARPS_M * sh.warps_n);
    const int t = tile - sp->first_tile; /* the tile's number in this launch */
    const float4 *slots = sp->partials + (size_t)t * sp->slices * slot_f4;
    store_partial(sh, sp->partials + ((size_t)t * sp->slices + sp->slice) * slot_f4, acc);
    __threadfence(); /* each thread's stores reach L2 (visible GPU-wide) before the count */
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned done = atomicAdd(&sp->counts[t], 1u);
        is_last = (done == (unsigned)sp->slices - 1u);
        if (is_last)
            sp->counts[t] = 0u; /* every slice has counted: clean for the next launch */
    }
    __syncthreads();
    if (!is_last)
        return;
    __threadfence(); /* the other slices' stores, counted before ours, are read after this */
    if (sh.sub_m == L_SUB_M) { /* the split tail: see sum_slots() */
        sum_slots(sh, g, slots, sp->slices, 0, 0, sh.sub_m * SUB * SUB_N, tile_m, tile_n, row0,
                  col0);
    } else {
        load_partial(sh, slots, acc);
        for (int s = 1; s < sp->slices; ++s)
            add_partial(sh, slots + (size_t)s * slot_f4, acc);
        store_c(sh, g, tile_m, tile_n, row0, col0, acc);
    }
}

/* ---- Split-K through a cluster (sm_90+; item 12) -------------------------------------------
 * On sm_90 the slices of a tile are one thread block cluster: blocks 0..slices-1 of the
 * cluster (its ranks) are slices 0..slices-1 of one tile, and the GPU runs them at the same
 * time on SMs of one GPC, where each can read the others' shared memory (distributed shared
 * memory). So a slice parks its partial sums in its own shared memory; one cluster barrier
 * (its arrive releases those stores, its wait acquires everybody's) replaces the global
 * slots, the fences and the atomic count; and instead of the last block adding every slot
 * alone, each slice adds up 1/slices of the tile, reading the slices in order 0, 1, ... (the
 * same floats as the global scheme), and writes that part of C. A second cluster barrier
 * keeps every block's shared memory alive until the others have finished reading it. */
static __device__ __forceinline__ void cluster_finish(struct shape sh, const struct gemm_args *g,
                                                      const struct split_k *sp, int tile_m,
                                                      int tile_n, int row0, int col0,
                                                      float acc[TM_MAX][TN])
{
#if __CUDA_ARCH__ >= 900
    const int threads = 32 * WARPS_M * sh.warps_n, tm = sh.sub_m * SUB;
    extern __shared__ float4 smem_f4[];

    __syncthreads(); /* every warp has read its last fragments: the stages may be overwritten */
    float4 *mine = smem_f4 + threadIdx.x; /* the slot layout of store_partial() */
#pragma unroll
    for (int i = 0; i < tm; ++i)
#pragma unroll
        for (int q = 0; q < SUB_N; ++q)
            mine[(i * SUB_N + q) * threads] =
                make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]);
    __cluster_barrier_arrive(); /* release: this slice's partial sums ... */
    __cluster_barrier_wait();   /* acquire: ... and every other slice's, visible to all */

    /* This slice's share: float4s [slice, slice + 1) * tm * SUB_N / slices of every thread's. */
    const int per_thread = tm * SUB_N;
    sum_slots(sh, g, smem_f4, sp->slices, 1, per_thread * sp->slice / sp->slices,
              per_thread * (sp->slice + 1) / sp->slices, tile_m, tile_n, row0, col0);
    __cluster_barrier_arrive(); /* done reading the others' shared memory ... */
    __cluster_barrier_wait();   /* ... and they are done with ours: now a block may exit */
#else
    (void)sh, (void)g, (void)sp, (void)tile_m, (void)tile_n, (void)row0, (void)col0, (void)acc;
    __trap(); /* no clusters below sm_90; the launcher never gets here */
#endif
}

/*
 * The product of K tiles [j0, j1) of C tile number `tile` (the rows of A and the columns of
 * B it needs), accumulated in registers, then written out: C := alpha*acc + beta*C, or
 * (out_slot != NULL: stream-K) the raw accumulators to out_slot, raising out_flag, or
 * (split != NULL: split-K) its slice of the tile, which the last slice adds up (split_finish).
 * K tile 0 is k = k_first .. k_first+7, K tile j >= 1 is k = k_first + 8j .. +7, with
 * k_first = K - 8*kt in (-8, 0] (see below). Shared memory must be free: the caller puts a
 * barrier between two calls. The sum starts from zero, or (init_slot != NULL: stream-K) from
 * the partial sum in init_slot, once init_flag is raised; it is read after the first copies
 * are on their way, so that the wait overlaps them and the 128 accumulators are not live (in
 * registers) during the set-up.
 */
static __device__ __forceinline__ void tile_product(struct shape sh, const struct gemm_args *g,
                                                    int tile, int j0, int j1,
                                                    const float4 *init_slot, unsigned *init_flag,
                                                    float4 *out_slot, unsigned *out_flag,
                                                    const struct split_k *split)
{
    const int threads = 32 * WARPS_M * sh.warps_n;
    const int bm = WARPS_M * LANES_M * SUB * sh.sub_m;
    const int bn = sh.warps_n * WARP_N;
    const int a_ld = bm + A_PAD;
    const int stages = sh.stages, b16 = sh.b16;
    const int tm = sh.sub_m * SUB;

    extern __shared__ float4 smem_f4[]; /* float4: the stages start 16-byte aligned */
    float *smem = (float *)smem_f4;
    const unsigned smem_addr = (unsigned)__cvta_generic_to_shared(smem);

    int tile_m, tile_n;
    tile_coords(tile, (g->M - 1) / bm + 1, (g->N - 1) / bn + 1, &tile_m, &tile_n);
    const int rows_left = g->M - tile_m * bm; /* >= 1: rows of C in this tile (if < bm) */
    const int cols_left = g->N - tile_n * bn; /* >= 1 */
    const int tid = threadIdx.x;

    /* ---- copy plan: A (transposed on the way in) by 4-byte copies ----
     * A_WHOLE_SECTORS: thread tid copies float kk = tid % 8 of 4 rows, tid/8 + 0, 32, 64, 96
     * (16 apart in the small kernel). One copy instruction of a warp then reads 4 rows x 8
     * consecutive floats = 4 whole 32-byte sectors, and shared memory takes it in one
     * wavefront. (The first layout, kk = 2*(tid % 4) and kk+1 of 2 rows, read 8 rows x every
     * other float per instruction: 8 sectors, and Nsight Compute counted 8 wavefronts per
     * copy instead of 1, 28 extra wavefronts per warp and tile beside the 96 of the LDS.128.)
     * In shared memory A[row][kk] goes to a_tile[kk][row]; rows are bm+4 floats long, so lane
     * (row r, slot kk) hits bank (4*kk + r) % 32 = 4*(lane % 8) + lane / 8 (+ const): 32 lanes,
     * 32 banks. A 4-byte copy is legal for any lda and any alignment, so A needs no slow path. */
    struct copy_plan p;
    const int a_row = tid / (BK / A_PAIR), a_kk = A_PAIR * (tid % (BK / A_PAIR));
    const float *a_row_ptr[A_ROWS]; /* A[row][0] of each of this thread's rows */
#pragma unroll
    for (int i = 0; i < A_ROWS; ++i) {
        const int row = a_row + i * A_ROW_STEP(threads);
        const int inside = row < rows_left;
        /* a row below M reads nothing; its pointer still stays inside A (row 0 of the tile) */
        a_row_ptr[i] = g->A + (size_t)(tile_m * bm + (inside ? row : 0)) * g->lda;
        p.a_bytes[i] = inside ? 4 : 0;
    }
    p.a_dst = smem_addr + 4u * (unsigned)(a_kk * a_ld + a_row);

    /* ---- copy plan: B ----
     * b16: a warp copies 32 x 16 = 512 consecutive bytes of one row. N % 4 == 0 (checked at
     *      launch), so a 4-float segment is wholly inside N or wholly outside (then it is
     *      zero-filled and nothing is read).
     * else: 4-byte copies, a warp takes 32 consecutive floats of one row. */
    int b_col, b_kr;
    if (b16) {
        b_col = 4 * (tid % (bn / 4));
        b_kr = tid / (bn / 4);
        p.b_bytes = b_col < cols_left; /* 1: copy, 0: zero-fill */
    } else {
        b_col = tid % bn;
        b_kr = tid / bn; /* 0: bn == threads in both kernels */
        p.b_bytes = b_col < cols_left ? 4 : 0;
    }
    /* B[0][col]; a segment wholly right of N reads nothing: its pointer stays at the tile's
     * col 0 */
    const float *b_col_ptr = g->B + (size_t)tile_n * bn + (p.b_bytes ? b_col : 0);
    p.b_dst = smem_addr + 4u * (unsigned)(BK * a_ld + b_kr * bn + b_col);
    p.b_row_gap = (long long)B_ROW_STEP(b16, bn, threads) * g->ldb;
    p.b_tile_step = (long long)BK * g->ldb;

    int row0, col0;
    thread_patch(sh, &row0, &col0);
    const float *a_frag = smem + row0;             /* + stage + k*a_ld + 16*s */
    const float *b_frag = smem + BK * a_ld + col0; /* + stage + k*bn + 32*q */

    float acc[TM_MAX][TN];
    if (!init_slot) {
#pragma unroll
        for (int i = 0; i < tm; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                acc[i][j] = 0.0f;
    }
    float frag_a[2][TM_MAX], frag_b[2][TN]; /* [k & 1]: one in use, one being loaded */

    /* K tiles: the FIRST one is the partial one. It covers k = k_first .. k_first+7 with
     * k_first = K - 8*kt in (-8, 0]; slots k < 0 are zero-filled. So the accumulation order
     * is still k = 0, 1, ..., K-1 (the zero slots come first and add exact zeros to a zero
     * accumulator), and every later tile is full: the main loop has no K test. */
    const int K = g->K;
    const int k_first = (K % BK == 0) ? 0 : K % BK - BK;
    const unsigned stage_bytes = 4u * (unsigned)STAGE_FLOATS(bm, bn);
    const unsigned last_stage = (unsigned)(stages - 1) * stage_bytes;

    /* ---- prologue: K tiles j0 .. j0+stages-2 in flight, one commit group per tile ---- */
    if (j0 == 0) {
        /* Tile 0 by hand: a slot with k < 0 copies 0 bytes from a pointer clamped to k = 0. */
        const int k = k_first + a_kk;
#pragma unroll
        for (int i = 0; i < A_ROWS; ++i) {
#pragma unroll
            for (int e = 0; e < A_PAIR; ++e)
                cp_async_4(p.a_dst + 4u * (unsigned)(i * A_ROW_STEP(threads) + e * a_ld),
                           a_row_ptr[i] + max(k + e, 0), k + e >= 0 ? p.a_bytes[i] : 0);
            p.a_src[i] = a_row_ptr[i] + (k + BK); /* tile 1: k + 8 >= 1 */
        }
#pragma unroll
        for (int j = 0; j < B_LOADS(b16, bn, threads); ++j) {
            const int kb = k_first + b_kr + j * B_ROW_STEP(b16, bn, threads);
            const unsigned dst = p.b_dst + 4u * (unsigned)(j * B_ROW_STEP(b16, bn, threads) * bn);
            const float *src = b_col_ptr + (long long)max(kb, 0) * g->ldb;
            if (b16)
                cp_async_16(dst, src, kb >= 0 ? p.b_bytes : 0); /* k < 0: zero-fill */
            else
                cp_async_4(dst, src, kb >= 0 ? p.b_bytes : 0);
        }
        p.b_src = b_col_ptr + (long long)(k_first + BK + b_kr) * g->ldb; /* tile 1 */
    } else {
        /* A later start (stream-K): tile j0 is a full one, k = k_first + 8*j0 >= 1 on. */
        const long long k0 = k_first + (long long)BK * j0;
#pragma unroll
        for (int i = 0; i < A_ROWS; ++i)
            p.a_src[i] = a_row_ptr[i] + (k0 + a_kk);
        p.b_src = b_col_ptr + (k0 + b_kr) * g->ldb;
        copy_tile(&p, 0u, a_ld, bn, threads, b16);
    }
    cp_async_commit();
#pragma unroll
    for (int s = 1; s < stages - 1; ++s) {
        if (j0 + s < j1)
            copy_tile(&p, (unsigned)s * stage_bytes, a_ld, bn, threads, b16);
        cp_async_commit(); /* an empty group when the range is short: the counting stays uniform */
    }
    /* Tile j0+i is group i. Committed: stages-1; allowing stages-2 in flight means group 0 is
     * complete for this thread, and the barrier makes every thread's copies visible. */
    cp_async_wait(stages - 2);
    __syncthreads();
    load_frags(frag_a[0], frag_b[0], a_frag, b_frag, sh.sub_m);
    if (init_slot) {
        wait_flag(init_flag);
        load_partial(sh, init_slot, acc);
    }

    unsigned read_stage = 0;           /* byte offset of the stage holding tile t */
    unsigned write_stage = last_stage; /* byte offset of the stage receiving tile t+stages-1 */

    for (int t = j0; t < j1; ++t) {
        /* Refill the stage that tile t-1 used. Safe: every thread finished reading it before
         * the barrier at the end of iteration t-1 (its last fragments, k = 7, were loaded at
         * step k = 6, before that barrier). */
        if (t + stages - 1 < j1)
            copy_tile(&p, write_stage, a_ld, bn, threads, b16);
        cp_async_commit();
        write_stage = (write_stage == last_stage) ? 0u : write_stage + stage_bytes;

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int cur = k % 2, nxt = cur ^ 1;
            int next_k = k + 1;
            if (k == BK - 1) {
                /* Tile t+1 must be in shared memory. Committed so far: stages-1 + (t-j0+1)
                 * groups; at most stages-2 in flight => groups up to tile t+1 are complete.
                 * With stages = 2 this waits for the copy issued at the top of this
                 * iteration. */
                cp_async_wait(stages - 2);
                __syncthreads();
                read_stage = (read_stage == last_stage) ? 0u : read_stage + stage_bytes;
                next_k = 0;
            }
            /* Fragments for the next k step while this one's FMAs run (after the last
             * tile this reads a stale stage: harmless, inside shared memory, never used). */
            const float *a_k = (const float *)((const char *)a_frag + read_stage) + next_k * a_ld;
            const float *b_k = (const float *)((const char *)b_frag + read_stage) + next_k * bn;
            load_frags(frag_a[nxt], frag_b[nxt], a_k, b_k, sh.sub_m);
            /* Column by column, the rows snaking down and up (CUTLASS's "serpentine" order):
             * consecutive FFMAs share an operand, which ptxas marks .reuse so that it is
             * read from the operand cache instead of the register file (measured on the H200:
             * dispatch stalls sampled on the FFMAs 0.22 -> 0.15 per instruction, +6-7% over
             * the row-by-row order). In the large kernel the columns and the rows come in
             * the measured order FFMA_ORDER_16x8 (item 9 of the header): any order
             * adds the same products to each accumulator, k in order, but ptxas schedules
             * and allocates the loop from the order it is given. */
            if (FFMA_TUNED && tm == TM_MAX) {
#define X(i, j) acc[i][j] = fmaf(frag_a[cur][i], frag_b[cur][j], acc[i][j]);
                FFMA_ORDER_16x8
#undef X
            } else
#pragma unroll
            for (int j = 0; j < TN; ++j)
#pragma unroll
                for (int r = 0; r < tm; ++r) {
                    const int i = (j % 2) ? tm - 1 - r : r;
                    acc[i][j] = fmaf(frag_a[cur][i], frag_b[cur][j], acc[i][j]);
                }
        }
    }
    cp_async_wait_all(); /* only empty groups can be left; leave nothing in flight anyway */

    if (out_slot) {
        store_partial(sh, out_slot, acc);
        raise_flag(out_flag);
    } else if (split && sh.cluster) {
        cluster_finish(sh, g, split, tile_m, tile_n, row0, col0, acc);
    } else if (split) {
        split_finish(sh, g, split, tile, tile_m, tile_n, row0, col0, acc);
    } else {
        store_c(sh, g, tile_m, tile_n, row0, col0, acc);
    }
}

/* Whole tiles: block b computes C tile first_tile + b (first_tile: the uneven tail, item 11,
 * runs the same kernel on the last round's tiles only). */
static __device__ __forceinline__ void whole_tile_body(struct shape sh, const struct gemm_args *g,
                                                       int first_tile)
{
    tile_product(sh, g, first_tile + (int)blockIdx.x, 0, (g->K - 1) / BK + 1, NULL, NULL, NULL,
                 NULL, NULL);
}

/* Split-K: block b is slice b / tiles of tile b % tiles. Blocks with neighbouring numbers
 * (started together) are the same slice of neighbouring tiles: they read the same K stretch
 * of A's row panels and B's column panels, which then stay in L2. And all slice-0 blocks
 * come first: with a split tail (uneven slices) the long ones start at once, and the short
 * ones follow each other on the remaining SMs. */
static __device__ __forceinline__ void split_body(struct shape sh, const struct gemm_args *g,
                                                  struct split_k sp)
{
    const int kt = (g->K - 1) / BK + 1;
    const int tiles = gridDim.x / sp.slices;
    const int tile = blockIdx.x % tiles;
    sp.slice = blockIdx.x / tiles;
    const int j0 = (int)((long long)kt * sp.slice / sp.slices);
    const int j1 = (int)((long long)kt * (sp.slice + 1) / sp.slices); /* > j0: slices <= kt */
    tile_product(sh, g, sp.first_tile + tile, j0, j1, NULL, NULL, NULL, NULL, &sp);
}

/* Split-K through a cluster (item 12): the cluster of blocks b - rank .. b - rank + slices - 1
 * is tile b / slices, and its rank is the block's slice. */
static __device__ __forceinline__ void
cluster_split_body(struct shape sh, const struct gemm_args *g, struct split_k sp)
{
#if __CUDA_ARCH__ >= 900
    const int kt = (g->K - 1) / BK + 1;
    sp.slice = (int)__clusterRelativeBlockRank();
    const int tile = (int)blockIdx.x / sp.slices;
    const int j0 = (int)((long long)kt * sp.slice / sp.slices);
    const int j1 = (int)((long long)kt * (sp.slice + 1) / sp.slices); /* > j0: slices <= kt */
    tile_product(sh, g, sp.first_tile + tile, j0, j1, NULL, NULL, NULL, NULL, &sp);
#else
    (void)sh, (void)g, (void)sp;
    __trap();
#endif
}

/* One piece of a stream-K share: K tiles [j0, j1) of C tile `tile`. It continues block w-1's
 * partial sum when it does not start at K tile 0, and leaves its own for block w+1 when it
 * does not end at the last. */
static __device__ __forceinline__ void stream_k_piece(struct shape sh, const struct gemm_args *g,
                                                      const struct stream_k *sk, int tile, int j0,
                                                      int j1, int kt)
{
    const int w = blockIdx.x;
    /* float4s per workspace slot: the block's accumulators */
    const size_t slot_f4 = (size_t)(sh.sub_m * SUB * TN / 4) * (32 * WARPS_M * sh.warps_n);
    tile_product(
        sh, g, sk->dp_tiles + tile, j0, j1,
        j0 > 0 ? sk->partials + (size_t)(w - 1) * slot_f4 : NULL, j0 > 0 ? &sk->flags[w - 1] : NULL,
        j1 < kt ? sk->partials + (size_t)w * slot_f4 : NULL, j1 < kt ? &sk->flags[w] : NULL, NULL);
}

/* Stream-K: block w's share of the K tiles of tiles dp_tiles .. dp_tiles+sk_tiles-1, counted
 * as one row, is [begin, end), kt .. 2*kt-1 K tiles long (sk_tiles >= blocks). It touches
 * tiles tf .. tl (numbered from dp_tiles), at most three: the end of tf, perhaps tf+1 whole,
 * the start of tl. They run as three straight pieces of code, not a loop: with a loop around
 * the K loop, ptxas allocated its registers differently and the kernel ran 2-5% slower on
 * the H200 (dispatch stalls 0.56 per instruction instead of 0.26). */
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

    /* First the piece whose partial sum block w+1 will want (the start of tl), ... */
    stream_k_piece(sh, g, sk, tl, tl == tf ? tf_j0 : 0, tl_j1, kt);
    /* ... then a whole tile between, if any, ... */
    if (tl - tf == 2) {
        __syncthreads(); /* everyone is done with shared memory before new copies */
        stream_k_piece(sh, g, sk, tf + 1, 0, kt, kt);
    }
    /* ... and last the piece that continues block w-1's (by now long finished) partial sum. */
    if (tl > tf) {
        __syncthreads();
        stream_k_piece(sh, g, sk, tf, tf_j0, kt, kt);
    }
}

/* The uneven tail's last step (item 11): C tile first_tile + blockIdx.x gets the short piece
 * that the large kernel wrote to `w` (rows from row0 on, leading dimension ldw, a multiple of
 * 4) added to what the long piece left in C. Block (b, y) takes ADD_ROWS rows of the tile,
 * each thread 4 neighbouring columns of one row: every thread has its loads in flight at once
 * (a thread that walked a whole column, one row after another, left the add latency-bound:
 * run after the whole tiles it cost ~65 us against ~15 us for this one).
 * vec: C's rows can take float4 stores (ldc % 4 == 0, C 16-byte aligned). */
static __device__ __forceinline__ void add_short_pieces_body(int M, int N, float *C, int ldc,
                                                             const float *w, int ldw, int row0,
                                                             int first_tile, int vec)
{
    int tile_m, tile_n;
    tile_coords(first_tile + (int)blockIdx.x, (M - 1) / L_BM + 1, (N - 1) / L_BN + 1, &tile_m,
                &tile_n);
    const int row = tile_m * L_BM + (int)blockIdx.y * ADD_ROWS + (int)threadIdx.x / (L_BN / 4);
    const int col = tile_n * L_BN + 4 * ((int)threadIdx.x % (L_BN / 4));
    if (row >= M || col >= N)
        return;
    float *c = C + (size_t)row * ldc + col;
    const float *src = w + (size_t)(row - row0) * ldw + col;
    if (vec && col + 3 < N) {
        const float4 a = *(const float4 *)src;
        float4 b = *(float4 *)c;
        b.x += a.x;
        b.y += a.y;
        b.z += a.z;
        b.w += a.w;
        *(float4 *)c = b;
    } else {
        for (int j = 0; j < 4 && col + j < N; ++j)
            c[j] += src[j];
    }
}

#endif /* sm_80+ device code */

/* ---- The kernels: two tile shapes x two ways of copying B, and stream-K for the large one --
 * Below sm_80 there is no cp.async: those bodies trap, and the launcher never gets there
 * (it returns cudaErrorInvalidDevice first). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define BODY(warps_n, sub_m, stages, b16)                                                          \
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};                     \
    const struct shape sh = {warps_n, sub_m, stages, b16, 0};                                      \
    whole_tile_body(sh, &g, first_tile)
#define BODY_SK(warps_n, sub_m, stages, b16)                                                       \
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};                     \
    const struct shape sh = {warps_n, sub_m, stages, b16, 0};                                      \
    stream_k_body(sh, &g, &sk)
#define BODY_SPLIT(warps_n, sub_m, stages, b16)                                                    \
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};                     \
    const struct shape sh = {warps_n, sub_m, stages, b16, 0};                                      \
    split_body(sh, &g, sp)
#define BODY_CLUSTER(warps_n, sub_m, stages, b16)                                                  \
    const struct gemm_args g = {M, N, K, alpha, A, lda, B, ldb, beta, C, ldc};                     \
    const struct shape sh = {warps_n, sub_m, stages, b16, 1};                                      \
    cluster_split_body(sh, &g, sp)
#elif defined(__CUDA_ARCH__)
#define BODY(warps_n, sub_m, stages, b16)       __trap()
#define BODY_SK(warps_n, sub_m, stages, b16)    __trap()
#define BODY_SPLIT(warps_n, sub_m, stages, b16) __trap()
#define BODY_CLUSTER(warps_n, sub_m, stages, b16) __trap()
#else
#define BODY(warps_n, sub_m, stages, b16)
#define BODY_SK(warps_n, sub_m, stages, b16)
#define BODY_SPLIT(warps_n, sub_m, stages, b16)
#define BODY_CLUSTER(warps_n, sub_m, stages, b16)
#endif

/* 1 block of 256 threads per SM: 128 accumulators + 48 fragment floats -> ~216 registers. */
__global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_cp_async_128x256(int M, int N, int K, float alpha, const float *A, int lda,
                           const float *B, int ldb, float beta, float *C, int ldc, int first_tile)
{
    BODY(L_WARPS_N, L_SUB_M, L_STAGES, 1);
}

__global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_cp_async_128x256_b4(int M, int N, int K, float alpha, const float *A, int lda,
                              const float *B, int ldb, float beta, float *C, int ldc,
                              int first_tile)
{
    BODY(L_WARPS_N, L_SUB_M, L_STAGES, 0);
}

/* The same tile shape, one stream-K share per block (launched with exactly as many blocks
 * as the GPU holds at once). */
__global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_cp_async_128x256_sk(int M, int N, int K, float alpha, const float *A, int lda,
                              const float *B, int ldb, float beta, float *C, int ldc,
                              struct stream_k sk)
{
    BODY_SK(L_WARPS_N, L_SUB_M, L_STAGES, 1);
}

__global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_cp_async_128x256_sk_b4(int M, int N, int K, float alpha, const float *A, int lda,
                                 const float *B, int ldb, float beta, float *C, int ldc,
                                 struct stream_k sk)
{
    BODY_SK(L_WARPS_N, L_SUB_M, L_STAGES, 0);
}

/* The same tile shape, the last round's tiles cut along K (split tail, item 10). */
__global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_cp_async_128x256_split(int M, int N, int K, float alpha, const float *A, int lda,
                                 const float *B, int ldb, float beta, float *C, int ldc,
                                 struct split_k sp)
{
    BODY_SPLIT(L_WARPS_N, L_SUB_M, L_STAGES, 1);
}

__global__ void __launch_bounds__(L_THREADS, 1)
    sgemm_cp_async_128x256_split_b4(int M, int N, int K, float alpha, const float *A, int lda,
                                    const float *B, int ldb, float beta, float *C, int ldc,
                                    struct split_k sp)
{
    BODY_SPLIT(L_WARPS_N, L_SUB_M, L_STAGES, 0);
}

/* C += the short pieces of the uneven tail (item 11); a block per ADD_ROWS rows of a tile. */
__global__ void __launch_bounds__(ADD_THREADS)
    sgemm_cp_async_add_short_pieces(int M, int N, float *C, int ldc, const float *w, int ldw,
                                    int row0, int first_tile, int vec)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    add_short_pieces_body(M, N, C, ldc, w, ldw, row0, first_tile, vec);
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

/* Up to 4 blocks of 128 threads per SM (<= 128 registers each), so mid sizes fill the SM. */
__global__ void __launch_bounds__(S_THREADS, 4)
    sgemm_cp_async_64x128(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, int first_tile)
{
    BODY(S_WARPS_N, S_SUB_M, S_STAGES, 1);
}

__global__ void __launch_bounds__(S_THREADS, 4)
    sgemm_cp_async_64x128_b4(int M, int N, int K, float alpha, const float *A, int lda,
                             const float *B, int ldb, float beta, float *C, int ldc, int first_tile)
{
    BODY(S_WARPS_N, S_SUB_M, S_STAGES, 0);
}

/* The same tile shape, `sp.slices` blocks per tile (split-K), for the smallest C. */
__global__ void __launch_bounds__(S_THREADS, 4)
    sgemm_cp_async_64x128_split(int M, int N, int K, float alpha, const float *A, int lda,
                                const float *B, int ldb, float beta, float *C, int ldc,
                                struct split_k sp)
{
    BODY_SPLIT(S_WARPS_N, S_SUB_M, S_STAGES, 1);
}

__global__ void __launch_bounds__(S_THREADS, 4)
    sgemm_cp_async_64x128_split_b4(int M, int N, int K, float alpha, const float *A, int lda,
                                   const float *B, int ldb, float beta, float *C, int ldc,
                                   struct split_k sp)
{
    BODY_SPLIT(S_WARPS_N, S_SUB_M, S_STAGES, 0);
}

/* The same tile shape and split, the slices of a tile one cluster (item 12; sm_90+, launched
 * with a cluster of `sp.slices` blocks). */
__global__ void __launch_bounds__(S_THREADS, CLUSTER_MIN_BLOCKS)
    sgemm_cp_async_64x128_cluster(int M, int N, int K, float alpha, const float *A, int lda,
                                  const float *B, int ldb, float beta, float *C, int ldc,
                                  struct split_k sp)
{
    BODY_CLUSTER(S_WARPS_N, S_SUB_M, S_STAGES, 1);
}

__global__ void __launch_bounds__(S_THREADS, CLUSTER_MIN_BLOCKS)
    sgemm_cp_async_64x128_cluster_b4(int M, int N, int K, float alpha, const float *A, int lda,
                                     const float *B, int ldb, float beta, float *C, int ldc,
                                     struct split_k sp)
{
    BODY_CLUSTER(S_WARPS_N, S_SUB_M, S_STAGES, 0);
}

typedef void (*gemm_kernel)(int, int, int, float, const float *, int, const float *, int, float,
                            float *, int, int);
typedef void (*stream_k_kernel)(int, int, int, float, const float *, int, const float *, int, float,
                                float *, int, struct stream_k);
typedef void (*split_kernel)(int, int, int, float, const float *, int, const float *, int, float,
                             float *, int, struct split_k);

/* a >= 1; (a + b - 1) / b could overflow for a near INT_MAX */
static long long ceil_div(int a, int b)
{
    return (a - 1) / b + 1;
}

/*
 * Dispatch: which way finishes first on this GPU? Costs are in hundredths of the time one
 * 128x256 tile takes (on an SM that runs one at a time):
 *   whole 128x256 tiles: ceil(tiles / SMs) rounds, 100 each;
 *   64x128 tiles: ceil(tiles / SMs) rounds of up to 4 blocks per SM; a 64x128 tile is a
 *     quarter of the work, done at 100/LARGE_TILE_GAIN of the speed: LARGE_TILE_GAIN / 4 each;
 *   stream-K (resident = SMs x blocks per SM, more tiles than that and not a multiple):
 *     the whole rounds but one at 100, the rest shared out evenly at STREAM_K_COST (measured:
 *     a block working through its share of pieces runs a few % slower than whole tiles);
 *   split tail (at least one whole round, the last one at most half busy): the whole rounds
 *     at 100, then one round of pieces, 100/s each (s slices, tail_split()), plus
 *     TAIL_SPLIT_COST (measured: a round of pieces ends ~7% of a round later than its share);
 *   uneven tail (at least one whole round, the last one more than half busy): the whole
 *     rounds at 100, then the longer of a long piece and a chain of short ones
 *     (tail_uneven()), plus TAIL_UNEVEN_COST.
 * Examples on 132 SMs (LARGE_TILE_GAIN 104: a 64x128 round costs 26):
 *   1024^2: large 32 tiles: 100;  small 128: 26                                -> 64x128
 *   2048^2: large 128: 100;       small 512: 4 x 26 = 104                      -> 128x256
 *   2304^2: large 162: 200;       stream-K 162/132 x 113 = 138; split tail (30 tiles x 4
 *           slices) 100 + 25 + 7 = 132; small 648: 130                         -> 64x128
 *   3072^2: large 288: 300;       stream-K 100 + 156/132 x 113 = 233; split tail (24 x 5)
 *           200 + 20 + 7 = 227; small 234                                      -> split tail
 *   4096^2: large 512: 400;       stream-K 2 x 100 + 248/132 x 113 = 412; uneven tail (116
 *           tiles cut at 460 / 52 K tiles, 8 waves of short pieces) 300 + 90 + 2 = 392;
 *           small 416                                                          -> uneven tail
 *   8192^2: large 2048: 1600;     stream-K 14 x 100 + 200/132 x 113 = 1571; uneven tail (68
 *           tiles, 2 waves) 1500 + 67 + 2 = 1569                               -> uneven tail
 * Measured on the H100 (each plan forced, session 6): the uneven tail is the fastest plan at
 * 2560, 2816, 3328, 4096, 4608, 5376, 6144, 7168, 7680 and 8192, and loses at 3584 (128
 * tiles over, 4 free SMs: 32 waves of short pieces), where the model keeps whole tiles.
 */
enum plan { WHOLE_LARGE, WHOLE_SMALL, STREAM_K_LARGE, TAIL_SPLIT_LARGE, TAIL_UNEVEN_LARGE };

/* The split tail's schedule (item 10): the last r = tiles % w of the 128x256 tiles (w = the
 * blocks that run at once, one per SM), where r <= w/2, each cut along K into s = w / r equal
 * slices (<= SPLIT_MAX, each >= SPLIT_MIN_KT K tiles long, or >= 1 with force): r*s <= w
 * pieces, one round of 1/s of a tile. Returns that time in hundredths of a tile (a whole
 * one: 100), or -1 where no split applies. */
static long long tail_split(long long r, long long w, long long kt, int force, int *slices)
{
    const long long min_kt = force ? 1 : SPLIT_MIN_KT;
    *slices = 1;
    if (r < 1 || 2 * r > w || kt < 2)
        return -1;
    long long s = w / r;
    if (s > SPLIT_MAX)
        s = SPLIT_MAX;
    while (s >= 2 && kt / s < min_kt)
        --s;
    if (s < 2)
        return -1;
    *slices = (int)s;
    return ((kt - 1) / s + 1) * 100 / kt;
}

/* The uneven tail's schedule (item 11): the last r = tiles % w of the 128x256 tiles (r > w/2;
 * with force any r >= 1), each cut once along K: the long pieces, kt - js K tiles each, run at
 * once on r SMs; the short ones, js K tiles each, run one after another on the w - r SMs left
 * free, waves = ceil(r / (w - r)) deep. js is chosen so that a chain of short pieces,
 * waves * (js + TAIL_SHORT_KT), ends with the long ones. Returns the longer of the two in
 * hundredths of a whole tile, or -1 where no cut applies; *short_kt = js. */
static long long tail_uneven(long long r, long long w, long long kt, int force, int *short_kt)
{
    *short_kt = 0;
    if (r < 1 || r >= w || kt < 2 || (!force && 2 * r <= w))
        return -1;
    const long long waves = (r - 1) / (w - r) + 1;
    const long long min_js = force ? 1 : SPLIT_MIN_KT;
    const long long js0 = (kt - waves * TAIL_SHORT_KT) / (waves + 1);
    long long best_js = -1, best = -1;
    for (long long js = js0; js <= js0 + 1; ++js) { /* the balance point lies between the two */
        const long long j = js < min_js ? min_js : js;
        if (2 * j > kt)
            continue;
        const long long short_chain = waves * (j + TAIL_SHORT_KT);
        const long long t = short_chain > kt - j ? short_chain : kt - j;
        if (best < 0 || t < best) {
            best = t;
            best_js = j;
        }
    }
    if (best < 0)
        return -1;
    *short_kt = (int)best_js;
    return (best * 100 - 1) / kt + 1;
}

/* large_slots: 128x256 blocks that run at once (for the split tail); resident: the same for
 * the stream-K kernel, 0 where the GPU has no cooperative launch. */
static enum plan choose_plan(int M, int N, int K, int sms, long long large_slots,
                             long long resident)
{
    const long long large = ceil_div(M, L_BM) * ceil_div(N, L_BN);
    const long long small = ceil_div(M, S_BM) * ceil_div(N, S_BN);
    const long long whole_large = ((large - 1) / sms + 1) * 100;
    const long long whole_small = ((small - 1) / sms + 1) * LARGE_TILE_GAIN / 4;
    long long stream_k = -1, tail = -1;
    if (STREAM_K && resident > 0 && large > resident && large % resident != 0) {
        const long long dp_rounds = large / resident - 1;
        stream_k = dp_rounds * 100 + (large - dp_rounds * resident) * STREAM_K_COST / resident;
    }
    /* (below one whole round the 64x128 kernel and its split-K serve better) */
    if ((TAIL_SPLIT && large > large_slots) || (FORCE_TAIL && large_slots > 0)) {
        int slices;
        const long long t =
            tail_split(large % large_slots, large_slots, ceil_div(K, BK), FORCE_TAIL, &slices);
        if (t >= 0)
            tail = large / large_slots * 100 + t + TAIL_SPLIT_COST;
    }
    long long uneven = -1;
    if ((TAIL_UNEVEN && large > large_slots) || (FORCE_UNEVEN && large_slots > 0)) {
        int short_kt;
        const long long t =
            tail_uneven(large % large_slots, large_slots, ceil_div(K, BK), FORCE_UNEVEN, &short_kt);
        if (t >= 0)
            uneven = large / large_slots * 100 + t + TAIL_UNEVEN_COST;
    }
    if (FORCE_KERNEL == 2)
        return WHOLE_SMALL;
    /* the best way with 128x256 tiles; ties go to the simpler one */
    enum plan best = WHOLE_LARGE;
    long long best_cost = whole_large;
    if (tail >= 0 && (FORCE_TAIL || tail < best_cost)) {
        best = TAIL_SPLIT_LARGE;
        best_cost = tail;
    }
    if (uneven >= 0 && (FORCE_UNEVEN || uneven < best_cost)) {
        best = TAIL_UNEVEN_LARGE;
        best_cost = uneven;
    }
    if (!FORCE_TAIL && !FORCE_UNEVEN && stream_k >= 0 && stream_k < best_cost) {
        best = STREAM_K_LARGE;
        best_cost = stream_k;
    }
    if (FORCE_KERNEL == 1 || FORCE_TAIL || FORCE_UNEVEN || best_cost <= whole_small)
        return best;
    return WHOLE_SMALL;
}

/* Split-K: how many slices (blocks per tile) the 64x128 kernel's `tiles` tiles get; 1 = none.
 * Cost model, in K tiles of one block's time, with n = ceil(tiles*s / SMs) blocks on the
 * busiest SM sharing its throughput:
 *   s = 1:   n * kt
 *   s >= 2:  n * (ceil(kt / s) + SPLIT_BLOCK_COST)
 * SPLIT_BLOCK_COST (8) is what a slice block adds: a pipeline fill and a 32 KB partial sum
 * written and read back, which at ~1000 blocks is ~60 MB through L2. It was fitted to slices
 * forced 2..8 at 256..1792 on the H200 (results/notes/step_11.md, session 3): the good slice
 * counts are those that fill the last round of blocks, and every block costs ~3 us of
 * partial-sum traffic. The cheapest s wins, ties to fewer slices. On 132 SMs (kt = K / 8;
 * H200, every plan forced, session 9):
 *   256^2    8 tiles: s = 8  (14.4 us; 4 slices 13.9, whole tiles 18.4)
 *   512^2   32 tiles: s = 4  (18.6 us, the fastest; whole 31.3)
 *   896^2   98 tiles: s = 4  (45.0 us, the fastest; whole 50.3)
 *   1024^2 128 tiles: s = 1  (56.3 us, the fastest; 2 slices 61.2)
 *   1536^2 288 tiles: s = 3  (183.8 us; 5 slices 180.9, whole 200.6)
 * Through clusters (item 12; cluster_cap != NULL: cluster_cap[s] clusters of s run at one
 * block per SM), a slice costs less, and the busiest SM is counted from the clusters:
 *   s >= 2:  n * (ceil(kt / s) + CLUSTER_BLOCK_COST),  n = ceil(tiles / cluster_cap[s])
 * taken only where n <= CLUSTER_MAX_SHARE (6). CLUSTER_BLOCK_COST (2, ~0.7 us) was fitted to
 * slices forced 2..8 at 256..1792 on the H200 (session 8): time ~ 8 us + 0.34 us * n *
 * (ceil(kt / s) + 2) up to 768^2. CLUSTER_MAX_SHARE was 2 at first ("beyond that n no longer
 * predicts the time"); every plan forced every 64 from 256 to 1792 (session 9) showed the
 * fastest plan sharing SMs three to five blocks deep at 576, 832, 1216 and 1600, and a term
 * of 1 per slice in the global cost (SPLIT_SLOT_COST, now gone) only moved picks away from
 * the fastest. Refit to those 25 sizes, the pick is within 1% of the fastest plan at 17 of
 * them and within 3% at 20 (before: 11 and 15). The model picks (H200, ratio to cuBLAS,
 * two runs; before the refit -> now):
 *   256^2    8 tiles: s = 8   (1.23-1.33)    576^2  45 tiles: s = 8, n = 3 (0.88 -> 1.04-1.08)
 *   384^2   18 tiles: s = 5   (1.19-1.24)    832^2  91 tiles: s = 4, global (0.91 -> 1.00-1.02)
 *   512^2   32 tiles: s = 3   (0.98-1.01)    1216^2 190: s = 2, n = 3 (1.01 -> 1.10)
 *   640^2   50 tiles: s = 2   (1.08-1.10)    1600^2 325: s = 2, n = 5 (1.05 -> 1.15)
 *   768^2   72 tiles: s = 3   (1.15-1.16)    1024^2: whole tiles (1.14)
 * Still below cuBLAS: 896^2 (4 global slices, 0.87-0.89 -> 0.97-0.99) and 1088^2 (3 in
 * clusters, 0.95 -> 0.98-0.99), where cuBLAS runs 64x64 tiles in 2-3 K slices; 832, 1152
 * and 1472 at 1.00. The largest miss: 832^2 in clusters of 4 (n = 4) took 36.8 us against
 * the pick's 41.8; none of the simple terms tried ranks that one first.
 * No slice is shorter than SPLIT_MIN_KT K tiles, no tile has more than SPLIT_MAX slices, and
 * the workspace never exceeds 8192 slots (256 MB; only FORCE_SPLIT on a huge C gets near).
 * *cluster := 1 where the slices should meet in a cluster. */
#define SPLIT_MAX_BLOCKS 8192
static int split_slices(long long tiles, int K, int sms, const int *cluster_cap, int *cluster)
{
    const long long kt = ceil_div(K, BK);
    long long best = 1;
    *cluster = 0;
    if (FORCE_SPLIT > 1) {
        best = FORCE_SPLIT < kt ? FORCE_SPLIT : kt;
        *cluster = cluster_cap != NULL && best <= SPLIT_MAX && cluster_cap[best] > 0;
    } else if (SPLIT_K) {
        long long best_cost = ((tiles - 1) / sms + 1) * kt;
        for (long long s = 2; s <= SPLIT_MAX && kt / s >= SPLIT_MIN_KT; ++s) {
            const long long n = (tiles * s - 1) / sms + 1;
            const long long cost = n * ((kt - 1) / s + 1 + SPLIT_BLOCK_COST);
            if (cost < best_cost) {
                best_cost = cost;
                best = s;
                *cluster = 0;
            }
            if (cluster_cap == NULL || cluster_cap[s] <= 0)
                continue;
            /* clusters: n = blocks on the busiest SM, from how many fit at one per SM */
            const long long nc = (tiles - 1) / cluster_cap[s] + 1;
            const long long cluster_cost = nc * ((kt - 1) / s + 1 + CLUSTER_BLOCK_COST);
            if (nc <= CLUSTER_MAX_SHARE && cluster_cost < best_cost) {
                best_cost = cluster_cost;
                best = s;
                *cluster = 1;
            }
        }
    }
    if (best < 2 || tiles * best > SPLIT_MAX_BLOCKS) {
        *cluster = 0;
        return 1;
    }
    return (int)best;
}

/* ---- The stream-K and split-K workspace ----------------------------------------------------
 * One per device: slots of 128x256 floats and as many flags (stream-K: a slot and a flag per
 * block; split-K: four 64x128 slots per slot and a count per tile). Made on first use and kept
 * for the life of the process: the launcher never waits for a kernel, so it could not know
 * when freeing it is safe. Every flag a launch raises is cleared by the block that waits for
 * it (every count by the last block of its tile), so each launch leaves zeros for the next.
 * Two launches must not use the workspace at once: a launch on another stream than the last
 * one first waits (on the GPU, not the host) for that one, through an event recorded after
 * each launch. One mutex covers it from lookup to that record. */
#define MAX_DEVICES 64

struct workspace {
    float4 *partials;
    unsigned *flags;
    int slots;
    int has_event;
    cudaEvent_t last_use;
    cudaStream_t last_stream;
};

static struct workspace workspaces[MAX_DEVICES];
static pthread_mutex_t workspace_lock = PTHREAD_MUTEX_INITIALIZER;

/* With workspace_lock held: a workspace of at least `slots` slots on `device`, ordered after
 * its last use on another stream. */
static cudaError_t get_workspace(int device, int slots, cudaStream_t stream, struct workspace **out)
{
    struct workspace *ws = &workspaces[device];
    cudaError_t err = cudaSuccess;
    if (!ws->has_event) {
        err = cudaEventCreateWithFlags(&ws->last_use, cudaEventDisableTiming);
        if (err != cudaSuccess)
            return err;
        ws->has_event = 1;
        ws->last_stream = stream;
    }
    if (ws->slots < slots) {
        if (ws->slots > 0) { /* a larger grid than before: replace it, once its last user ended */
            err = cudaEventSynchronize(ws->last_use);
            if (err == cudaSuccess)
                err = cudaFree(ws->partials);
            if (err == cudaSuccess)
                err = cudaFree(ws->flags);
            if (err != cudaSuccess)
                return err;
            ws->slots = 0;
        }
        const size_t slot_bytes = (size_t)L_BM * L_BN * sizeof(float);
        err = cudaMalloc((void **)&ws->partials, (size_t)slots * slot_bytes);
        if (err != cudaSuccess)
            return err;
        err = cudaMalloc((void **)&ws->flags, (size_t)slots * sizeof(unsigned));
        if (err != cudaSuccess) {
            (void)cudaFree(ws->partials);
            return err;
        }
        err = cudaMemsetAsync(ws->flags, 0, (size_t)slots * sizeof(unsigned), stream);
        if (err != cudaSuccess)
            return err;
        ws->slots = slots;
    }
    if (ws->last_stream != stream) {
        err = cudaStreamWaitEvent(stream, ws->last_use, 0);
        if (err != cudaSuccess)
            return err;
    }
    *out = ws;
    return cudaSuccess;
}

/* Stream-K launch of the large kernel: the last full round of tiles and the partial one,
 * sk_tiles = blocks + tiles % blocks of them, shared out by `blocks` blocks (as many as the
 * GPU holds at once: a cooperative launch, so that all are resident together; each block's
 * share is then kt .. 2*kt-1 K tiles, and no tile is split more than once); the tiles before
 * them, whole rounds, by the whole-tile kernel. Sets *launched = 0 (and returns success) when
 * the GPU cannot hold the blocks together after all (other work limiting the SMs, say): the
 * caller then runs whole tiles only. */
static cudaError_t launch_stream_k(stream_k_kernel sk_kernel, gemm_kernel whole, int blocks,
                                   int smem, long long tiles, int M, int N, int K, float alpha,
                                   const float *A, int lda, const float *B, int ldb, float beta,
                                   float *C, int ldc, cudaStream_t stream, int *launched)
{
    int device = 0;
    *launched = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    if (device < 0 || device >= MAX_DEVICES)
        return cudaSuccess;

    struct stream_k sk;
    sk.dp_tiles = (int)((tiles / blocks - 1) * blocks);
    sk.sk_tiles = (int)(tiles - sk.dp_tiles);

    pthread_mutex_lock(&workspace_lock);
    struct workspace *ws = NULL;
    err = get_workspace(device, blocks, stream, &ws);
    if (err == cudaSuccess) {
        sk.partials = ws->partials;
        sk.flags = ws->flags;
        void *args[] = {&M, &N, &K, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc, &sk};
        err = cudaLaunchCooperativeKernel((const void *)sk_kernel, dim3((unsigned)blocks),
                                          dim3(L_THREADS), args, (size_t)smem, stream);
        if (err == cudaErrorCooperativeLaunchTooLarge) {
            (void)cudaGetLastError(); /* not sticky: the caller falls back to whole tiles */
            err = cudaSuccess;
        } else if (err == cudaSuccess) {
            err = cudaGetLastError();
            *launched = (err == cudaSuccess);
        }
        if (*launched) {
            err = cudaEventRecord(ws->last_use, stream);
            ws->last_stream = stream;
        }
    }
    pthread_mutex_unlock(&workspace_lock);
    if (err != cudaSuccess || !*launched || sk.dp_tiles == 0)
        return err;
    /* The whole rounds before: block b computes tile b < dp_tiles. */
    whole<<<(unsigned)sk.dp_tiles, L_THREADS, smem, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta,
                                                              C, ldc, 0);
    return cudaGetLastError();
}

/* Split-K launch: `slices` blocks for each of `tiles` tiles, C tiles first_tile on (the
 * small kernel: all its 64x128 tiles; the split tail: the large kernel's last round). The
 * workspace holds a slot per block (a 128x256 slot holds `per_slot` blocks' partial sums)
 * and a counter per tile. Sets *launched = 0 (and returns success) when there is no
 * workspace slot for this device: the caller then runs whole tiles. */
static cudaError_t launch_split(split_kernel kernel, int threads, int per_slot, int slices,
                                int first_tile, long long tiles, int smem, int M, int N, int K,
                                float alpha, const float *A, int lda, const float *B, int ldb,
                                float beta, float *C, int ldc, cudaStream_t stream, int *launched)
{
    int device = 0;
    *launched = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    if (device < 0 || device >= MAX_DEVICES)
        return cudaSuccess;
    const long long blocks = tiles * slices;
    const long long large_slots = (blocks - 1) / per_slot + 1;
    const int slots = (int)(large_slots > tiles ? large_slots : tiles); /* one count per tile */

    pthread_mutex_lock(&workspace_lock);
    struct workspace *ws = NULL;
    err = get_workspace(device, slots, stream, &ws);
    if (err == cudaSuccess) {
        const struct split_k sp = {slices, 0, first_tile, ws->partials, ws->flags};
        kernel<<<(unsigned)blocks, threads, smem, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta, C,
                                                            ldc, sp);
        err = cudaGetLastError();
        if (err == cudaSuccess) {
            *launched = 1;
            err = cudaEventRecord(ws->last_use, stream);
            ws->last_stream = stream;
        }
    }
    pthread_mutex_unlock(&workspace_lock);
    return err;
}

/* How many clusters of s blocks run at once with one block per SM. A cluster never spans two
 * GPCs (graphics processing clusters, groups of SMs), so this is not SMs / s: on the H100
 * and the H200 alike, 30 clusters of 4 (not 33) and 15 of 7 or 8 (not 18 or 16). A launch of
 * more clusters than that puts two blocks on some SMs while others idle (measured with a
 * placement probe, results/notes/step_11.md, session 8), and those SMs set the time. The
 * driver knows the layout: cudaOccupancyMaxActiveClusters answers for a kernel that takes
 * more than half of an SM's shared memory, so that no SM can hold two of its blocks. That
 * kernel is cluster_capacity_probe, which is never launched. Asked once per device. */
__global__ void cluster_capacity_probe(void) {}

/* A launch of `blocks` blocks of S_THREADS in clusters of `size`; *attr holds the cluster
 * attribute the config points to. */
static cudaLaunchConfig_t cluster_config(long long blocks, int size, int smem, cudaStream_t stream,
                                         cudaLaunchAttribute *attr)
{
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = (unsigned)size;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3((unsigned)blocks);
    config.blockDim = dim3(S_THREADS);
    config.dynamicSmemBytes = (size_t)smem;
    config.stream = stream;
    config.attrs = attr;
    config.numAttrs = 1;
    return config;
}

static pthread_mutex_t cluster_lock = PTHREAD_MUTEX_INITIALIZER;
static int cluster_capacity[MAX_DEVICES][SPLIT_MAX + 1]; /* 0: not asked yet; -1: none fit */

/* cap[s], s = 2..SPLIT_MAX: clusters of s blocks that `device` (< MAX_DEVICES) runs at one
 * block per SM (-1: none). */
static cudaError_t cluster_capacities(int device, int cap[SPLIT_MAX + 1])
{
    cudaError_t err = cudaSuccess;
    pthread_mutex_lock(&cluster_lock);
    int *known = cluster_capacity[device];
    if (known[2] == 0) {
        int per_sm = 0, per_block = 0;
        err = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
        if (err == cudaSuccess)
            err =
                cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
        const int smem = per_sm / 2 + 1024; /* two of these blocks never fit in one SM */
        const int can_ask = err == cudaSuccess && smem <= per_block;
        if (can_ask)
            err = cudaFuncSetAttribute((const void *)cluster_capacity_probe,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        for (int s = 2; s <= SPLIT_MAX && err == cudaSuccess; ++s) {
            int fit = 0;
            if (can_ask) {
                cudaLaunchAttribute attr;
                const cudaLaunchConfig_t config = cluster_config(s, s, smem, 0, &attr);
                err = cudaOccupancyMaxActiveClusters(&fit, (const void *)cluster_capacity_probe,
                                                     &config);
            }
            known[s] = fit > 0 ? fit : -1;
        }
        if (err != cudaSuccess)
            known[2] = 0; /* ask again next time */
    }
    for (int s = 0; s <= SPLIT_MAX; ++s)
        cap[s] = s >= 2 && err == cudaSuccess ? known[s] : 0;
    pthread_mutex_unlock(&cluster_lock);
    return err;
}

/* Split-K through clusters (item 12): `tiles` 64x128 tiles, `slices` blocks each, every tile's
 * slices one cluster. No workspace: the partial sums stay in the cluster's shared memory. */
static cudaError_t launch_cluster_split(split_kernel kernel, int slices, long long tiles, int smem,
                                        int M, int N, int K, float alpha, const float *A, int lda,
                                        const float *B, int ldb, float beta, float *C, int ldc,
                                        cudaStream_t stream)
{
    cudaLaunchAttribute attr; /* consecutive blocks, one cluster: one tile's slices */
    const cudaLaunchConfig_t config = cluster_config(tiles * slices, slices, smem, stream, &attr);
    const struct split_k sp = {slices, 0, 0, NULL, NULL};
    cudaError_t err =
        cudaLaunchKernelEx(&config, kernel, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, sp);
    const cudaError_t last = cudaGetLastError();
    return err != cudaSuccess ? err : last;
}

/* ---- The uneven tail's streams and buffer (item 11) ----------------------------------------
 * The long pieces and then the whole tiles run on the caller's stream, the short pieces and
 * their add on a stream `lo` of the least priority, which starts after what the caller's
 * stream had queued and which the caller's stream waits for at the end (events): to the
 * caller it is one launch on its stream. The short pieces go one wave of free SMs per launch,
 * so they cannot crowd out the long ones; the cut (tail_uneven()) makes their last wave start
 * before the long pieces end, so no short piece waits for an SM when the whole tiles start.
 * (A stream of the greatest priority for the long pieces and the whole tiles, as first
 * written, would also settle that case, but waiting on the caller's stream through an event
 * cost ~5 us per call.) Made per device on first use and kept for the life of the process,
 * like the workspace; the buffer of the short pieces grows when a larger C needs it (once the
 * last add that read it has ended). One mutex covers a launch from the first event to the
 * last. */
#define TAIL_W_MAX_BYTES ((size_t)256 << 20)

struct tail_streams {
    int ready;
    cudaStream_t lo;
    cudaEvent_t start, long_done, lo_done;
    float *w;
    size_t w_floats;
};

static struct tail_streams tail_streams[MAX_DEVICES];
static pthread_mutex_t tail_lock = PTHREAD_MUTEX_INITIALIZER;

/* With tail_lock held: `device`'s streams and events, and a buffer of at least w_floats. */
static cudaError_t get_tail_streams(int device, size_t w_floats, struct tail_streams **out)
{
    struct tail_streams *ts = &tail_streams[device];
    cudaError_t err = cudaSuccess;
    if (!ts->ready) {
        int least = 0, greatest = 0;
        err = cudaDeviceGetStreamPriorityRange(&least, &greatest);
        if (err == cudaSuccess)
            err = cudaStreamCreateWithPriority(&ts->lo, cudaStreamNonBlocking, least);
        cudaEvent_t *events[] = {&ts->start, &ts->long_done, &ts->lo_done};
        for (int i = 0; i < 3 && err == cudaSuccess; ++i)
            err = cudaEventCreateWithFlags(events[i], cudaEventDisableTiming);
        if (err != cudaSuccess)
            return err; /* an error the caller reports; what was made stays unused */
        ts->ready = 1;
    }
    if (ts->w_floats < w_floats) {
        if (ts->w != NULL) {
            err = cudaStreamSynchronize(ts->lo); /* the last add that read it */
            if (err == cudaSuccess)
                err = cudaFree(ts->w);
            if (err != cudaSuccess)
                return err;
            ts->w = NULL;
            ts->w_floats = 0;
        }
        err = cudaMalloc((void **)&ts->w, w_floats * sizeof(float));
        if (err != cudaSuccess) {
            ts->w = NULL;
            return err;
        }
        ts->w_floats = w_floats;
    }
    *out = ts;
    return cudaSuccess;
}

/* Uneven tail launch (item 11): tiles dp_tiles .. tiles-1, the last round, each cut at
 * k_cut = 8 * (kt - short_kt); then tiles 0 .. dp_tiles-1 whole. Every piece runs in the
 * whole-tile kernel `large`, unchanged (the same SASS), on a K range of its own:
 *   stream: the long pieces:  C = alpha * A[:, :k_cut] B[:k_cut, :] + beta * C   (K = k_cut)
 *   lo: the short pieces: w = alpha * A[:, k_cut:] B[k_cut:, :]   (beta 0, into w, which
 *       holds C's rows row0 .. M-1: the pieces run as the GEMM of those rows, in which the
 *       same tiles have the numbers dp_tiles - first_w on, since row0 starts a raster group)
 *   stream: the whole tiles, after the long pieces
 *   lo: after the long pieces: C += w on the cut tiles, in that order (the same floats on
 *       every run; rounded like a split-K sum of two slices, not K in order).
 * Sets *launched = 0 (and returns success) where w would pass TAIL_W_MAX_BYTES or the device
 * has no slot: the caller then runs whole tiles. */
static cudaError_t launch_uneven_tail(gemm_kernel large, int smem, long long tiles, long long slots,
                                      long long dp_tiles, int short_kt, int M, int N, int K,
                                      float alpha, const float *A, int lda, const float *B, int ldb,
                                      float beta, float *C, int ldc, cudaStream_t stream,
                                      int *launched)
{
    int device = 0;
    *launched = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    if (device < 0 || device >= MAX_DEVICES)
        return cudaSuccess;
    const int r = (int)(tiles - dp_tiles);
    const int free_sms = (int)(slots - r);
    const int k_cut = (int)(ceil_div(K, BK) - short_kt) * BK;
    const long long tiles_n = ceil_div(N, L_BN);
    const long long per_group = (long long)RASTER_GROUP * tiles_n;
    const long long first_group = dp_tiles / per_group;
    const int row0 = (int)(first_group * RASTER_GROUP * L_BM);
    const int first_w = (int)(dp_tiles - first_group * per_group);
    const long long ldw = ((long long)N + 3) / 4 * 4; /* float4 rows */
    const size_t w_floats = (size_t)(M - row0) * (size_t)ldw;
    if (ldw > 0x7fffffffLL || w_floats * sizeof(float) > TAIL_W_MAX_BYTES)
        return cudaSuccess;

    pthread_mutex_lock(&tail_lock);
    struct tail_streams *ts = NULL;
    err = get_tail_streams(device, w_floats, &ts);
    if (err == cudaSuccess)
        err = cudaEventRecord(ts->start, stream);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(ts->lo, ts->start, 0);
    if (err == cudaSuccess) { /* long pieces, the first to claim the SMs */
        large<<<(unsigned)r, L_THREADS, smem, stream>>>(M, N, k_cut, alpha, A, lda, B, ldb, beta, C,
                                                        ldc, (int)dp_tiles);
        err = cudaGetLastError();
    }
    /* Short pieces, on the SMs left free: one launch per wave of `free_sms` blocks, so that
     * they can never hold more SMs than that, whichever grid the block scheduler starts first
     * (the two grids become ready at the same moment, and stream priorities do not settle
     * that race). */
    for (int first = 0; first < r && err == cudaSuccess; first += free_sms) {
        const int wave = r - first < free_sms ? r - first : free_sms;
        large<<<(unsigned)wave, L_THREADS, smem, ts->lo>>>(
            M - row0, N, K - k_cut, alpha, A + (size_t)row0 * lda + k_cut, lda,
            B + (size_t)k_cut * ldb, ldb, 0.0f, ts->w, (int)ldw, first_w + first);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess)
        err = cudaEventRecord(ts->long_done, stream);
    if (err == cudaSuccess && dp_tiles > 0) { /* whole tiles, as the long pieces end */
        large<<<(unsigned)dp_tiles, L_THREADS, smem, stream>>>(M, N, K, alpha, A, lda, B, ldb, beta,
                                                               C, ldc, 0);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(ts->lo, ts->long_done, 0);
    if (err == cudaSuccess) {
        const int vec = (ldc % 4 == 0) && sgemm_aligned16(C);
        sgemm_cp_async_add_short_pieces<<<dim3((unsigned)r, L_BM / ADD_ROWS), ADD_THREADS, 0,
                                          ts->lo>>>(M, N, C, ldc, ts->w, (int)ldw, row0,
                                                    (int)dp_tiles, vec);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess)
        err = cudaEventRecord(ts->lo_done, ts->lo);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(stream, ts->lo_done, 0);
    pthread_mutex_unlock(&tail_lock);
    *launched = (err == cudaSuccess);
    return err;
}

static cudaError_t launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                          int ldb, float beta, float *C, int ldc, cudaStream_t stream)
{
    int done = 0;
    cudaError_t err = sgemm_prologue(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, &done);
    if (err != cudaSuccess || done)
        return err;
    if (sgemm_current_cc() < 80)
        return cudaErrorInvalidDevice; /* cp.async needs sm_80 or newer */

    int dev = 0, sms = 0, coop = 0, clusters = 0;
    err = cudaGetDevice(&dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, dev);
    if (err != cudaSuccess)
        return err;
    /* split-K through clusters: sm_90 and newer (distributed shared memory) */
    const int use_cluster =
        CLUSTER_SPLIT && clusters && sgemm_current_cc() >= 90 && dev < MAX_DEVICES;
    if (sms < 1)
        sms = 1;

    /* 16-byte copies of B need 16-byte aligned row starts (ldb % 4 == 0, B aligned) and
     * N % 4 == 0, so that no 4-float segment straddles column N. */
    const int b16 = (ldb % 4 == 0) && (N % 4 == 0) && sgemm_aligned16(B);
    const gemm_kernel large = b16 ? sgemm_cp_async_128x256 : sgemm_cp_async_128x256_b4;
    const gemm_kernel small = b16 ? sgemm_cp_async_64x128 : sgemm_cp_async_64x128_b4;
    const stream_k_kernel large_sk = b16 ? sgemm_cp_async_128x256_sk : sgemm_cp_async_128x256_sk_b4;
    const split_kernel small_split =
        b16 ? sgemm_cp_async_64x128_split : sgemm_cp_async_64x128_split_b4;
    const split_kernel large_split =
        b16 ? sgemm_cp_async_128x256_split : sgemm_cp_async_128x256_split_b4;
    const split_kernel small_cluster =
        b16 ? sgemm_cp_async_64x128_cluster : sgemm_cp_async_64x128_cluster_b4;
    const int large_smem = SMEM_BYTES(L_STAGES, L_BM, L_BN);
    const int small_smem = SMEM_BYTES(S_STAGES, S_BM, S_BN);
    /* a cluster slice parks its 64x128 partial sums in its shared memory after the K loop */
    const int cluster_smem = small_smem > (int)(S_BM * S_BN * sizeof(float))
                                 ? small_smem
                                 : (int)(S_BM * S_BN * sizeof(float));
    if (large_smem > 48 * 1024) { /* above 48 KB a kernel must opt in to dynamic shared memory */
        err = cudaFuncSetAttribute((const void *)large, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   large_smem);
        if (err == cudaSuccess)
            err = cudaFuncSetAttribute((const void *)large_sk,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, large_smem);
        if (err == cudaSuccess)
            err = cudaFuncSetAttribute((const void *)large_split,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, large_smem);
        if (err != cudaSuccess)
            return err;
    }
    if (small_smem > 48 * 1024) {
        err = cudaFuncSetAttribute((const void *)small, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   small_smem);
        if (err == cudaSuccess)
            err = cudaFuncSetAttribute((const void *)small_split,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, small_smem);
        if (err != cudaSuccess)
            return err;
    }
    if (use_cluster && cluster_smem > 48 * 1024) {
        err = cudaFuncSetAttribute((const void *)small_cluster,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize, cluster_smem);
        if (err != cudaSuccess)
            return err;
    }
    /* Stream-K needs every block resident at once: as many blocks as fit, cooperative. */
    long long resident = 0;
    if (STREAM_K && coop) {
        int per_sm = 0;
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void *)large_sk,
                                                            L_THREADS, (size_t)large_smem);
        if (err != cudaSuccess)
            return err;
        resident = (long long)per_sm * sms;
    }
    /* The split tail: how many 128x256 blocks run at once (a round). */
    long long large_slots = 0;
    {
        int per_sm = 0;
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void *)large_split,
                                                            L_THREADS, (size_t)large_smem);
        if (err != cudaSuccess)
            return err;
        large_slots = (long long)per_sm * sms;
    }

    const enum plan plan = choose_plan(M, N, K, sms, large_slots, resident);
    const long long large_tiles = ceil_div(M, L_BM) * ceil_div(N, L_BN);
    if (plan == STREAM_K_LARGE) {
        int launched = 0;
        err = launch_stream_k(large_sk, large, (int)resident, large_smem, large_tiles, M, N, K,
                              alpha, A, lda, B, ldb, beta, C, ldc, stream, &launched);
        if (err != cudaSuccess || launched)
            return err;
    }
    if (plan == TAIL_SPLIT_LARGE) {
        /* the last round's tiles cut along K, then the whole rounds before them as whole
         * tiles (block b: tile b) */
        int slices = 1, launched = 0;
        const long long dp_tiles = large_tiles / large_slots * large_slots;
        (void)tail_split(large_tiles - dp_tiles, large_slots, ceil_div(K, BK), FORCE_TAIL, &slices);
        err = launch_split(large_split, L_THREADS, 1, slices, (int)dp_tiles, large_tiles - dp_tiles,
                           large_smem, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream,
                           &launched);
        if (err != cudaSuccess)
            return err;
        if (launched) {
            if (dp_tiles > 0)
                large<<<(unsigned)dp_tiles, L_THREADS, large_smem, stream>>>(
                    M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, 0);
            return cudaGetLastError();
        }
    }
    if (plan == TAIL_UNEVEN_LARGE) {
        int short_kt = 0, launched = 0;
        const long long dp_tiles = large_tiles / large_slots * large_slots;
        (void)tail_uneven(large_tiles - dp_tiles, large_slots, ceil_div(K, BK), FORCE_UNEVEN,
                          &short_kt);
        err = launch_uneven_tail(large, large_smem, large_tiles, large_slots, dp_tiles, short_kt, M,
                                 N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, &launched);
        if (err != cudaSuccess || launched)
            return err;
    }
    /* Whole tiles, block b computing tile b. One 1-D grid: C spans <= INT_MAX floats, so the
     * block count fits gridDim.x (2^31 - 1) and no slabs are needed. */
    const long long small_tiles = ceil_div(M, S_BM) * ceil_div(N, S_BN);
    if (plan == WHOLE_SMALL) {
        int cap[SPLIT_MAX + 1] = {0}, cluster = 0;
        if (use_cluster) {
            err = cluster_capacities(dev, cap);
            if (err != cudaSuccess)
                return err;
        }
        const int slices = split_slices(small_tiles, K, sms, use_cluster ? cap : NULL, &cluster);
        if (slices > 1 && cluster)
            return launch_cluster_split(small_cluster, slices, small_tiles, cluster_smem, M, N, K,
                                        alpha, A, lda, B, ldb, beta, C, ldc, stream);
        if (slices > 1) {
            int launched = 0;
            err = launch_split(small_split, S_THREADS, (L_BM * L_BN) / (S_BM * S_BN), slices, 0,
                               small_tiles, small_smem, M, N, K, alpha, A, lda, B, ldb, beta, C,
                               ldc, stream, &launched);
            if (err != cudaSuccess || launched)
                return err;
        }
    }
    const int use_small = (plan == WHOLE_SMALL);
    const long long blocks = use_small ? small_tiles : large_tiles;
    if (blocks > 0x7fffffffLL)
        return cudaErrorInvalidValue;
    if (use_small)
        small<<<(unsigned)blocks, S_THREADS, small_smem, stream>>>(M, N, K, alpha, A, lda, B, ldb,
                                                                   beta, C, ldc, 0);
    else
        large<<<(unsigned)blocks, L_THREADS, large_smem, stream>>>(M, N, K, alpha, A, lda, B, ldb,
                                                                   beta, C, ldc, 0);
    return cudaGetLastError();
}

extern "C" const struct step step_11 = {
    11, "cp_async", "cp.async: multi-stage copies that skip registers, 128x256 block tiles",
    80, launch,
};
