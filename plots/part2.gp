# part2.gp - Part II's rungs (tensor cores) against cuBLAS SGEMM by size, and the references:
# cuBLAS with TF32 tensor cores and 3xTF32 composed from cuBLAS (anchors.dat: size tf32 x3).
# part2_files: one file per rung (its first line names it), part2_steps: their numbers.
load plotdir.'/common.gp'

set title sprintf("Part II: GEMM on tensor cores against cuBLAS SGEMM, by size\n%s", subtitle)
set xlabel 'M = N = K'
set ylabel 'GFLOP/s ÷ cuBLAS SGEMM GFLOP/s (same process)'
set xrange [0:*]
set yrange [0:*]
set arrow 1 from graph 0, first 1.0 to graph 1, first 1.0 nohead ls 20 back
# beside the plot, not over the curves
set key outside right top vertical spacing 1.15 box lc rgb '#cccccc'

if (has_anchors) {
    plot for [i = 1:words(part2_files)] word(part2_files, i) using 1:2 with linespoints lt int(word(part2_steps, i)) lw 2 title columnheader(2), \
         data.'/anchors.dat' using 1:2 with lines ls 21 title 'cuBLAS TF32 (not FP32-accurate)', \
         data.'/anchors.dat' using 1:3 with lines ls 22 title '3xTF32 from 3 cuBLAS TF32 calls', \
         keyentry with lines ls 20 title 'cuBLAS SGEMM = 1.0'
} else {
    plot for [i = 1:words(part2_files)] word(part2_files, i) using 1:2 with linespoints lt int(word(part2_steps, i)) lw 2 title columnheader(2), \
         keyentry with lines ls 20 title 'cuBLAS SGEMM = 1.0'
}
