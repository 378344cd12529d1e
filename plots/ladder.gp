# ladder.gp - each rung's ratio to cuBLAS at one size, as bars.
# ladder.dat columns: 1 step, 2 "NN slug", 3 ratio, 4 cut_short
load plotdir.'/common.gp'

set title sprintf("Each rung as a fraction of cuBLAS, M = N = K = %d\n%s", ladder_size, subtitle)
set ylabel 'GFLOP/s ÷ cuBLAS GFLOP/s (same process)'
set xlabel 'rung'
set style fill solid 0.85 border rgb '#333333'
set boxwidth 0.7
set xtics rotate by -30 left
set grid noxtics ytics
stats data.'/ladder.dat' using 4 nooutput
if (STATS_max > 0) {
    set label 2 '* cut short by the time budget (fewer replays than the rule)' at graph 0.02, graph 0.96 left
}
stats data.'/ladder.dat' using 3 nooutput
set yrange [0:(STATS_max > 1.0 ? STATS_max : 1.0) * 1.15]
set xrange [-0.6:STATS_records - 0.4]
set arrow 1 from graph 0, first 1.0 to graph 1, first 1.0 nohead ls 22 back
set key top left

plot data.'/ladder.dat' using 0:3:(int($1)):xtic(2) with boxes lc variable notitle, \
     '' using 0:3:(sprintf('%.3f%s', $3, $4 > 0 ? '*' : '')) with labels rotate by 90 left offset 0,0.5 font ',9' notitle, \
     keyentry with lines ls 22 title 'cuBLAS = 1.0'
