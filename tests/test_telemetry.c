/*
 * test_telemetry.c - host tests of harness/telemetry.c (cmocka), no GPU needed.
 *
 * 1. Without NVML (TELEMETRY_NVML_LIB names a library that does not exist, so
 *    the result does not depend on whether this machine has a driver): open
 *    never returns NULL, begin/end give valid == 0 and zeroes, close is safe.
 * 2. With tests/fake_nvml.c built as a shared library: the averages, the
 *    per-GEMM energy (mean power x the run's GPU time / GEMMs, the one definition;
 *    the fake's energy counter moves on every query, so a value taken from it would
 *    show), the OR of the reason bits, device matching by PCI bus id, and a failing
 *    nvmlInit.  The library is TELEMETRY_FAKE_NVML if set, else
 *    libfake_nvml.so beside this test's executable; without it these tests skip.
 *
 * This file defines cudaDeviceGetPCIBusId itself (device 0 sits at the fake
 * GPU's bus id, others fail); that definition wins over libcudart's, so the
 * test links with or without -lcudart_static:
 *     cc -std=c11 -I/usr/local/cuda/include tests/test_telemetry.c harness/telemetry.c \
 *        -lcmocka -ldl -lpthread -lm
 *     cc -std=c11 -shared -fPIC tests/fake_nvml.c -o libfake_nvml.so  (beside the test)
 */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../harness/telemetry.h"

#define FAKE_BUS_ID "00000000:17:00.0" /* must match tests/fake_nvml.c */
#define NO_SUCH_LIB "libtelemetry-test-no-such-nvml.so.1"

cudaError_t cudaDeviceGetPCIBusId(char *bus_id, int len, int device)
{
    if (device != 0 || len < (int)sizeof FAKE_BUS_ID)
        return cudaErrorInvalidDevice;
    memcpy(bus_id, FAKE_BUS_ID, sizeof FAKE_BUS_ID);
    return cudaSuccess;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A sample full of garbage: end must overwrite every field. */
static void poison(struct telemetry_sample *s)
{
    memset(s, 0xA5, sizeof *s);
}

/* ---- without NVML --------------------------------------------------------- */

static int use_missing_nvml(void **state)
{
    (void)state;
    return setenv("TELEMETRY_NVML_LIB", NO_SUCH_LIB, 1);
}

static void open_never_returns_null(void **state)
{
    (void)state;
    for (int device = -1; device < 3; ++device) {
        struct telemetry *t = telemetry_open(device);
        assert_non_null(t);
        assert_int_equal(telemetry_available(t), 0);
        telemetry_close(t);
    }
}

static void begin_end_give_invalid_zeroed_sample(void **state)
{
    (void)state;
    struct telemetry *t = telemetry_open(0);
    struct telemetry_sample s;
    for (int round = 0; round < 3; ++round) {
        poison(&s);
        telemetry_begin(t);
        sleep_ms(5);
        telemetry_end(t, 10, 5.0, &s);
        assert_int_equal(s.valid, 0);
        assert_int_equal(s.samples, 0);
        assert_int_equal(s.throttle, 0);
        assert_true(s.sm_clock_mhz == 0.0 && s.mem_clock_mhz == 0.0);
        assert_true(s.power_w == 0.0 && s.energy_mj == 0.0);
    }
    poison(&s);
    telemetry_end(t, 0, 1.0, &s); /* end without begin, zero gemms */
    assert_int_equal(s.valid, 0);
    telemetry_end(t, 1, 1.0, NULL); /* no output: must not crash */
    telemetry_close(t);
}

static void close_is_safe(void **state)
{
    (void)state;
    telemetry_close(NULL);
    struct telemetry *t = telemetry_open(0);
    telemetry_begin(t); /* closed while "sampling" */
    telemetry_close(t);
    assert_int_equal(telemetry_available(NULL), 0);
}

/* ---- with the fake NVML --------------------------------------------------- */

/* The fake library: $TELEMETRY_FAKE_NVML, else libfake_nvml.so in this executable's folder. */
static const char *find_fake_nvml(void)
{
    static char path[4096];
    const char *env = getenv("TELEMETRY_FAKE_NVML");
    if (env != NULL && env[0] != '\0')
        return env;
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 64);
    if (n <= 0)
        return NULL;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (slash == NULL)
        return NULL;
    strcpy(slash + 1, "libfake_nvml.so");
    return access(path, R_OK) == 0 ? path : NULL;
}

static int use_fake_nvml(void **state)
{
    const char *fake = find_fake_nvml();
    *state = (void *)fake;
    if (fake == NULL)
        return 0; /* the tests skip themselves */
    unsetenv("FAKE_NVML_INIT_FAIL");
    return setenv("TELEMETRY_NVML_LIB", fake, 1);
}

static void skip_without_fake(void **state)
{
    if (*state == NULL) {
        print_message("no libfake_nvml.so beside the test and no TELEMETRY_FAKE_NVML: skipped\n");
        skip();
    }
}

static void fake_averages_and_energy(void **state)
{
    skip_without_fake(state);
    struct telemetry *t = telemetry_open(0);
    assert_non_null(t);
    assert_int_equal(telemetry_available(t), 1);

    struct telemetry_sample s;
    poison(&s);
    telemetry_begin(t);
    sleep_ms(5 * TELEMETRY_PERIOD_MS);
    telemetry_end(t, 7, 70.0, &s); /* 7 GEMMs in 70 ms on the GPU */
    assert_int_equal(s.valid, 1);
    assert_true(s.samples >= 2); /* the thread's first sample and end's own */
    assert_true(fabs(s.sm_clock_mhz - 1755.0) < 1e-9);
    assert_true(fabs(s.mem_clock_mhz - 2619.0) < 1e-9);
    assert_true(fabs(s.power_w - 412.5) < 1e-9);
    assert_true(fabs(s.energy_mj - 4125.0) < 1e-9); /* 412.5 W x 70 ms / 7 GEMMs, in mJ */
    assert_int_equal(s.throttle, 0x5);

    /* a second window starts from zero; gemms <= 0 counts as one */
    poison(&s);
    telemetry_begin(t);
    telemetry_end(t, 0, 2.0, &s);
    assert_int_equal(s.valid, 1);
    assert_true(s.samples >= 1);
    assert_true(fabs(s.energy_mj - 825.0) < 1e-9); /* 412.5 W x 2 ms */

    /* the energy follows the GPU time, not the length of the window around it */
    poison(&s);
    telemetry_begin(t);
    sleep_ms(3 * TELEMETRY_PERIOD_MS);
    telemetry_end(t, 1000, 0.5, &s);
    assert_true(fabs(s.energy_mj - 412.5 * 0.5 / 1000) < 1e-12);
    assert_true(fabs(s.power_w - 412.5) < 1e-9);

    /* a time that is unknown gives no energy (NaN: an empty CSV field), not a guess */
    telemetry_begin(t);
    telemetry_end(t, 3, -1.0, &s);
    assert_int_equal(s.valid, 1);
    assert_true(isnan(s.energy_mj));
    telemetry_begin(t);
    telemetry_end(t, 3, NAN, &s);
    assert_true(isnan(s.energy_mj));
    telemetry_close(t);
}

static void fake_unmatched_device_is_unavailable(void **state)
{
    skip_without_fake(state);
    struct telemetry *t = telemetry_open(1); /* stub: no bus id for device 1 */
    assert_non_null(t);
    assert_int_equal(telemetry_available(t), 0);
    struct telemetry_sample s;
    poison(&s);
    telemetry_begin(t);
    telemetry_end(t, 1, 1.0, &s);
    assert_int_equal(s.valid, 0);
    telemetry_close(t);
}

static void fake_failing_init_is_unavailable(void **state)
{
    skip_without_fake(state);
    setenv("FAKE_NVML_INIT_FAIL", "1", 1);
    struct telemetry *t = telemetry_open(0);
    unsetenv("FAKE_NVML_INIT_FAIL");
    assert_non_null(t);
    assert_int_equal(telemetry_available(t), 0);
    telemetry_close(t);
}

static void fake_open_close_repeatedly(void **state)
{
    skip_without_fake(state);
    struct telemetry *a = telemetry_open(0);
    struct telemetry *b = telemetry_open(0); /* NVML init is reference-counted */
    assert_int_equal(telemetry_available(a), 1);
    assert_int_equal(telemetry_available(b), 1);
    telemetry_begin(a);
    telemetry_close(a); /* closed while sampling */
    struct telemetry_sample s;
    telemetry_begin(b);
    telemetry_end(b, 2, 1.0, &s);
    assert_int_equal(s.valid, 1);
    telemetry_close(b);
}

int main(void)
{
    const struct CMUnitTest without_nvml[] = {
        cmocka_unit_test(open_never_returns_null),
        cmocka_unit_test(begin_end_give_invalid_zeroed_sample),
        cmocka_unit_test(close_is_safe),
    };
    const struct CMUnitTest with_fake_nvml[] = {
        cmocka_unit_test(fake_averages_and_energy),
        cmocka_unit_test(fake_unmatched_device_is_unavailable),
        cmocka_unit_test(fake_failing_init_is_unavailable),
        cmocka_unit_test(fake_open_close_repeatedly),
    };
    int failed =
        cmocka_run_group_tests_name("telemetry without NVML", without_nvml, use_missing_nvml, NULL);
    failed += cmocka_run_group_tests_name("telemetry with a fake NVML", with_fake_nvml,
                                          use_fake_nvml, NULL);
    return failed == 0 ? 0 : 1;
}
