/*
 * test_gpu_startup.c - the exit code and message of a failed CUDA start-up (cmocka), no GPU
 * needed: exit 77 (a skip) only for "no CUDA device", exit 3 for every other start-up
 * error, both versions named for a driver older than the runtime, and messages that
 * tests/gpu_tests.sh can tell apart.
 *
 * harness/gpu_startup.c is included rather than linked: the host tests link only the
 * harness objects that need no GPU library, and this file needs none but the CUDA runtime's
 * error names (libcudart_static, which the host tests link).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../harness/gpu_startup.c"

static char msg[512];

static void assert_has(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        fail_msg("'%s' does not contain '%s'", text, needle);
}

static void assert_lacks(const char *text, const char *needle)
{
    if (strstr(text, needle) != NULL)
        fail_msg("'%s' contains '%s'", text, needle);
}

static void a_device_starts(void **state)
{
    (void)state;
    assert_int_equal(gpu_startup_exit(cudaSuccess, 1), 0);
    assert_int_equal(gpu_startup_exit(cudaSuccess, 8), 0);
}

static void no_device_is_the_only_skip(void **state)
{
    (void)state;
    assert_int_equal(gpu_startup_exit(cudaErrorNoDevice, 0), EXIT_UNSUPPORTED);
    assert_int_equal(EXIT_UNSUPPORTED, 77);
    assert_int_equal(EXIT_CUDA, 3);
    /* every other runtime error, the driver's own among them, is exit 3 */
    static const cudaError_t named[] = {
        cudaErrorInsufficientDriver, cudaErrorInitializationError, cudaErrorSystemDriverMismatch,
        cudaErrorCompatNotSupportedOnDevice, cudaErrorDevicesUnavailable, cudaErrorNotPermitted,
        cudaErrorSystemNotReady, cudaErrorOperatingSystem, cudaErrorUnknown,
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (gpu_startup_exit(named[i], 0) != EXIT_CUDA || gpu_startup_exit(named[i], 1) != EXIT_CUDA)
            fail_msg("%s is not exit 3", cudaGetErrorName(named[i]));
    for (int e = 1; e <= (int)cudaErrorUnknown; e++)
        if (e != (int)cudaErrorNoDevice && gpu_startup_exit((cudaError_t)e, 0) != EXIT_CUDA)
            fail_msg("error %d (%s) is not exit 3", e, cudaGetErrorName((cudaError_t)e));
    /* a success that counts no device is not trusted as "no GPU" either */
    assert_int_equal(gpu_startup_exit(cudaSuccess, 0), EXIT_CUDA);
    assert_int_equal(gpu_startup_exit(cudaSuccess, -1), EXIT_CUDA);
}

static void no_device_message(void **state)
{
    (void)state;
    gpu_startup_message(cudaErrorNoDevice, 0, 13000, 13000, msg, sizeof msg);
    assert_int_equal(strncmp(msg, GPU_NO_DEVICE_TEXT ": ", strlen(GPU_NO_DEVICE_TEXT) + 2), 0);
    assert_has(msg, "cudaErrorNoDevice");
    assert_lacks(msg, GPU_BELOW_CC_TEXT);
}

static void old_driver_names_both_versions(void **state)
{
    (void)state;
    gpu_startup_message(cudaErrorInsufficientDriver, 0, 12020, 13000, msg, sizeof msg);
    assert_has(msg, "CUDA did not start");
    assert_has(msg, "driver is older than the runtime");
    assert_has(msg, "driver: CUDA 12.2");
    assert_has(msg, "runtime: CUDA 13.0");
    assert_has(msg, "cudaErrorInsufficientDriver");
    assert_has(msg, cudaGetErrorString(cudaErrorInsufficientDriver));
    assert_lacks(msg, GPU_NO_DEVICE_TEXT);

    gpu_startup_message(cudaErrorInsufficientDriver, 0, 11080, 12090, msg, sizeof msg);
    assert_has(msg, "driver: CUDA 11.8");
    assert_has(msg, "runtime: CUDA 12.9");
}

static void no_driver_at_all(void **state)
{
    (void)state;
    /* what the runtime answers where libcuda cannot be loaded (a machine without a driver) */
    gpu_startup_message(cudaErrorInsufficientDriver, 0, 0, 13000, msg, sizeof msg);
    assert_has(msg, "no CUDA driver is loaded");
    assert_has(msg, "runtime: CUDA 13.0");
    assert_has(msg, "cudaErrorInsufficientDriver");
    assert_lacks(msg, GPU_NO_DEVICE_TEXT);
}

static void other_errors_carry_the_runtime_message(void **state)
{
    (void)state;
    gpu_startup_message(cudaErrorInitializationError, 0, 13000, 13000, msg, sizeof msg);
    assert_has(msg, "CUDA did not start");
    assert_has(msg, "cudaErrorInitializationError");
    assert_has(msg, cudaGetErrorString(cudaErrorInitializationError));
    assert_lacks(msg, GPU_NO_DEVICE_TEXT);
    gpu_startup_message(cudaErrorUnknown, 0, -1, 13000, msg, sizeof msg);
    assert_has(msg, "driver: unknown");
    assert_has(msg, "cudaErrorUnknown");
    gpu_startup_message(cudaSuccess, 0, 13000, 13000, msg, sizeof msg);
    assert_has(msg, "counts 0 devices");
    assert_lacks(msg, GPU_NO_DEVICE_TEXT);
}

static void below_cc_message(void **state)
{
    (void)state;
    gpu_below_cc_message(14, "cluster_split", 90, 0, "NVIDIA A100-SXM4-80GB", 80, msg, sizeof msg);
    assert_string_equal(msg, "rung 14 (cluster_split) needs compute capability 9.0; "
                             "device 0 (NVIDIA A100-SXM4-80GB) is 8.0");
    assert_has(msg, GPU_BELOW_CC_TEXT);
    assert_lacks(msg, GPU_NO_DEVICE_TEXT);
}

static void short_buffers_are_cut_not_overrun(void **state)
{
    (void)state;
    char small[16];
    volatile size_t len = sizeof small; /* not a constant: the compiler would warn of the cut */
    gpu_startup_message(cudaErrorInsufficientDriver, 0, 12020, 13000, small, len);
    assert_int_equal(strlen(small), sizeof small - 1);
    gpu_below_cc_message(14, "cluster_split", 90, 0, "GPU", 80, small, len);
    assert_int_equal(strlen(small), sizeof small - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_device_starts),
        cmocka_unit_test(no_device_is_the_only_skip),
        cmocka_unit_test(no_device_message),
        cmocka_unit_test(old_driver_names_both_versions),
        cmocka_unit_test(no_driver_at_all),
        cmocka_unit_test(other_errors_carry_the_runtime_message),
        cmocka_unit_test(below_cc_message),
        cmocka_unit_test(short_buffers_are_cut_not_overrun),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
