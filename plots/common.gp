# common.gp - terminal, output and styles shared by every plot (loaded first).
# scripts/plots.sh passes, with -e:
#   fmt ('png' or 'svg'), out (output file), W, H (pixels), subtitle (GPU, CUDA, date),
#   data (folder of prepared data files), peak (GFLOP/s ceiling line),
#   series (space-separated rung files), steps (their rung numbers), last_label ('11 slug'),
#   ladder_size, has_tel (1: the last rung has clock and power data), clock_lo, clock_hi
set encoding utf8
if (fmt eq 'png') {
    set terminal pngcairo size W,H noenhanced font 'DejaVu Sans,13' linewidth 1.5 background rgb 'white'
} else {
    set terminal svg size W,H fixed noenhanced font 'DejaVu Sans,13' linewidth 1.5 background rgb 'white'
}
set output out
set datafile missing 'NaN'

# Rung colours: the same rung the same style in every plot. Rungs 1-12: twelve hues, solid
# lines, filled points; 13-24: twelve other hues, dashed lines, open points; 25-27: dash-dot
# lines, so that no two rungs of a plot look alike.
set linetype 1 lc rgb '#1f77b4' pt 7 ps 0.8
set linetype 2 lc rgb '#ff7f0e' pt 5 ps 0.8
set linetype 3 lc rgb '#2ca02c' pt 9 ps 0.9
set linetype 4 lc rgb '#d62728' pt 11 ps 0.9
set linetype 5 lc rgb '#9467bd' pt 13 ps 0.9
set linetype 6 lc rgb '#8c564b' pt 7 ps 0.8
set linetype 7 lc rgb '#e377c2' pt 5 ps 0.8
set linetype 8 lc rgb '#7f7f7f' pt 9 ps 0.9
set linetype 9 lc rgb '#bcbd22' pt 11 ps 0.9
set linetype 10 lc rgb '#17becf' pt 13 ps 0.9
set linetype 11 lc rgb '#393b79' pt 7 ps 0.8
set linetype 12 lc rgb '#ad494a' pt 5 ps 0.8
set linetype 13 lc rgb '#637939' dt 2 pt 4 ps 0.9
set linetype 14 lc rgb '#8c6d31' dt 2 pt 6 ps 0.9
set linetype 15 lc rgb '#843c39' dt 2 pt 8 ps 0.9
set linetype 16 lc rgb '#7b4173' dt 2 pt 10 ps 0.9
set linetype 17 lc rgb '#3182bd' dt 2 pt 12 ps 0.9
set linetype 18 lc rgb '#e6550d' dt 2 pt 14 ps 0.9
set linetype 19 lc rgb '#31a354' dt 2 pt 4 ps 0.9
set linetype 20 lc rgb '#756bb1' dt 2 pt 6 ps 0.9
set linetype 21 lc rgb '#636363' dt 2 pt 8 ps 0.9
set linetype 22 lc rgb '#008080' dt 2 pt 10 ps 0.9
set linetype 23 lc rgb '#c51b8a' dt 2 pt 12 ps 0.9
set linetype 24 lc rgb '#08306b' dt 2 pt 14 ps 0.9
set linetype 25 lc rgb '#b8860b' dt 4 pt 4 ps 0.9
set linetype 26 lc rgb '#00a000' dt 4 pt 6 ps 0.9
set linetype 27 lc rgb '#d40000' dt 4 pt 8 ps 0.9
set linetype 28 lc rgb '#6a3d9a' dt 4 pt 10 ps 0.9
# cuBLAS, the ceiling, and the 1.0 mark
set style line 20 lc rgb '#000000' lw 3 dt 1 pt 6 ps 0.9
set style line 21 lc rgb '#555555' lw 2 dt 2
set style line 22 lc rgb '#000000' lw 1.5 dt 3
set style textbox opaque noborder fillcolor rgb 'white'

set grid xtics ytics lc rgb '#dddddd' lw 1 dt 1
set border 3 lc rgb '#444444'
set tics nomirror out
set key noautotitle
