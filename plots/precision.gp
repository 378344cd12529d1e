# precision.gp - the largest error against an FP64 product, in u = 2^-24 of (|A||B|)_ij, by
# size: the last rung, cuBLAS and a sequential float loop (on 1024 sampled elements)
# (last.dat columns 11, 12, 13).
load plotdir.'/common.gp'

set title sprintf("Rung %s: largest error against FP64, by size\n%s", last_label, subtitle)
set xlabel 'M = N = K'
set ylabel 'max |c - c64| / (|A||B|)_ij,  in u = 2^-24'
set xrange [0:*]
set yrange [0:*]
set key top left

plot data.'/last.dat' using 1:11 with linespoints lt 11 lw 2 title 'rung '.last_label, \
     data.'/last.dat' using 1:12 with linespoints ls 20 lw 2 title 'cuBLAS SGEMM', \
     data.'/last.dat' using 1:13 with points pt 6 lc rgb '#777777' title 'sequential loop (1024 samples)'
