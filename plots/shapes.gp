# shapes.gp - the last rung's ratio to cuBLAS on each shape of the shape set, as bars, and
# any other rung of shapes.csv as points over them.
# shapes.dat columns: 1 index, 2 "M×N×K label", 3 ratio (NaN: not measured), 4 cut_short
# rNN.dat (in `others`, rung numbers in `other_steps`): 1 index, 2 ratio; first line names it
# shapes: how many, top: the largest ratio in the CSV, last_step: the rung of the bars
load plotdir.'/common.gp'

set title sprintf("Rung %s against cuBLAS, by shape M×N×K (pad: lda = K + 1, ldb = ldc = N + 1)\n%s", last_label, subtitle)
set ylabel 'GFLOP/s ÷ cuBLAS GFLOP/s (same process)'
set style fill solid 0.85 border rgb '#333333'
set boxwidth 0.7
set xtics rotate by 30 right
set grid noxtics ytics
stats data.'/shapes.dat' using 4 nooutput
if (STATS_max > 0) {
    set label 2 '* cut short by the time budget (fewer replays than the rule)' at graph 0.02, graph 0.96 left
}
set yrange [0:(top > 1.0 ? top : 1.0) * 1.15]
set xrange [-0.6:shapes - 0.4]
set arrow 1 from graph 0, first 1.0 to graph 1, first 1.0 nohead ls 22 back
set key below center horizontal
set lmargin 14
set rmargin 4

bars = data.'/shapes.dat'
if (words(others) == 0) {
    plot bars using 1:3:xtic(2) with boxes lt last_step title 'rung '.last_label, \
         '' using 1:3:(sprintf('%.3f%s', $3, $4 > 0 ? '*' : '')) with labels boxed offset 0,0.9 notitle, \
         keyentry with lines ls 22 title 'cuBLAS = 1.0'
} else {
    plot bars using 1:3:xtic(2) with boxes lt last_step title 'rung '.last_label, \
         '' using 1:3:(sprintf('%.3f%s', $3, $4 > 0 ? '*' : '')) with labels boxed offset 0,0.9 notitle, \
         for [i = 1:words(others)] word(others, i) using 1:2 with points lt int(word(other_steps, i)) ps 1.6 title columnheader(2), \
         keyentry with lines ls 22 title 'cuBLAS = 1.0'
}
