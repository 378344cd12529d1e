# last_vs_cublas.gp - the last rung's ratio to cuBLAS against size (last.dat column 2).
load plotdir.'/common.gp'

set title sprintf("Rung %s against cuBLAS, by size\n%s", last_label, subtitle)
set xlabel 'M = N = K'
set ylabel 'GFLOP/s ÷ cuBLAS GFLOP/s (same process)'
set xrange [0:*]
stats data.'/last.dat' using 2 nooutput
set yrange [0:(STATS_max > 1.0 ? STATS_max : 1.0) * 1.15]
set arrow 1 from graph 0, first 1.0 to graph 1, first 1.0 nohead ls 20 back
set key bottom right

plot data.'/last.dat' using 1:2 with linespoints lt 11 lw 2 title 'rung '.last_label, \
     keyentry with lines ls 20 title 'cuBLAS = 1.0'
