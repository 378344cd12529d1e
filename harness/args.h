/* args.h - the harness's command line. */
#ifndef HARNESS_ARGS_H
#define HARNESS_ARGS_H

#include <stddef.h>

#define MAX_SHAPES 512
#define MAX_STEPS 99

/* One product C (M x N) = A (M x K) B (K x N), row-major, with its leading dimensions:
 * lda >= K, ldb >= N, ldc >= N (equal for tightly packed matrices), and how many floats past
 * an aligned allocation each operand starts (0 but for --random). */
struct shape {
    int m, n, k;
    int lda, ldb, ldc;
    int a_off, b_off, c_off;
};

struct options {
    struct shape shapes[MAX_SHAPES]; /* points to time (or verify with --no-time) */
    int nshapes;
    int check;         /* run the correctness check matrix */
    int time;          /* time the shapes (0 with --no-time) */
    int reps;          /* replays per point, 0 for the default rule */
    double budget_s;   /* time budget per point and kernel */
    double power_s;    /* seconds of back-to-back runs per kernel for clocks and power, 0: none */
    const char *csv;   /* append rows here, or NULL */
    int device;        /* CUDA device ordinal */
    int quiet;         /* no table on stdout */
    int inputs;        /* the timed inputs: FILL_UNIFORM (default) or FILL_SPREAD (fill.h) */
    const char *anchors_csv; /* --anchors: time cuBLAS TF32 and 3xTF32 too, rows here */
    int random;              /* --random N: the last N shapes are random_shape(seed, 0..N-1) */
    unsigned long long seed; /* --seed S (default 1) */
    int steps[MAX_STEPS];    /* --steps: the rungs to run (bin/ladder), in order */
    int nsteps;              /* 0: every rung the program has */
};

enum args_result { ARGS_OK = 0, ARGS_HELP = 1, ARGS_ERROR = -1 };

/*
 * Parses argv into *o, in order (so a bad --shapes file before --help is still an error).
 * On ARGS_ERROR, err holds one line saying what is wrong; for a shape file it starts
 * "FILE:LINE: ".
 */
enum args_result parse_args(int argc, char **argv, struct options *o, char *err, size_t errlen);

/* Writes the usage text for program `prog`. */
void print_usage(const char *prog, void *file);

#endif
