/*
 * main.c - runs rungs: the check matrix against cuBLAS, then timing beside cuBLAS.
 *
 * Built two ways:
 *   -DSTEP_SYMBOL=step_NN            bin/stepNN, linked with that rung's object alone;
 *   -DRUNG_LIST="X(01) X(02) ..."    bin/ladder, linked with every rung (common/step.h: a rung
 *                                    exports step_NN alone, so they link into one program);
 *                                    --steps picks some.  Each point's inputs are drawn once
 *                                    and every rung is timed on them beside cuBLAS, in one
 *                                    process (make all-bench).
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

#if defined(RUNG_LIST)
#define X(nn) extern const struct step step_##nn;
RUNG_LIST
#undef X
#define X(nn) &step_##nn,
static const struct step *const built[] = {RUNG_LIST};
#undef X
#define LADDER 1
#elif defined(STEP_SYMBOL)
extern const struct step STEP_SYMBOL;
static const struct step *const built[] = {&STEP_SYMBOL};
#define LADDER 0
#else
#error "build with -DSTEP_SYMBOL=step_NN or -DRUNG_LIST=\"X(01) X(02) ...\""
#endif
#define BUILT ((int)(sizeof built / sizeof built[0]))

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

/* The rungs to run: those --steps names (in its order), or every rung built; exits with a
 * message when --steps names one this program was not built with. *out holds up to BUILT. */
static int pick_rungs(const struct options *o, const char *prog, const struct step **out)
{
    if (o->nsteps == 0) {
        for (int i = 0; i < BUILT; i++)
            out[i] = built[i];
        return BUILT;
    }
    int count = 0;
    for (int j = 0; j < o->nsteps; j++) {
        for (int i = 0; i < j; i++)
            if (o->steps[i] == o->steps[j]) {
                fprintf(stderr, "%s: --steps names rung %d twice\n", prog, o->steps[j]);
                exit(EXIT_USAGE);
            }
        int found = 0;
        for (int i = 0; i < BUILT && !found; i++)
            if (built[i]->number == o->steps[j]) {
                found = 1;
                if (count < BUILT)
                    out[count++] = built[i];
            }
        if (!found) {
            fprintf(stderr, "%s: --steps %d: %s\n", prog, o->steps[j],
                    LADDER ? "no such rung in this program" : "this program runs one rung: its own");
            exit(EXIT_USAGE);
        }
    }
    return count;
}

/* Drops the rungs the GPU is below; returns how many stay (a line on stderr for each dropped
 * where there are several, the message and exit 77 where it was the only one). */
static int runnable(const struct step **rungs, int count, const struct options *o,
                    const struct gpu_info *info, const char *prog)
{
    char err[512];
    int kept = 0;
    for (int i = 0; i < count; i++) {
        if (info->cc >= rungs[i]->min_cc) {
            rungs[kept++] = rungs[i];
            continue;
        }
        gpu_below_cc_message(rungs[i]->number, rungs[i]->slug, rungs[i]->min_cc, o->device,
                             info->name, info->cc, err, sizeof err);
        fprintf(stderr, "%s: %s%s\n", prog, err, count > 1 ? " (skipped)" : "");
    }
    return kept;
}

static FILE *open_append(const char *path, const char *flag, const char *prog)
{
    FILE *f = NULL;
    if (path && !(f = fopen(path, "a+"))) {
        fprintf(stderr, "%s: cannot open %s %s for appending\n", prog, flag, path);
        exit(EXIT_USAGE);
    }
    return f;
}

static void close_file(FILE *f, const char *flag, const char *path, const char *prog)
{
    if (f && fclose(f) != 0) {
        fprintf(stderr, "%s: closing %s %s failed\n", prog, flag, path);
        exit(EXIT_USAGE);
    }
}

/* Times every shape on every rung; returns the failures (a point whose check, exact check or
 * precision gate failed). */
static int time_shapes(const struct step **rungs, int count, const struct options *o,
                       const struct gpu_info *info, cudaStream_t stream, cublasHandle_t h,
                       struct rng *rng, const char *prog)
{
    struct telemetry *tel = telemetry_open(o->device);
    struct timer t;
    timer_init(&t, stream, info->l2_bytes, EVENT_CAPACITY);
    FILE *csv = open_append(o->csv, "--csv", prog);
    FILE *anchors = open_append(o->anchors_csv, "--anchors", prog);
    struct point_result *res = calloc((size_t)count, sizeof *res);
    if (!res)
        gpu_check_cuda(cudaErrorMemoryAllocation, "calloc(results)", __FILE__, __LINE__);
    int failures = 0;
    if (!o->quiet && o->inputs == FILL_SPREAD)
        printf("timed inputs: random sign, significand and exponent (2^%d..2^%d)\n",
               FILL_SPREAD_EXP_MIN, FILL_SPREAD_EXP_MAX);
    if (!o->quiet) {
        const struct run_info run0 = {info->name, info->cc, rungs[0]->number, rungs[0]->slug};
        if (count > 1)
            report_ladder_header(stdout, &run0);
        else
            report_table_header(stdout, &run0);
    }
    for (int i = 0; i < o->nshapes; i++) {
        bench_point(rungs, count, &o->shapes[i], o, &t, h, tel, rng, res);
        for (int r = 0; r < count; r++) {
            const struct run_info run = {info->name, info->cc, rungs[r]->number, rungs[r]->slug};
            const struct point_result *p = &res[r];
            failures += !(p->pass && p->exact_pass && p->precision_pass);
            if (!o->quiet) {
                if (count > 1)
                    printf("%02d %-26.26s ", rungs[r]->number, rungs[r]->slug);
                report_table_row(stdout, p);
                report_anchor_lines(stdout, p);
                fflush(stdout);
            }
            if (anchors && p->has_anchors &&
                (report_anchors_row(anchors, &run, p) != 0 || fflush(anchors))) {
                fprintf(stderr, "%s: writing %s failed\n", prog, o->anchors_csv);
                exit(EXIT_USAGE);
            }
            if (csv && (report_csv_row(csv, &run, p) != 0 || fflush(csv))) {
                fprintf(stderr, "%s: writing %s failed\n", prog, o->csv);
                exit(EXIT_USAGE);
            }
        }
    }
    close_file(csv, "--csv", o->csv, prog);
    close_file(anchors, "--anchors", o->anchors_csv, prog);
    free(res);
    timer_free(&t);
    telemetry_close(tel);
    return failures;
}

int main(int argc, char **argv)
{
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
    const struct step *rungs[BUILT];
    int count = pick_rungs(&o, prog, rungs);

    struct gpu_info info;
    int rc = gpu_open(o.device, &info, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return rc;
    }
    if ((count = runnable(rungs, count, &o, &info, prog)) == 0)
        return EXIT_UNSUPPORTED;
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
    for (int r = 0; r < count; r++) {
        if (count > 1 && (o.check || (!o.time && o.nshapes > 0)))
            printf("rung %02d %s\n", rungs[r]->number, rungs[r]->slug);
        if (o.check)
            failures += run_check_matrix(rungs[r], h, stream, seed);
        if (!o.time && o.nshapes > 0)
            failures += run_shape_checks(rungs[r], o.shapes, o.nshapes, h, stream, seed, o.quiet);
    }
    if (o.time)
        failures += time_shapes(rungs, count, &o, &info, stream, h, &rng, prog);

    ref_destroy(h);
    CUDA_CHECK(cudaStreamDestroy(stream));
    return failures ? EXIT_CHECK_FAILED : 0;
}
