/* test_args.c - the command line: what it accepts, and the one-line errors it gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../harness/args.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_check_then_time_three_sizes),
        cmocka_unit_test(sizes_and_mnk_accumulate),
        cmocka_unit_test(sweep_is_inclusive),
        cmocka_unit_test(check_alone_does_not_time),
        cmocka_unit_test(no_time_verifies_given_shapes),
        cmocka_unit_test(values_are_parsed),
        cmocka_unit_test(help_is_not_an_error),
        cmocka_unit_test(bad_input_is_rejected_with_a_message),
        cmocka_unit_test(too_many_points_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
