# clock_power.gp - SM clock and board power against size for the last rung and cuBLAS (top),
# and GFLOP/s per watt (bottom).  last.dat columns:
#   1 size, 2 ratio, 3 gflops, 4 cublas_gflops, 5 sm_mhz, 6 power_w, 7 cublas_sm_mhz,
#   8 cublas_power_w, 9 gflops_per_w, 10 cublas_gflops_per_w  (NaN: no telemetry)
load plotdir.'/common.gp'

if (!has_tel) {
    # No NVML samples in this CSV: say so instead of drawing empty axes.
    set title sprintf("Clocks and power: rung %s and cuBLAS\n%s", last_label, subtitle)
    unset border; unset tics; unset grid
    set xrange [0:1]; set yrange [0:1]
    set label 1 'No clock and power telemetry in this CSV (NVML was unavailable when it was measured).' at 0.5,0.5 center
    plot -1 notitle
    exit
}

set multiplot layout 2,1 title sprintf("Clocks, power and efficiency: rung %s and cuBLAS\n%s", last_label, subtitle)
# the same margins for both panels, so their size axes line up
set lmargin at screen 0.08
set rmargin at screen 0.72
set key at screen 0.99, graph 1.0 right top
set xrange [0:*]
set xlabel 'M = N = K'

# top: clocks on the left axis (a drop under load is throttling), power on the right
set ylabel 'SM clock (MHz)'
set y2label 'board power (W)'
set ytics nomirror
set y2tics nomirror
set yrange [clock_lo:clock_hi]
set y2range [0:*]
set border 11 lc rgb '#444444'
# cuBLAS first, the rung over it: where both hold the same clock, the rung's line stays seen
plot data.'/last.dat' using 1:7 with linespoints ls 20 title 'cuBLAS: SM clock', \
     '' using 1:5 with linespoints lt 4 lw 1.5 pt 7 ps 1.0 title 'rung: SM clock', \
     '' using 1:8 axes x1y2 with linespoints lt 8 dt 2 title 'cuBLAS: power', \
     '' using 1:6 axes x1y2 with linespoints lt 17 title 'rung: power'

# bottom: work per energy
unset y2label
unset y2tics
set border 3 lc rgb '#444444'
set yrange [0:*]
set ylabel 'GFLOP/s per watt'
plot data.'/last.dat' using 1:9 with linespoints lt 11 title 'rung', \
     '' using 1:10 with linespoints ls 20 title 'cuBLAS'
unset multiplot
