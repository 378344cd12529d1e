/* args.c - parsing and validating the harness's command line. */
#include "args.h"
#include "fill.h"
#include "random_shapes.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIM 65536 /* larger square sizes are certainly not what the user meant */
#define MAX_LD (2 * MAX_DIM) /* leading dimensions in a shape file */

static const int default_sizes[] = {1024, 2048, 4096};

static enum args_result fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return ARGS_ERROR;
}

/* Parses a whole decimal integer in [lo, hi]; returns 0 on success. */
static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (s[0] == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* Parses a whole decimal number of seconds in [lo, hi] (lo excluded when open_lo). */
static int parse_seconds(const char *s, double lo, double hi, int open_lo, double *out)
{
    char *end = NULL;
    errno = 0;
    const double v = strtod(s, &end);
    if (s[0] == '\0' || *end != '\0' || errno != 0 || !(v <= hi) || !(open_lo ? v > lo : v >= lo))
        return -1; /* the comparisons are false for NaN, so NaN is refused */
    *out = v;
    return 0;
}

/* Splits `list` at `sep` into at most `max` integers in [lo, hi]; returns the count or -1. */
static int parse_int_list(const char *list, char sep, int lo, int hi, int *vals, int max)
{
    char buf[4096];
    if (strlen(list) >= sizeof buf)
        return -1;
    strcpy(buf, list);
    int n = 0;
    char *p = buf;
    for (;;) {
        char *q = strchr(p, sep);
        if (q)
            *q = '\0';
        if (n == max || parse_int(p, lo, hi, &vals[n]) != 0)
            return -1;
        n++;
        if (!q)
            return n;
        p = q + 1;
    }
}

/*
 * The contract (common/sgemm_common.cu) refuses an operand that spans more than INT_MAX
 * floats, (rows - 1) * ld + cols, so that the kernels may index with int: A is M x K with
 * lda, B is K x N with ldb, C is M x N with ldc.  The harness refuses such a shape here,
 * before it looks for a GPU, rather than half-way through a run.  The largest square size
 * is 46340 (46341^2 > INT_MAX).
 */
#define MAX_SPAN INT_MAX

/* When an operand of the product spans more than MAX_SPAN floats, describes the first such
 * operand in buf and returns 1; returns 0 when every operand fits. */
static int too_wide(int m, int n, int k, int lda, int ldb, int ldc, char *buf, size_t len)
{
    static const char *const what[3] = {"A (M x K", "B (K x N", "C (M x N"};
    static const char *const ld_name[3] = {"lda", "ldb", "ldc"};
    const int rows[3] = {m, k, m}, cols[3] = {k, n, n}, ld[3] = {lda, ldb, ldc};
    for (int i = 0; i < 3; i++) {
        const long long span = (long long)(rows[i] - 1) * ld[i] + cols[i];
        if (span > MAX_SPAN) {
            snprintf(buf, len, "%s = %d x %d, %s %d) spans %lld floats; an operand may span at "
                     "most INT_MAX = %d floats ((rows - 1) * ld + cols)", what[i], rows[i],
                     cols[i], ld_name[i], ld[i], span, MAX_SPAN);
            return 1;
        }
    }
    return 0;
}

static int add_shape(struct options *o, int m, int n, int k, int lda, int ldb, int ldc)
{
    if (o->nshapes == MAX_SHAPES)
        return -1;
    o->shapes[o->nshapes++] = (struct shape){m, n, k, lda, ldb, ldc, 0, 0, 0};
    return 0;
}

/* A tightly packed M x N x K product: lda = K, ldb = ldc = N. */
static int add_tight(struct options *o, int m, int n, int k)
{
    return add_shape(o, m, n, k, k, n, n);
}

static enum args_result add_squares(struct options *o, const int *sizes, int count, char *err,
                                    size_t errlen)
{
    for (int i = 0; i < count; i++)
        if (add_tight(o, sizes[i], sizes[i], sizes[i]) != 0)
            return fail(err, errlen, "too many sizes (at most %d points)", MAX_SHAPES);
    return ARGS_OK;
}

/*
 * Shape files (--shapes FILE): one product a line, '#' to the end of a line is a comment,
 * blank lines are skipped.  A line is "M N K" (tightly packed), "M N K pad" (lda = K + 1,
 * ldb = ldc = N + 1: rows no longer 16-byte aligned) or "M N K lda ldb ldc".
 */
#define SHAPE_LINE_MAX 256 /* characters in one line, the newline excluded */
#define SHAPE_FIELDS_MAX 6
#define FIELD_SEPARATORS " \t\r\f\v"

enum line_status { LINE_OK, LINE_END, LINE_TOO_LONG, LINE_NUL, LINE_READ_ERROR };

/* Reads one line of f into buf (len bytes), without its newline. */
static enum line_status read_line(FILE *f, char *buf, size_t len)
{
    size_t used = 0;
    int c;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (c == '\0')
            return LINE_NUL;
        if (used + 1 == len)
            return LINE_TOO_LONG;
        buf[used++] = (char)c;
    }
    buf[used] = '\0';
    if (c == EOF && ferror(f))
        return LINE_READ_ERROR;
    return (c == EOF && used == 0) ? LINE_END : LINE_OK;
}

/* Adds the shape on one line (already without its comment); blank lines add nothing. */
static enum args_result shape_line(struct options *o, char *line, const char *path, int lineno,
                                   char *err, size_t errlen)
{
    static const char *const names[SHAPE_FIELDS_MAX] = {"M", "N", "K", "lda", "ldb", "ldc"};
    char *field[SHAPE_FIELDS_MAX];
    int count = 0;
    for (char *t = strtok(line, FIELD_SEPARATORS); t; t = strtok(NULL, FIELD_SEPARATORS)) {
        if (count < SHAPE_FIELDS_MAX)
            field[count] = t;
        count++;
    }
    if (count == 0)
        return ARGS_OK;
    if (count != 3 && count != 4 && count != 6)
        return fail(err, errlen, "%s:%d: %d field%s; expected 'M N K', 'M N K pad' or "
                    "'M N K lda ldb ldc'", path, lineno, count, count == 1 ? "" : "s");

    int v[SHAPE_FIELDS_MAX];
    for (int i = 0; i < 3; i++)
        if (parse_int(field[i], 1, MAX_DIM, &v[i]) != 0)
            return fail(err, errlen, "%s:%d: %s '%.40s' is not an integer in 1..%d", path, lineno,
                        names[i], field[i], MAX_DIM);
    const int tight[3] = {v[2], v[1], v[1]}; /* the smallest lda, ldb, ldc */
    if (count == 3) {
        for (int i = 0; i < 3; i++)
            v[3 + i] = tight[i];
    } else if (count == 4) {
        if (strcmp(field[3], "pad") != 0)
            return fail(err, errlen, "%s:%d: '%.40s': a fourth field must be 'pad' "
                        "(lda = K + 1, ldb = ldc = N + 1)", path, lineno, field[3]);
        for (int i = 0; i < 3; i++)
            v[3 + i] = tight[i] + 1;
    } else {
        for (int i = 0; i < 3; i++)
            if (parse_int(field[3 + i], tight[i], MAX_LD, &v[3 + i]) != 0)
                return fail(err, errlen, "%s:%d: %s '%.40s' is not an integer in %d..%d (%s >= %s)",
                            path, lineno, names[3 + i], field[3 + i], tight[i], MAX_LD,
                            names[3 + i], i == 0 ? "K" : "N");
    }
    char why[256];
    if (too_wide(v[0], v[1], v[2], v[3], v[4], v[5], why, sizeof why))
        return fail(err, errlen, "%s:%d: %s", path, lineno, why);
    if (add_shape(o, v[0], v[1], v[2], v[3], v[4], v[5]) != 0)
        return fail(err, errlen, "%s:%d: more than %d shapes", path, lineno, MAX_SHAPES);
    return ARGS_OK;
}

/* Adds every shape of the file at `path`; the file must hold at least one. */
static enum args_result add_shape_file(struct options *o, const char *path, char *err,
                                       size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(err, errlen, "--shapes %s: cannot open: %s", path, strerror(errno));
    const int before = o->nshapes;
    char line[SHAPE_LINE_MAX + 1];
    enum args_result r = ARGS_OK;
    for (int lineno = 1; r == ARGS_OK; lineno++) {
        const enum line_status s = read_line(f, line, sizeof line);
        if (s == LINE_END)
            break;
        if (s == LINE_TOO_LONG)
            r = fail(err, errlen, "%s:%d: line longer than %d characters", path, lineno,
                     SHAPE_LINE_MAX);
        else if (s == LINE_NUL)
            r = fail(err, errlen, "%s:%d: a NUL byte (not a text file?)", path, lineno);
        else if (s == LINE_READ_ERROR)
            r = fail(err, errlen, "%s:%d: read error: %s", path, lineno, strerror(errno));
        else {
            char *hash = strchr(line, '#');
            if (hash)
                *hash = '\0';
            r = shape_line(o, line, path, lineno, err, errlen);
        }
    }
    fclose(f);
    if (r == ARGS_OK && o->nshapes == before)
        r = fail(err, errlen, "%s: no shapes (every line is blank or a comment)", path);
    return r;
}

/* Flags that take a value; returns it or NULL when it is missing. */
static const char *value_of(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

enum args_result parse_args(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->time = 1;
    o->budget_s = 2.0;
    o->power_s = 0.5;
    int check_flag = -1; /* -1: not given */
    unsigned long long seed = 1;
    int seed_given = 0;
    int sizes[MAX_SHAPES];
    char why[256]; /* what is too large about a shape */

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            return ARGS_HELP;
        } else if (strcmp(a, "--check") == 0) {
            check_flag = 1;
        } else if (strcmp(a, "--no-check") == 0) {
            check_flag = 0;
        } else if (strcmp(a, "--no-time") == 0) {
            o->time = 0;
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
        } else if (strcmp(a, "--sizes") == 0) {
            if (!(v = value_of(argc, argv, &i)))
                return fail(err, errlen, "--sizes needs a list, e.g. --sizes 1024,2048");
            int n = parse_int_list(v, ',', 1, MAX_DIM, sizes, MAX_SHAPES);
            if (n < 0)
                return fail(err, errlen, "--sizes '%s': expected integers 1..%d separated by commas",
                            v, MAX_DIM);
            for (int j = 0; j < n; j++)
                if (too_wide(sizes[j], sizes[j], sizes[j], sizes[j], sizes[j], sizes[j], why,
                             sizeof why))
                    return fail(err, errlen, "--sizes %d: %s", sizes[j], why);
            if (add_squares(o, sizes, n, err, errlen) != ARGS_OK)
                return ARGS_ERROR;
        } else if (strcmp(a, "--sweep") == 0) {
            int r[3];
            if (!(v = value_of(argc, argv, &i)))
                return fail(err, errlen, "--sweep needs FROM:TO:STEP, e.g. --sweep 256:4096:256");
            if (parse_int_list(v, ':', 1, MAX_DIM, r, 3) != 3 || r[0] > r[1])
                return fail(err, errlen, "--sweep '%s': expected FROM:TO:STEP with 1 <= FROM <= TO <= %d, STEP >= 1",
                            v, MAX_DIM);
            for (int s = r[0]; s <= r[1]; s += r[2]) {
                if (too_wide(s, s, s, s, s, s, why, sizeof why))
                    return fail(err, errlen, "--sweep '%s': size %d: %s", v, s, why);
                if (add_tight(o, s, s, s) != 0)
                    return fail(err, errlen, "--sweep '%s': more than %d points", v, MAX_SHAPES);
            }
        } else if (strcmp(a, "--mnk") == 0) {
            int r[3];
            if (!(v = value_of(argc, argv, &i)))
                return fail(err, errlen, "--mnk needs M,N,K, e.g. --mnk 4096,1024,512");
            if (parse_int_list(v, ',', 1, MAX_DIM, r, 3) != 3)
                return fail(err, errlen, "--mnk '%s': expected three integers M,N,K in 1..%d", v, MAX_DIM);
            if (too_wide(r[0], r[1], r[2], r[2], r[1], r[1], why, sizeof why))
                return fail(err, errlen, "--mnk '%s': %s", v, why);
            if (add_tight(o, r[0], r[1], r[2]) != 0)
                return fail(err, errlen, "too many shapes (at most %d points)", MAX_SHAPES);
        } else if (strcmp(a, "--shapes") == 0) {
            if (!(v = value_of(argc, argv, &i)))
                return fail(err, errlen, "--shapes needs a file, e.g. --shapes shapes/default.txt");
            if (add_shape_file(o, v, err, errlen) != ARGS_OK)
                return ARGS_ERROR;
        } else if (strcmp(a, "--random") == 0) {
            if (!(v = value_of(argc, argv, &i)) || parse_int(v, 1, MAX_SHAPES, &o->random) != 0)
                return fail(err, errlen, "--random needs a count of shapes 1..%d", MAX_SHAPES);
        } else if (strcmp(a, "--seed") == 0) {
            char *end = NULL;
            if (!(v = value_of(argc, argv, &i)))
                return fail(err, errlen, "--seed needs a number, e.g. --seed 7");
            errno = 0;
            seed = strtoull(v, &end, 10);
            if (v[0] == '\0' || v[0] == '-' || *end != '\0' || errno != 0)
                return fail(err, errlen, "--seed '%s': expected a whole number 0..2^64-1", v);
            seed_given = 1;
        } else if (strcmp(a, "--steps") == 0) {
            if (!(v = value_of(argc, argv, &i)) ||
                (o->nsteps = parse_int_list(v, ',', 1, MAX_STEPS, o->steps, MAX_STEPS)) < 1)
                return fail(err, errlen, "--steps needs rung numbers 1..%d separated by commas, "
                            "e.g. --steps 1,18,25", MAX_STEPS);
        } else if (strcmp(a, "--reps") == 0) {
            if (!(v = value_of(argc, argv, &i)) || parse_int(v, 1, 1000000, &o->reps) != 0)
                return fail(err, errlen, "--reps needs an integer 1..1000000");
        } else if (strcmp(a, "--budget") == 0) {
            if (!(v = value_of(argc, argv, &i)))
                return fail(err, errlen, "--budget needs seconds, e.g. --budget 0.5");
            if (parse_seconds(v, 0.0, 3600.0, 1, &o->budget_s) != 0)
                return fail(err, errlen, "--budget '%s': expected seconds in (0, 3600]", v);
        } else if (strcmp(a, "--power") == 0) {
            if (!(v = value_of(argc, argv, &i)))
                return fail(err, errlen, "--power needs seconds, e.g. --power 0.5 (0: no power run)");
            if (parse_seconds(v, 0.0, 60.0, 0, &o->power_s) != 0)
                return fail(err, errlen, "--power '%s': expected seconds in [0, 60]", v);
        } else if (strcmp(a, "--inputs") == 0) {
            if (!(v = value_of(argc, argv, &i)))
                return fail(err, errlen, "--inputs needs uniform or spread");
            if (strcmp(v, "uniform") == 0)
                o->inputs = FILL_UNIFORM;
            else if (strcmp(v, "spread") == 0)
                o->inputs = FILL_SPREAD;
            else
                return fail(err, errlen, "--inputs '%s': expected uniform or spread", v);
        } else if (strcmp(a, "--anchors") == 0) {
            if (!(v = value_of(argc, argv, &i)) || v[0] == '\0')
                return fail(err, errlen, "--anchors needs a file name (its CSV rows)");
            o->anchors_csv = v;
        } else if (strcmp(a, "--csv") == 0) {
            if (!(v = value_of(argc, argv, &i)) || v[0] == '\0')
                return fail(err, errlen, "--csv needs a file name");
            o->csv = v;
        } else if (strcmp(a, "--device") == 0) {
            if (!(v = value_of(argc, argv, &i)) || parse_int(v, 0, 1023, &o->device) != 0)
                return fail(err, errlen, "--device needs a device number 0..1023");
        } else {
            return fail(err, errlen, "unknown argument '%s' (try --help)", a);
        }
    }

    if (seed_given && !o->random)
        return fail(err, errlen, "--seed chooses the shapes of --random: give --random N too");
    o->seed = seed;
    for (int j = 0; j < o->random; j++) {
        struct shape r;
        random_shape(seed, j, &r);
        if (o->nshapes == MAX_SHAPES)
            return fail(err, errlen, "--random %d: more than %d shapes in all", o->random,
                        MAX_SHAPES);
        o->shapes[o->nshapes++] = r;
    }
    const int gave_shapes = o->nshapes > 0;
    if (check_flag == 1 && !gave_shapes)
        o->time = 0; /* plain --check: the check matrix alone */
    o->check = (check_flag == -1) ? 1 : check_flag;
    if (!gave_shapes && o->time)
        if (add_squares(o, default_sizes, 3, err, errlen) != ARGS_OK)
            return ARGS_ERROR;
    if (o->anchors_csv && !o->time)
        return fail(err, errlen, "--anchors times references beside the rung: not with --no-time");
    if (o->anchors_csv && o->csv && strcmp(o->anchors_csv, o->csv) == 0)
        return fail(err, errlen, "--anchors and --csv name the same file '%s'", o->csv);
    if (!o->time && !o->check && !gave_shapes)
        return fail(err, errlen, "nothing to do: --no-time and --no-check without "
                    "--sizes/--sweep/--mnk/--shapes");
    return ARGS_OK;
}

void print_usage(const char *prog, void *file)
{
    fprintf((FILE *)file,
            "usage: %s [options]\n"
            "Checks rungs of the SGEMM ladder against cuBLAS, then times them beside cuBLAS:\n"
            "bin/stepNN runs rung NN; bin/ladder every rung, each point's inputs drawn once.\n"
            "\n"
            "  --sizes A,B,...        square sizes to time (default 1024,2048,4096)\n"
            "  --sweep FROM:TO:STEP   square sizes FROM, FROM+STEP, ... up to TO\n"
            "  --mnk M,N,K            one M x N x K shape (repeatable)\n"
            "  --shapes FILE          the shapes in FILE, one a line: M N K, M N K pad\n"
            "                         (lda = K + 1, ldb = ldc = N + 1) or M N K lda ldb ldc;\n"
            "                         # starts a comment (shapes/default.txt: make all-bench's set)\n"
            "  --random N             N random shapes (after the others): M, N, K log-uniform in\n"
            "                         64..16384 (M N K <= 2^35), leading dimensions padded by 0..7\n"
            "                         floats, operands 0..3 floats past an aligned address\n"
            "  --seed S               the random shapes' seed (default 1): the same S, the same shapes\n"
            "  --check                run the correctness check matrix (alone, unless sizes are given)\n"
            "  --no-check             skip the check matrix (it runs by default before timing)\n"
            "  --no-time              verify the given sizes against cuBLAS, do not time them\n"
            "  --reps N               replays per point (default max(10, 800000/size))\n"
            "  --budget SEC           time budget per point and kernel (default 2.0)\n"
            "  --power SEC            run each kernel back to back this long for clocks and power\n"
            "                         (NVML; default 0.5, 0 to skip)\n"
            "  --inputs KIND          the timed inputs, on which the FP64 columns and the precision\n"
            "                         gate measure: uniform in [-1, 1) (default) or spread (random\n"
            "                         sign and significand, exponents 2^-30..2^30)\n"
            "  --csv FILE             append one CSV row per measured point\n"
            "  --anchors FILE         also time cuBLAS TF32 and 3xTF32 composed from cuBLAS at each\n"
            "                         point (Part II's references), one CSV row per point to FILE\n"
            "  --steps A,B,...        the rungs to run, in this order (bin/ladder; default every\n"
            "                         rung it has; bin/stepNN runs its own alone)\n"
            "  --device N             CUDA device to use (default 0)\n"
            "  --quiet                no table on stdout\n"
            "  --help                 this text\n"
            "\n"
            "Every shape: M, N and K in 1..65536, and no operand spanning more than INT_MAX\n"
            "floats, (rows - 1) * ld + cols (square sizes up to 46340).\n"
            "\n"
            "exit: 0 ok, 1 a check failed, 2 bad usage or does not fit, 3 a CUDA error (CUDA\n"
            "      did not start, a driver older than the runtime among them), 77 no CUDA\n"
            "      device or the GPU is below the rung's compute capability\n",
            prog);
}
