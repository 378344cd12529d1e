/* report.h - the table on stdout and the CSV rows. */
#ifndef HARNESS_REPORT_H
#define HARNESS_REPORT_H

#include <stdio.h>

#include "precision.h"
#include "stats.h"
#include "telemetry.h"

struct run_info {
    const char *device; /* GPU name */
    int cc;             /* 10*major + minor */
    int step;           /* rung number */
    const char *slug;
};

struct point_result {
    int m, n, k;
    int reps;      /* replays of each kernel */
    int cut_short; /* the time budget cut the replays below the rule */
    struct stats rung, cublas;
    double rel_err; /* ||C - C_cublas||_F / ||C_cublas||_F */
    int pass;       /* elementwise bound against cuBLAS held */
    int exact_pass; /* integer inputs at this shape: bit for bit equal to cuBLAS */
    struct precision err, cublas_err, seq_err; /* against FP64: the rung, cuBLAS, a loop */
    int precision_pass; /* the precision gate (harness/precision.h) held */
    struct telemetry_sample tel_rung, tel_cublas;
    int has_anchors;                   /* --anchors: the two below were measured */
    struct stats tf32, x3;             /* cuBLAS TF32 and 3xTF32 composed from cuBLAS */
    struct precision tf32_err, x3_err; /* their errors against FP64 */
};

void report_table_header(FILE *f, const struct run_info *info);
void report_table_row(FILE *f, const struct point_result *p);
/* The table's header for several rungs (bin/ladder): each row then starts with its rung. */
void report_ladder_header(FILE *f, const struct run_info *info);

/* The CSV header line (with newline); results/NOTES.md ("Reading the output") explains it. */
const char *report_csv_header(void);
/* Appends one row; writes the header first when the file is empty. Returns 0 or -1. */
int report_csv_row(FILE *f, const struct run_info *info, const struct point_result *p);

/* With --anchors: two lines under the point's table row (cuBLAS TF32 and 3xTF32 from cuBLAS:
 * GFLOP/s, the ratio to cuBLAS SGEMM, the errors against FP64). Nothing without anchors. */
void report_anchor_lines(FILE *f, const struct point_result *p);
/* The anchors CSV (--anchors FILE): its header line (results/NOTES.md explains it), and
 * one row per point (header first when the file is empty). Returns 0 or -1. */
const char *report_anchors_header(void);
int report_anchors_row(FILE *f, const struct run_info *info, const struct point_result *p);

#endif
