/* test_trace.c - SGEMM_TRACE: one line on stderr per call when set (not empty, not "0"),
 * nothing otherwise; the variable is read once per process, so each case runs in a child. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../common/sgemm_common.h"

/* Runs two traced calls in a child with SGEMM_TRACE = value (NULL: unset); returns what the
 * child wrote on stderr in out. */
static void traced_child(const char *value, char *out, size_t len)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        if (value)
            setenv("SGEMM_TRACE", value, 1);
        else
            unsetenv("SGEMM_TRACE");
        sgemm_trace(13, "split-k", 256, 256, 4096, 64, 8);
        sgemm_trace(14, "whole-large", 1, 2, 3, 4, 1);
        _exit(0);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < len && (n = read(fds[0], out + got, len - 1 - got)) > 0)
        got += (size_t)n;
    out[got] = '\0';
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void silent_unless_asked(void **state)
{
    (void)state;
    char out[512];
    traced_child(NULL, out, sizeof out);
    assert_string_equal(out, "");
    traced_child("", out, sizeof out);
    assert_string_equal(out, "");
    traced_child("0", out, sizeof out);
    assert_string_equal(out, "");
}

static void one_line_per_call_when_asked(void **state)
{
    (void)state;
    char out[512];
    traced_child("1", out, sizeof out);
    assert_string_equal(out,
                        "sgemm_trace step=13 path=split-k M=256 N=256 K=4096 blocks=64 slices=8\n"
                        "sgemm_trace step=14 path=whole-large M=1 N=2 K=3 blocks=4 slices=1\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(silent_unless_asked),
        cmocka_unit_test(one_line_per_call_when_asked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
