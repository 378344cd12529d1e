/*
 * main.c - runs one rung: the check matrix against cuBLAS, then timing beside cuBLAS.
 *
 * Built once per rung with -DSTEP_SYMBOL=step_NN and linked with that rung's object.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/step.h"
#include "args.h"
#include "bench.h"
#include "check.h"
#include "cublas_ref.h"
#include "gpu.h"
#include "report.h"
#include "telemetry.h"
#include "timing.h"

#ifndef STEP_SYMBOL
#error "build with -DSTEP_SYMBOL=step_NN"
#endif

extern const struct step STEP_SYMBOL;

#define EVENT_CAPACITY 64        /* the largest batch of replays timed at once */
#define MEMORY_MARGIN (512u << 20) /* left free for cuBLAS's workspace and the runtime */

/* SGEMM_SEED fixes the inputs (to replay a failure); otherwise every run draws new ones. */
static uint64_t pick_seed(void)
{
    const char *env = getenv("SGEMM_SEED");
    if (env && *env)
        return strtoull(env, NULL, 10);
    return (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock();
}

/* Refuses shapes whose buffers cannot fit before anything runs. */
static int check_fit(const struct options *o, const struct gpu_info *info, const char *prog)
{
    const size_t flush = 2 * info->l2_bytes;
    for (int i = 0; i < o->nshapes; i++) {
        const struct shape *s = &o->shapes[i];
        const size_t need =
            bench_bytes_needed(s, o->anchors_csv != NULL) + flush + MEMORY_MARGIN;
        if (need > info->free_bytes) {
            fprintf(stderr, "%s: M=%d N=%d K=%d needs %.2f GiB on the GPU, %s has %.2f GiB free\n",
                    prog, s->m, s->n, s->k, need / 1073741824.0, info->name,
                    info->free_bytes / 1073741824.0);
            return EXIT_USAGE;
        }
    }
    return 0;
}

/* The shapes --random drew, so that a run can be repeated: the last o->random of o->shapes. */
static void print_random_shapes(const struct options *o)
{
    printf("random shapes (--random %d --seed %llu): M N K, lda ldb ldc, offsets of A B C in "
           "floats\n", o->random, o->seed);
    for (int i = o->nshapes - o->random; i < o->nshapes; i++) {
        const struct shape *s = &o->shapes[i];
        printf("  %5d %5d %5d   %5d %5d %5d   %d %d %d\n", s->m, s->n, s->k, s->lda, s->ldb,
               s->ldc, s->a_off, s->b_off, s->c_off);
    }
}

int main(int argc, char **argv)
{
    const struct step *st = &STEP_SYMBOL;
    const char *prog = argc > 0 ? argv[0] : "step";
    struct options o;
    char err[512];

    switch (parse_args(argc, argv, &o, err, sizeof err)) {
    case ARGS_HELP:
        print_usage(prog, stdout);
        return 0;
    case ARGS_ERROR:
        fprintf(stderr, "%s: %s\n", prog, err);
        return EXIT_USAGE;
    case ARGS_OK:
        break;
    }

    struct gpu_info info;
    int rc = gpu_open(o.device, &info, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return rc;
    }
    if (info.cc < st->min_cc) {
        gpu_below_cc_message(st->number, st->slug, st->min_cc, o.device, info.name, info.cc, err,
                             sizeof err);
        fprintf(stderr, "%s: %s\n", prog, err);
        return EXIT_UNSUPPORTED;
    }
    if ((rc = check_fit(&o, &info, prog)) != 0)
        return rc;

    /* A blocking stream: the plain cudaMemcpy calls of the checks (on the legacy default
     * stream) then wait for the kernels on it, and it waits for them. */
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    cublasHandle_t h = ref_create(stream);
    const uint64_t seed = pick_seed();
    struct rng rng;
    rng_seed(&rng, seed ^ 0x5eed);
    int failures = 0;

    if (o.random && !o.quiet)
        print_random_shapes(&o);
    if (o.check)
        failures += run_check_matrix(st, h, stream, seed);
    if (!o.time && o.nshapes > 0)
        failures += run_shape_checks(st, o.shapes, o.nshapes, h, stream, seed, o.quiet);

    if (o.time) {
        const struct run_info run = {info.name, info.cc, st->number, st->slug};
        struct telemetry *tel = telemetry_open(o.device);
        struct timer t;
        timer_init(&t, stream, info.l2_bytes, EVENT_CAPACITY);
        FILE *csv = NULL, *anchors = NULL;
        if (o.csv && !(csv = fopen(o.csv, "a+"))) {
            fprintf(stderr, "%s: cannot open --csv %s for appending\n", prog, o.csv);
            return EXIT_USAGE;
        }
        if (o.anchors_csv && !(anchors = fopen(o.anchors_csv, "a+"))) {
            fprintf(stderr, "%s: cannot open --anchors %s for appending\n", prog, o.anchors_csv);
            return EXIT_USAGE;
        }
        if (!o.quiet && o.inputs == FILL_SPREAD)
            printf("timed inputs: random sign, significand and exponent (2^%d..2^%d)\n",
                   FILL_SPREAD_EXP_MIN, FILL_SPREAD_EXP_MAX);
        if (!o.quiet)
            report_table_header(stdout, &run);
        for (int i = 0; i < o.nshapes; i++) {
            struct point_result res;
            bench_point(st, &o.shapes[i], &o, &t, h, tel, &rng, &res);
            failures += !(res.pass && res.exact_pass && res.precision_pass);
            if (!o.quiet) {
                report_table_row(stdout, &res);
                report_anchor_lines(stdout, &res);
                fflush(stdout);
            }
            if (anchors && (report_anchors_row(anchors, &run, &res) != 0 || fflush(anchors))) {
                fprintf(stderr, "%s: writing %s failed\n", prog, o.anchors_csv);
                return EXIT_USAGE;
            }
            if (csv && report_csv_row(csv, &run, &res) != 0) {
                fprintf(stderr, "%s: writing %s failed\n", prog, o.csv);
                return EXIT_USAGE;
            }
            if (csv)
                fflush(csv);
        }
        if (csv && fclose(csv) != 0) {
            fprintf(stderr, "%s: closing %s failed\n", prog, o.csv);
            return EXIT_USAGE;
        }
        if (anchors && fclose(anchors) != 0) {
            fprintf(stderr, "%s: closing %s failed\n", prog, o.anchors_csv);
            return EXIT_USAGE;
        }
        timer_free(&t);
        telemetry_close(tel);
    }

    ref_destroy(h);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return failures ? EXIT_CHECK_FAILED : 0;
}
