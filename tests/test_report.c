/* test_report.c - the table and CSV writers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../harness/report.h"

static const struct run_info info = {"NVIDIA H100, 80GB", 90, 5, "blocktiling_2d"};

static struct point_result sample_point(void)
{
    struct point_result p;
    memset(&p, 0, sizeof p);
    p.m = p.n = p.k = 4096;
    p.reps = 195;
    p.rung = (struct stats){2.5, 2.4, 2.3, 2.9, 97};
    p.cublas = (struct stats){2.0, 2.0, 1.9, 2.1, 97};
    p.rel_err = 1.5e-7;
    p.pass = 1;
    p.exact_pass = 1;
    p.err = (struct precision){.max_u = 3.25, .rms = 1.2e-7};
    p.cublas_err = (struct precision){.max_u = 2.5, .rms = 1.1e-7};
    p.seq_err = (struct precision){.max_u = 4.0, .rms = 1.5e-7};
    p.precision_pass = 1;
    return p;
}

/* Reads the whole of f into buf. */
static void slurp(FILE *f, char *buf, size_t len)
{
    rewind(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
}

/* Occurrences of c in s, up to the end of the line. */
static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s && *s != '\n'; s++)
        n += (*s == c);
    return n;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += (*s == '\n');
    return n;
}

static void table_row_shows_speed_ratio_and_verdict(void **state)
{
    (void)state;
    char out[2048];
    FILE *f = tmpfile();
    assert_non_null(f);
    struct point_result p = sample_point();
    report_table_header(f, &info);
    report_table_row(f, &p);
    p.pass = 0;
    p.cut_short = 1;
    report_table_row(f, &p);
    p.pass = 1;
    p.exact_pass = 0;
    report_table_row(f, &p);
    slurp(f, out, sizeof out);
    fclose(f);
    assert_non_null(strstr(out, "rung 05 blocktiling_2d on NVIDIA H100, 80GB (cc 9.0)"));
    assert_non_null(strstr(out, "GFLOP/s"));
    assert_non_null(strstr(out, "54975.6")); /* 2*4096^3 / 2.5 ms */
    assert_non_null(strstr(out, "68719.5")); /* cuBLAS at 2.0 ms */
    assert_non_null(strstr(out, " 0.800 ")); /* ratio */
    assert_non_null(strstr(out, "PASS"));
    assert_non_null(strstr(out, "FAIL"));
    assert_non_null(strstr(out, "cut short"));
    assert_non_null(strstr(out, " PASS    3.25     2.50  1.2e-07  1.1e-07  PASS\n")); /* exact, errors */
    assert_non_null(strstr(out, " PASS    3.25     2.50  1.2e-07  1.1e-07  FAIL  (cut")); /* bound */
    assert_non_null(strstr(out, " FAIL    3.25     2.50  1.2e-07  1.1e-07  PASS  (cut")); /* exact */
}

static void csv_writes_header_once_and_full_rows(void **state)
{
    (void)state;
    char out[4096];
    FILE *f = tmpfile();
    assert_non_null(f);
    struct point_result p = sample_point();
    assert_int_equal(report_csv_row(f, &info, &p), 0);
    p.tel_rung = (struct telemetry_sample){1, 1980.0, 2619.0, 550.5, 12.25, 0x4, 10};
    p.tel_cublas = (struct telemetry_sample){1, 1755.0, 2619.0, 690.0, 14.5, 0, 10};
    assert_int_equal(report_csv_row(f, &info, &p), 0);
    slurp(f, out, sizeof out);
    fclose(f);

    const char *header = report_csv_header();
    assert_int_equal(strncmp(out, header, strlen(header)), 0);
    assert_null(strstr(out + 1, "device,cc")); /* only one header */
    assert_int_equal(count_lines(out), 3);
    const int columns = count_char(header, ',') + 1;
    assert_int_equal(columns, 36);

    const char *row1 = strchr(out, '\n') + 1;
    const char *row2 = strchr(row1, '\n') + 1;
    assert_int_equal(count_char(row1, ','), columns - 1);
    assert_int_equal(count_char(row2, ','), columns - 1);
    const char *lead = "NVIDIA H100 80GB,90,5,blocktiling_2d,4096,4096,4096,195,0,";
    assert_int_equal(strncmp(row1, lead, strlen(lead)), 0);
    /* no telemetry: its eight fields are empty; then exact and the errors against FP64 */
    const char *tail = ",PASS,3.25,1.2e-07,2.5,1.1e-07,4,1.5e-07,PASS\n";
    char want[256];
    snprintf(want, sizeof want, ",PASS,,,,,,,,%s", tail);
    assert_non_null(strstr(row1, want));
    snprintf(want, sizeof want, ",PASS,1980,2619,550.5,12.250,0x4,1755,690.0,14.500%s", tail);
    assert_non_null(strstr(row2, want));
    assert_non_null(strstr(row1, ",0.8000,1.500e-07,"));
}

/* --anchors: two table lines, and an anchors CSV of its own (header once, 16 columns). */
static void anchors_lines_and_rows(void **state)
{
    (void)state;
    char out[4096];
    struct point_result p = sample_point();
    FILE *f = tmpfile();
    assert_non_null(f);
    report_anchor_lines(f, &p); /* none measured: nothing */
    slurp(f, out, sizeof out);
    assert_string_equal(out, "");
    p.has_anchors = 1;
    p.tf32 = (struct stats){0.5, 0.5, 0.49, 0.51, 97};
    p.x3 = (struct stats){1.0, 1.0, 0.99, 1.01, 97};
    p.tf32_err = (struct precision){.max_u = 475.5, .rms = 2.6e-4};
    p.x3_err = (struct precision){.max_u = 15.75, .rms = 9.6e-6};
    report_anchor_lines(f, &p);
    slurp(f, out, sizeof out);
    fclose(f);
    assert_int_equal(count_lines(out), 2);
    assert_non_null(strstr(out, "cuBLAS TF32"));
    assert_non_null(strstr(out, " 4.000x SGEMM  err 475.50 u"));   /* 2.0 ms against 0.5 */
    assert_non_null(strstr(out, " 2.000x SGEMM  err 15.75 u, rms 9.6e-06"));

    f = tmpfile();
    assert_non_null(f);
    assert_int_equal(report_anchors_row(f, &info, &p), 0);
    assert_int_equal(report_anchors_row(f, &info, &p), 0);
    slurp(f, out, sizeof out);
    fclose(f);
    const char *header = report_anchors_header();
    assert_int_equal(strncmp(out, header, strlen(header)), 0);
    assert_int_equal(count_lines(out), 3);
    assert_int_equal(count_char(header, ','), 15);
    const char *row = strchr(out, '\n') + 1;
    assert_int_equal(count_char(row, ','), 15);
    const char *want = "NVIDIA H100 80GB,90,4096,4096,4096,68719.5,2.5,1.1e-07,274877.9,4.0000,"
                       "475.5,0.00026,137439.0,2.0000,15.75,9.6e-06\n";
    assert_int_equal(strncmp(row, want, strlen(want)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_row_shows_speed_ratio_and_verdict),
        cmocka_unit_test(csv_writes_header_once_and_full_rows),
        cmocka_unit_test(anchors_lines_and_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
