# accuracy.gp - speed against accuracy at one size: each rung's GFLOP/s against its largest
# error against FP64 (u = 2^-24 of |A||B|), cuBLAS SGEMM, and (has_acc_anchors) cuBLAS with
# TF32 tensor cores and 3xTF32 composed from three cuBLAS TF32 calls. accuracy.dat: step
# gflops err_u label; accuracy_cublas.dat: gflops err_u; accuracy_anchors.dat: tf32_gflops tf32_err
# x3_gflops x3_err. Up and to the left is better.
load plotdir.'/common.gp'

set title sprintf("Speed against accuracy, M = N = K = %d: up and to the left is better\n%s", ladder_size, subtitle)
set xlabel 'largest error against an FP64 product, in u = 2^-24 of (|A||B|)ij (log scale)'
set ylabel 'GFLOP/s (log scale)'
set logscale xy 10
set format x '%g'
set format y '%.0f'
# the axes hold every point, with room for the labels: a factor beyond the extremes (stats on
# one column at a time: on two it fits a line, and warns for one point)
xmin = 1e30; xmax = 0; ymin = 1e30; ymax = 0
stats data.'/accuracy.dat' using 3 nooutput
xmin = STATS_min; xmax = STATS_max
stats data.'/accuracy.dat' using 2 nooutput
ymin = STATS_min; ymax = STATS_max
stats data.'/accuracy_cublas.dat' using 2 nooutput
xmin = (STATS_min < xmin) ? STATS_min : xmin; xmax = (STATS_max > xmax) ? STATS_max : xmax
stats data.'/accuracy_cublas.dat' using 1 nooutput
ymin = (STATS_min < ymin) ? STATS_min : ymin; ymax = (STATS_max > ymax) ? STATS_max : ymax
if (has_acc_anchors) {
    do for [c in "2 4"] {
        stats data.'/accuracy_anchors.dat' using int(c) nooutput
        xmax = (STATS_max > xmax) ? STATS_max : xmax
        stats data.'/accuracy_anchors.dat' using (column(int(c) - 1)) nooutput
        ymax = (STATS_max > ymax) ? STATS_max : ymax
    }
}
set xrange [xmin / 1.6 : xmax * 2.5]
set yrange [ymin / 1.6 : ymax * 1.8]
# numbers beside the rungs that stand apart (column 4, from plots.sh: the first four, the last
# FFMA rung and Part II, one label for points that would overlap, "-" none); the FFMA rungs
# between crowd around cuBLAS and keep only their colour
label_of(s) = s eq '-' ? '' : s
set key outside right top vertical spacing 1.0 maxrows 40 box lc rgb '#cccccc'

# every rung in its own colour (lc variable: linetype = rung), numbered beside its point
if (has_acc_anchors) {
    plot keyentry with points pt 7 ps 1.6 lc rgb '#888888' title 'rungs, each its colour (those by cuBLAS unnumbered)', \
         data.'/accuracy.dat' using 3:2:1 with points pt 7 ps 1.6 lc variable notitle, \
         '' using 3:2:(label_of(strcol(4))) with labels left offset 0.9, 0.4 notitle, \
         data.'/accuracy_cublas.dat' using 2:1 with points ls 20 pt 7 ps 2.4 title 'cuBLAS SGEMM', \
         data.'/accuracy_anchors.dat' using 2:1 with points lc rgb '#555555' pt 5 ps 2.0 title 'cuBLAS TF32', \
         '' using 4:3 with points lc rgb '#555555' pt 9 ps 2.2 title '3xTF32 from 3 cuBLAS TF32 calls'
} else {
    plot keyentry with points pt 7 ps 1.6 lc rgb '#888888' title 'rungs, each its colour (those by cuBLAS unnumbered)', \
         data.'/accuracy.dat' using 3:2:1 with points pt 7 ps 1.6 lc variable notitle, \
         '' using 3:2:(label_of(strcol(4))) with labels left offset 0.9, 0.4 notitle, \
         data.'/accuracy_cublas.dat' using 2:1 with points ls 20 pt 7 ps 2.4 title 'cuBLAS SGEMM'
}
