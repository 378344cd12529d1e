/* test_args.c - the command line: what it accepts, and the one-line errors it gives. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, for the shape files */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../harness/args.h"
#include "../harness/fill.h"
#include "../harness/random_shapes.h"

static struct options opts;
static char err[512];

/* Parses a NULL-terminated list of arguments after the program name. */
static enum args_result parse(const char *first, ...)
{
    char *argv[64] = {"bin/step01"};
    int argc = 1;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 63; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    err[0] = '\0';
    return parse_args(argc, argv, &opts, err, sizeof err);
}

static void defaults_check_then_time_three_sizes(void **state)
{
    (void)state;
    assert_int_equal(parse(NULL), ARGS_OK);
    assert_int_equal(opts.check, 1);
    assert_int_equal(opts.time, 1);
    assert_int_equal(opts.nshapes, 3);
    assert_int_equal(opts.shapes[0].m, 1024);
    assert_int_equal(opts.shapes[2].k, 4096);
    assert_int_equal(opts.reps, 0);
    assert_null(opts.csv);
    assert_true(opts.budget_s == 2.0);
    assert_true(opts.power_s == 0.5);
}

static void inputs_kind_is_parsed(void **state)
{
    (void)state;
    assert_int_equal(parse(NULL), ARGS_OK);
    assert_int_equal(opts.inputs, FILL_UNIFORM);
    assert_int_equal(parse("--inputs", "spread", "--sizes", "64", NULL), ARGS_OK);
    assert_int_equal(opts.inputs, FILL_SPREAD);
    assert_int_equal(parse("--inputs", "spread", "--inputs", "uniform", NULL), ARGS_OK);
    assert_int_equal(opts.inputs, FILL_UNIFORM);
    assert_int_equal(parse("--inputs", "wide", NULL), ARGS_ERROR);
    assert_non_null(strstr(err, "expected uniform or spread"));
    assert_int_equal(parse("--inputs", NULL), ARGS_ERROR);
    assert_non_null(strstr(err, "--inputs needs"));
}

static void anchors_take_a_file(void **state)
{
    (void)state;
    assert_int_equal(parse(NULL), ARGS_OK);
    assert_null(opts.anchors_csv);
    assert_int_equal(parse("--anchors", "a.csv", "--sizes", "64", NULL), ARGS_OK);
    assert_string_equal(opts.anchors_csv, "a.csv");
    assert_int_equal(parse("--anchors", NULL), ARGS_ERROR);
    assert_non_null(strstr(err, "--anchors needs a file name"));
    assert_int_equal(parse("--anchors", "", NULL), ARGS_ERROR);
    assert_int_equal(parse("--anchors", "a.csv", "--no-time", "--sizes", "64", NULL), ARGS_ERROR);
    assert_non_null(strstr(err, "not with --no-time"));
    assert_int_equal(parse("--anchors", "a.csv", "--csv", "a.csv", NULL), ARGS_ERROR);
    assert_non_null(strstr(err, "name the same file"));
}

static void sizes_and_mnk_accumulate(void **state)
{
    (void)state;
    assert_int_equal(parse("--sizes", "128,256", "--mnk", "7,9,11", "--mnk", "1,2,3", NULL), ARGS_OK);
    assert_int_equal(opts.nshapes, 4);
    assert_int_equal(opts.shapes[1].n, 256);
    assert_int_equal(opts.shapes[2].m, 7);
    assert_int_equal(opts.shapes[2].n, 9);
    assert_int_equal(opts.shapes[2].k, 11);
    assert_int_equal(opts.shapes[3].k, 3);
}

static void sweep_is_inclusive(void **state)
{
    (void)state;
    assert_int_equal(parse("--sweep", "256:1024:256", NULL), ARGS_OK);
    assert_int_equal(opts.nshapes, 4);
    assert_int_equal(opts.shapes[3].m, 1024);
    assert_int_equal(parse("--sweep", "100:350:100", NULL), ARGS_OK);
    assert_int_equal(opts.nshapes, 3); /* 100, 200, 300 */
}

static void check_alone_does_not_time(void **state)
{
    (void)state;
    assert_int_equal(parse("--check", NULL), ARGS_OK);
    assert_int_equal(opts.check, 1);
    assert_int_equal(opts.time, 0);
    assert_int_equal(parse("--check", "--sizes", "512", NULL), ARGS_OK);
    assert_int_equal(opts.time, 1);
    assert_int_equal(parse("--no-check", NULL), ARGS_OK);
    assert_int_equal(opts.check, 0);
    assert_int_equal(opts.nshapes, 3);
}

static void no_time_verifies_given_shapes(void **state)
{
    (void)state;
    assert_int_equal(parse("--no-check", "--no-time", "--mnk", "67,45,33", NULL), ARGS_OK);
    assert_int_equal(opts.time, 0);
    assert_int_equal(opts.check, 0);
    assert_int_equal(opts.nshapes, 1);
    assert_int_equal(parse("--no-check", "--no-time", NULL), ARGS_ERROR);
    assert_non_null(strstr(err, "nothing to do"));
}

static void values_are_parsed(void **state)
{
    (void)state;
    assert_int_equal(parse("--reps", "25", "--budget", "0.5", "--csv", "out.csv", "--device", "1",
                           "--quiet", "--power", "0", NULL), ARGS_OK);
    assert_true(opts.power_s == 0.0);
    assert_int_equal(opts.reps, 25);
    assert_true(opts.budget_s == 0.5);
    assert_string_equal(opts.csv, "out.csv");
    assert_int_equal(opts.device, 1);
    assert_int_equal(opts.quiet, 1);
}

static void help_is_not_an_error(void **state)
{
    (void)state;
    assert_int_equal(parse("--help", NULL), ARGS_HELP);
    assert_int_equal(parse("-h", NULL), ARGS_HELP);
}

/* Each bad input gives ARGS_ERROR and a message naming what is wrong. */
static void expect_error(const char *needle, const char *a, const char *b)
{
    assert_int_equal(parse(a, b, NULL), ARGS_ERROR);
    if (!strstr(err, needle))
        fail_msg("error '%s' does not mention '%s'", err, needle);
}

static void bad_input_is_rejected_with_a_message(void **state)
{
    (void)state;
    expect_error("unknown argument '--fast'", "--fast", NULL);
    expect_error("--sizes", "--sizes", NULL);
    expect_error("--sizes '12x'", "--sizes", "12x");
    expect_error("--sizes '0'", "--sizes", "0");
    expect_error("--sizes '-5'", "--sizes", "-5");
    expect_error("--sizes '1024,'", "--sizes", "1024,");
    expect_error("--sizes '99999999999'", "--sizes", "99999999999");
    expect_error("--mnk '1,2'", "--mnk", "1,2");
    expect_error("--mnk '1,2,3,4'", "--mnk", "1,2,3,4");
    expect_error("--sweep '512:256:64'", "--sweep", "512:256:64");
    expect_error("--sweep '1:10:0'", "--sweep", "1:10:0");
    expect_error("--reps", "--reps", "0");
    expect_error("--reps", "--reps", "many");
    expect_error("--budget '-1'", "--budget", "-1");
    expect_error("--budget 'nan'", "--budget", "nan");
    expect_error("--device", "--device", "-1");
    expect_error("--power '-2'", "--power", "-2");
    expect_error("--csv", "--csv", "");
}

static void too_many_points_is_an_error(void **state)
{
    (void)state;
    assert_int_equal(parse("--sweep", "1:60000:1", NULL), ARGS_ERROR);
    assert_non_null(strstr(err, "more than"));
}

/* ---- shape files (--shapes FILE) */

/* The shipped set, read from the repository root (where make host-tests runs the tests). */
#define DEFAULT_SET "shapes/default.txt"

static char shape_path[64];

/* Writes `len` bytes of `text` to a new temporary file, named in shape_path. */
static const char *shape_file_n(const char *text, size_t len)
{
    strcpy(shape_path, "/tmp/test_args_shapes.XXXXXX");
    const int fd = mkstemp(shape_path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return shape_path;
}

static const char *shape_file(const char *text) { return shape_file_n(text, strlen(text)); }

static void assert_shape(int i, int m, int n, int k, int lda, int ldb, int ldc)
{
    const struct shape *s = &opts.shapes[i];
    if (s->m != m || s->n != n || s->k != k || s->lda != lda || s->ldb != ldb || s->ldc != ldc)
        fail_msg("shape %d is %d %d %d (ld %d %d %d), expected %d %d %d (ld %d %d %d)", i, s->m, s->n,
                 s->k, s->lda, s->ldb, s->ldc, m, n, k, lda, ldb, ldc);
}

static void shape_file_forms_and_comments(void **state)
{
    (void)state;
    const char *path = shape_file("# a comment line\n"
                                  "\n"
                                  "2048 4096 11008\n"
                                  "   \t  \n"
                                  "\t4095\t4095 4095   # odd, with a comment after it\n"
                                  "64 32 16 pad\n"
                                  "7 9 11 20 10 9\r\n"
                                  "1 1 65536 #no space before the hash\n"
                                  "65536 1 1 pad"); /* no newline at the end */
    assert_int_equal(parse("--no-check", "--shapes", path, NULL), ARGS_OK);
    remove(path);
    assert_int_equal(opts.nshapes, 6);
    assert_shape(0, 2048, 4096, 11008, 11008, 4096, 4096);
    assert_shape(1, 4095, 4095, 4095, 4095, 4095, 4095);
    assert_shape(2, 64, 32, 16, 17, 33, 33);
    assert_shape(3, 7, 9, 11, 20, 10, 9);
    assert_shape(4, 1, 1, 65536, 65536, 1, 1);
    assert_shape(5, 65536, 1, 1, 2, 2, 2);
    assert_int_equal(opts.time, 1);
    assert_int_equal(opts.check, 0);
}

static void shapes_join_the_other_points(void **state)
{
    (void)state;
    const char *path = shape_file("300 200 100 pad\n");
    assert_int_equal(parse("--sizes", "128", "--shapes", path, "--mnk", "5,6,7", "--shapes", path,
                           NULL), ARGS_OK);
    remove(path);
    assert_int_equal(opts.nshapes, 4);
    assert_shape(0, 128, 128, 128, 128, 128, 128);
    assert_shape(1, 300, 200, 100, 101, 201, 201);
    assert_shape(2, 5, 6, 7, 7, 6, 6);
    assert_shape(3, 300, 200, 100, 101, 201, 201);
    /* --shapes with --no-time: the shapes are verified, not timed */
    path = shape_file("33 44 55\n");
    assert_int_equal(parse("--no-check", "--no-time", "--shapes", path, NULL), ARGS_OK);
    remove(path);
    assert_int_equal(opts.nshapes, 1);
    assert_int_equal(opts.time, 0);
}

/* A bad shape file: ARGS_ERROR, and the message is "FILE:LINE: what". */
static void expect_shape_error_n(const char *text, size_t len, int line, const char *what)
{
    const char *path = shape_file_n(text, len);
    char want[256];
    if (line > 0)
        snprintf(want, sizeof want, "%s:%d: %s", path, line, what);
    else
        snprintf(want, sizeof want, "%s: %s", path, what);
    const enum args_result r = parse("--shapes", path, NULL);
    remove(path);
    if (r != ARGS_ERROR)
        fail_msg("shape file \"%s\" was accepted, expected \"%s\"", text, want);
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("error '%s' does not start with '%s'", err, want);
}

static void expect_shape_error(const char *text, int line, const char *what)
{
    expect_shape_error_n(text, strlen(text), line, what);
}

static void bad_shape_files_name_file_and_line(void **state)
{
    (void)state;
    expect_shape_error("1 2\n", 1, "2 fields; expected 'M N K', 'M N K pad' or 'M N K lda ldb ldc'");
    expect_shape_error("# c\n\n1 2 3 4 5\n", 3, "5 fields; expected");
    expect_shape_error("1 2 3\n4 5 6 7 8 9 10\n", 2, "7 fields; expected");
    expect_shape_error("7\n", 1, "1 field; expected");
    expect_shape_error("1 -2 3\n", 1, "N '-2' is not an integer in 1..65536");
    expect_shape_error("0 2 3\n", 1, "M '0' is not an integer in 1..65536");
    expect_shape_error("1 2 65537\n", 1, "K '65537' is not an integer in 1..65536");
    expect_shape_error("99999999999 1 1\n", 1, "M '99999999999' is not an integer in 1..65536");
    expect_shape_error("1.5 2 3\n", 1, "M '1.5' is not an integer");
    expect_shape_error("1 2 x3\n", 1, "K 'x3' is not an integer");
    expect_shape_error("1 2 3 # fine\n1,2,3\n", 2, "1 field; expected");
    expect_shape_error("1 2 3 pads\n", 1, "'pads': a fourth field must be 'pad'");
    expect_shape_error("1 2 3 7\n", 1, "'7': a fourth field must be 'pad'");
    expect_shape_error("4 5 6 5 5 5\n", 1, "lda '5' is not an integer in 6..131072 (lda >= K)");
    expect_shape_error("4 5 6 6 4 5\n", 1, "ldb '4' is not an integer in 5..131072 (ldb >= N)");
    expect_shape_error("4 5 6 6 5 131073\n", 1, "ldc '131073' is not an integer in 5..131072");
    expect_shape_error("4 5 6 6 5 -5\n", 1, "ldc '-5' is not an integer");
    /* an operand spanning more than INT_MAX floats: the leading dimension counts */
    expect_shape_error("1 1 1\n46341 46341 46341\n", 2,
                       "A (M x K = 46341 x 46341, lda 46341) spans 2147488281 floats; an operand "
                       "may span at most INT_MAX = 2147483647 floats");
    expect_shape_error("32769 1 1 65537 1 1\n", 1, "A (M x K = 32769 x 1, lda 65537) spans "
                       "2147516417 floats");
    expect_shape_error("1 1 32769 32769 65537 1\n", 1, "B (K x N = 32769 x 1, ldb 65537) spans");
    expect_shape_error("32769 1 1 1 1 65537\n", 1, "C (M x N = 32769 x 1, ldc 65537) spans");
    /* the largest that fit: 46339 * 46341 + 46340 and 32767 * 65537 + 1 floats */
    const char *path = shape_file("46340 46340 46340 pad\n32768 1 1 65537 1 1\n32769 1 1\n");
    assert_int_equal(parse("--shapes", path, NULL), ARGS_OK);
    remove(path);
    assert_int_equal(opts.nshapes, 3);
}

static void empty_odd_and_oversized_files(void **state)
{
    (void)state;
    expect_shape_error("", 0, "no shapes (every line is blank or a comment)");
    expect_shape_error("# nothing but comments\n\n   \n", 0, "no shapes");

    char line[400];
    memset(line, '1', sizeof line);
    memcpy(line, "1 2 3\n", 6);
    line[sizeof line - 1] = '\n';
    expect_shape_error_n(line, sizeof line, 2, "line longer than 256 characters");
    static const char nul[] = "1 2 3\n4 5\0 6\n";
    expect_shape_error_n(nul, sizeof nul - 1, 2, "a NUL byte (not a text file?)");

    /* one shape more than fits */
    static char many[(MAX_SHAPES + 1) * 6 + 1];
    many[0] = '\0';
    for (int i = 0; i <= MAX_SHAPES; i++)
        strcat(many, "1 2 3\n");
    expect_shape_error(many, MAX_SHAPES + 1, "more than 512 shapes");
}

static void unreadable_shape_files(void **state)
{
    (void)state;
    assert_int_equal(parse("--shapes", "/nonexistent/shapes.txt", NULL), ARGS_ERROR);
    assert_string_equal(err, "--shapes /nonexistent/shapes.txt: cannot open: No such file or directory");
    assert_int_equal(parse("--shapes", "/tmp", NULL), ARGS_ERROR);
    assert_string_equal(err, "/tmp:1: read error: Is a directory");
    assert_int_equal(parse("--shapes", NULL), ARGS_ERROR);
    assert_non_null(strstr(err, "--shapes needs a file"));
    /* parsed in order: a bad file before --help is still an error (sweep.sh relies on it) */
    const char *path = shape_file("1 2\n");
    assert_int_equal(parse("--shapes", path, "--help", NULL), ARGS_ERROR);
    remove(path);
    path = shape_file("1 2 3\n");
    assert_int_equal(parse("--shapes", path, "--help", NULL), ARGS_HELP);
    remove(path);
}

/* Index of the shape m x n x k with these leading dimensions in opts, or -1. */
static int find_shape(int m, int n, int k, int lda, int ldb, int ldc)
{
    for (int i = 0; i < opts.nshapes; i++) {
        const struct shape *s = &opts.shapes[i];
        if (s->m == m && s->n == n && s->k == k && s->lda == lda && s->ldb == ldb && s->ldc == ldc)
            return i;
    }
    return -1;
}

static void expect_in_default_set(int m, int n, int k, int lda, int ldb, int ldc)
{
    if (find_shape(m, n, k, lda, ldb, ldc) < 0)
        fail_msg("%s has no %d x %d x %d (ld %d %d %d)", DEFAULT_SET, m, n, k, lda, ldb, ldc);
}

static void default_set_covers_the_cases(void **state)
{
    (void)state;
    if (parse("--no-check", "--shapes", DEFAULT_SET, NULL) != ARGS_OK)
        fail_msg("%s (run from the repository root): %s", DEFAULT_SET, err);
    assert_int_equal(opts.nshapes, 16);
    /* LLM layers */
    expect_in_default_set(2048, 4096, 4096, 4096, 4096, 4096);
    expect_in_default_set(2048, 4096, 11008, 11008, 4096, 4096);
    expect_in_default_set(2048, 11008, 4096, 4096, 11008, 11008);
    expect_in_default_set(2048, 11008, 11008, 11008, 11008, 11008);
    /* skinny */
    expect_in_default_set(128, 4096, 4096, 4096, 4096, 4096);
    expect_in_default_set(512, 4096, 4096, 4096, 4096, 4096);
    expect_in_default_set(4096, 128, 4096, 4096, 128, 128);
    expect_in_default_set(4096, 512, 4096, 4096, 512, 512);
    /* shallow */
    expect_in_default_set(4096, 4096, 128, 128, 4096, 4096);
    /* deep, up to K = 65536 */
    expect_in_default_set(256, 256, 16384, 16384, 256, 256);
    expect_in_default_set(256, 256, 65536, 65536, 256, 256);
    expect_in_default_set(1024, 1024, 16384, 16384, 1024, 1024);
    expect_in_default_set(1024, 1024, 65536, 65536, 1024, 1024);
    /* odd */
    expect_in_default_set(4095, 4095, 4095, 4095, 4095, 4095);
    expect_in_default_set(4097, 4097, 4097, 4097, 4097, 4097);
    /* padded: ld = n + 1 */
    expect_in_default_set(4096, 4096, 4096, 4097, 4097, 4097);

    /* cheap enough to time beside cuBLAS in seconds: under 2 TFLOP a pass */
    double flop = 0;
    for (int i = 0; i < opts.nshapes; i++)
        flop += 2.0 * opts.shapes[i].m * opts.shapes[i].n * opts.shapes[i].k;
    assert_true(flop < 2e12);
}

/* ---- operands the contract refuses: more than INT_MAX floats in one operand */

/* ARGS_ERROR with exactly `want` as the message. */
static void expect_refused(const char *want, const char *a, const char *b)
{
    assert_int_equal(parse(a, b, NULL), ARGS_ERROR);
    assert_string_equal(err, want);
}

static void operand_span_is_refused_at_parse_time(void **state)
{
    (void)state;
    /* 46340^2 = 2147395600 <= INT_MAX < 46341^2 = 2147488281 */
    assert_int_equal(parse("--sizes", "46340", NULL), ARGS_OK);
    assert_shape(0, 46340, 46340, 46340, 46340, 46340, 46340);
    expect_refused("--sizes 46341: A (M x K = 46341 x 46341, lda 46341) spans 2147488281 floats; "
                   "an operand may span at most INT_MAX = 2147483647 floats "
                   "((rows - 1) * ld + cols)", "--sizes", "46341");
    /* the first size too large is named, wherever it is in the list */
    expect_error("--sizes 50000: A (M x K = 50000 x 50000", "--sizes", "1024,50000,46341");
    assert_int_equal(parse("--sweep", "46000:46340:340", NULL), ARGS_OK);
    assert_int_equal(opts.nshapes, 2);
    expect_error("--sweep '46000:46341:341': size 46341: A (M x K = 46341 x 46341", "--sweep",
                 "46000:46341:341");
    expect_error("INT_MAX = 2147483647", "--sweep", "65536:65536:1");

    /* --mnk: each operand on its own (A is M x K, B is K x N, C is M x N, tightly packed) */
    assert_int_equal(parse("--mnk", "65536,1,32767", NULL), ARGS_OK); /* A: 65536 * 32767 */
    assert_int_equal(parse("--mnk", "1,1,65536", "--mnk", "65536,1,1", NULL), ARGS_OK);
    expect_error("--mnk '65536,1,32768': A (M x K = 65536 x 32768, lda 32768) spans 2147483648 "
                 "floats", "--mnk", "65536,1,32768");
    expect_error("--mnk '1,65536,32768': B (K x N = 32768 x 65536, ldb 65536) spans 2147483648 "
                 "floats", "--mnk", "1,65536,32768");
    expect_error("--mnk '32768,65536,1': C (M x N = 32768 x 65536, ldc 65536) spans 2147483648 "
                 "floats", "--mnk", "32768,65536,1");
    expect_error("at most INT_MAX = 2147483647 floats", "--mnk", "46341,46341,46341");
}

static void other_options_pack_tightly(void **state)
{
    (void)state;
    assert_int_equal(parse("--sizes", "96", "--mnk", "3,5,7", "--sweep", "10:10:1", NULL), ARGS_OK);
    assert_shape(0, 96, 96, 96, 96, 96, 96);
    assert_shape(1, 3, 5, 7, 7, 5, 5);
    assert_shape(2, 10, 10, 10, 10, 10, 10);
    assert_int_equal(parse(NULL), ARGS_OK);
    assert_shape(2, 4096, 4096, 4096, 4096, 4096, 4096);
}

/* --random N --seed S: N shapes after the given ones, within the stated ranges, the same for
 * the same seed whatever N, others for another seed; a bad count or a seed alone refused. */
static void random_shapes_are_seeded_and_bounded(void **state)
{
    (void)state;
    static struct shape first[200];
    assert_int_equal(parse("--mnk", "8,8,8", "--random", "200", "--seed", "42", NULL), ARGS_OK);
    assert_int_equal(opts.nshapes, 201);
    assert_int_equal(opts.random, 200);
    assert_true(opts.seed == 42);
    assert_int_equal(opts.shapes[0].m, 8); /* the given shape first */
    assert_int_equal(opts.shapes[0].a_off + opts.shapes[0].b_off + opts.shapes[0].c_off, 0);
    int padded = 0, offset = 0, small = 0, large = 0, capped = 0;
    for (int i = 0; i < 200; i++) {
        const struct shape *r = &opts.shapes[1 + i];
        first[i] = *r;
        const int d[3] = {r->m, r->n, r->k};
        for (int j = 0; j < 3; j++) {
            assert_true(d[j] >= RANDOM_DIM_MIN / 2 && d[j] <= RANDOM_DIM_MAX);
            small |= d[j] < 256;
            large |= d[j] > 4096;
        }
        assert_true((long long)r->m * r->n * r->k <= RANDOM_WORK_MAX);
        capped |= (long long)r->m * r->n * r->k > RANDOM_WORK_MAX / 4;
        assert_true(r->lda >= r->k && r->lda <= r->k + RANDOM_PAD_MAX);
        assert_true(r->ldb >= r->n && r->ldb <= r->n + RANDOM_PAD_MAX);
        assert_true(r->ldc >= r->n && r->ldc <= r->n + RANDOM_PAD_MAX);
        padded |= r->lda % 4 != 0;
        assert_true(r->a_off >= 0 && r->a_off <= RANDOM_OFFSET_MAX);
        assert_true(r->b_off >= 0 && r->b_off <= RANDOM_OFFSET_MAX);
        assert_true(r->c_off >= 0 && r->c_off <= RANDOM_OFFSET_MAX);
        offset |= r->a_off == RANDOM_OFFSET_MAX;
    }
    assert_true(padded && offset && small && large && capped);
    /* the same seed, fewer shapes: the same first ones; another seed: other shapes */
    assert_int_equal(parse("--seed", "42", "--random", "5", NULL), ARGS_OK);
    assert_int_equal(opts.nshapes, 5);
    assert_memory_equal(opts.shapes, first, 5 * sizeof first[0]);
    assert_int_equal(parse("--random", "5", "--seed", "43", NULL), ARGS_OK);
    assert_true(memcmp(opts.shapes, first, 5 * sizeof first[0]) != 0);
    assert_int_equal(parse("--random", "3", NULL), ARGS_OK);
    assert_true(opts.seed == 1);
    assert_int_equal(parse("--random", "0", NULL), ARGS_ERROR);
    assert_non_null(strstr(err, "--random needs a count"));
    assert_int_equal(parse("--random", NULL), ARGS_ERROR);
    assert_int_equal(parse("--seed", "7", NULL), ARGS_ERROR);
    assert_non_null(strstr(err, "give --random N too"));
    assert_int_equal(parse("--random", "2", "--seed", "-3", NULL), ARGS_ERROR);
    assert_int_equal(parse("--random", "2", "--seed", "x", NULL), ARGS_ERROR);
    assert_non_null(strstr(err, "expected a whole number"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_check_then_time_three_sizes),
        cmocka_unit_test(sizes_and_mnk_accumulate),
        cmocka_unit_test(inputs_kind_is_parsed),
        cmocka_unit_test(anchors_take_a_file),
        cmocka_unit_test(sweep_is_inclusive),
        cmocka_unit_test(check_alone_does_not_time),
        cmocka_unit_test(no_time_verifies_given_shapes),
        cmocka_unit_test(values_are_parsed),
        cmocka_unit_test(help_is_not_an_error),
        cmocka_unit_test(bad_input_is_rejected_with_a_message),
        cmocka_unit_test(too_many_points_is_an_error),
        cmocka_unit_test(operand_span_is_refused_at_parse_time),
        cmocka_unit_test(shape_file_forms_and_comments),
        cmocka_unit_test(shapes_join_the_other_points),
        cmocka_unit_test(bad_shape_files_name_file_and_line),
        cmocka_unit_test(empty_odd_and_oversized_files),
        cmocka_unit_test(unreadable_shape_files),
        cmocka_unit_test(default_set_covers_the_cases),
        cmocka_unit_test(other_options_pack_tightly),
        cmocka_unit_test(random_shapes_are_seeded_and_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
