# random.gp - each rung's ratio to cuBLAS on the random shapes (--random N --seed S: M, N and K
# log-uniform, padded rows, offset pointers) against the product's work, one colour a rung.
# randomNN.dat: first line names the rung; then "flop ratio" per shape
# random_files, random_steps: the files and their rungs; random_top: the largest ratio
load plotdir.'/common.gp'

set title sprintf("Random shapes (%s): each rung against cuBLAS, by the product's work\n%s", random_words, subtitle)
set xlabel '2·M·N·K (flop, log scale)'
set ylabel 'GFLOP/s ÷ cuBLAS GFLOP/s (same process)'
set logscale x
set format x '10^%T'
set yrange [0:(random_top > 1.0 ? random_top : 1.0) * 1.15]
set arrow 1 from graph 0, first 1.0 to graph 1, first 1.0 nohead ls 22 back
set key top left
plot for [i = 1:words(random_files)] word(random_files, i) using 1:2 with points \
         lt int(word(random_steps, i)) pt 7 ps 1.3 title columnheader(2), \
     keyentry with lines ls 22 title 'cuBLAS = 1.0'
