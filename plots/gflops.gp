# gflops.gp - GFLOP/s against square size: every rung, cuBLAS, and the measured FFMA peak.
load plotdir.'/common.gp'

set title sprintf("SGEMM throughput, C = A·B, square M = N = K, FP32\n%s", subtitle)
set xlabel 'M = N = K'
set ylabel 'GFLOP/s (log scale)'
set logscale y 10
set format y '%.0f'
set mytics 10
set xrange [0:*]
# the top of the axis above the highest curve or the ceiling, whichever is higher (the first
# line of a rung file names it: every ::1 skips it)
ymax = peak
do for [i = 1:words(series)] {
    stats word(series, i) using 2 every ::1 nooutput
    if (STATS_max > ymax) { ymax = STATS_max }
}
stats data.'/cublas.dat' using 2 nooutput
if (STATS_max > ymax) { ymax = STATS_max }
set yrange [*:ymax * 1.6]
# the ceiling spans the whole axis, so it is an arrow (keyentry gives it a key line)
set arrow 1 from graph 0, first peak to graph 1, first peak nohead ls 21 front
set key outside right top vertical spacing 1.0 maxrows 40 box lc rgb '#cccccc'

# One line per rung file (its first line names it), then cuBLAS, then the ceiling.
plot for [i = 1:words(series)] word(series, i) using 1:2 with linespoints lt int(word(steps, i)) title columnheader(2), \
     data.'/cublas.dat' using 1:2 with linespoints ls 20 title 'cuBLAS', \
     keyentry with lines ls 21 title sprintf('FFMA peak, measured (%.0f)', peak)
