/* gpu_startup.c - the exit code and message of a failed CUDA start-up (no GPU needed). */
#include "gpu_startup.h"

#include <stdio.h>

int gpu_startup_exit(cudaError_t err, int count)
{
    if (err == cudaErrorNoDevice)
        return EXIT_UNSUPPORTED;
    if (err != cudaSuccess || count < 1)
        return EXIT_CUDA; /* a success that counts no device is not a state to trust */
    return 0;
}

/* "CUDA 12.4" for 12040 into buf; "none" for 0, "unknown" for a negative version. */
static const char *cuda_version(int v, char *buf, size_t len)
{
    if (v < 0)
        snprintf(buf, len, "unknown");
    else if (v == 0)
        snprintf(buf, len, "none");
    else
        snprintf(buf, len, "CUDA %d.%d", v / 1000, (v % 1000) / 10);
    return buf;
}

void gpu_startup_message(cudaError_t err, int count, int driver_version, int runtime_version,
                         char *buf, size_t len)
{
    char drv[32], rt[32];
    cuda_version(driver_version, drv, sizeof drv);
    cuda_version(runtime_version, rt, sizeof rt);
    if (err == cudaErrorNoDevice) {
        snprintf(buf, len, GPU_NO_DEVICE_TEXT ": cudaGetDeviceCount: %s (%s)",
                 cudaGetErrorName(err), cudaGetErrorString(err));
    } else if (err == cudaSuccess) {
        snprintf(buf, len, "CUDA did not start: cudaGetDeviceCount succeeded but counts %d "
                 "devices", count);
    } else if (err == cudaErrorInsufficientDriver && driver_version == 0) {
        snprintf(buf, len, "CUDA did not start: no CUDA driver is loaded (driver: none, "
                 "runtime: %s): cudaGetDeviceCount: %s (%s)", rt, cudaGetErrorName(err),
                 cudaGetErrorString(err));
    } else if (err == cudaErrorInsufficientDriver) {
        snprintf(buf, len, "CUDA did not start: the driver is older than the runtime "
                 "(driver: %s, runtime: %s; update the driver or build with an older "
                 "toolkit): cudaGetDeviceCount: %s (%s)", drv, rt, cudaGetErrorName(err),
                 cudaGetErrorString(err));
    } else {
        snprintf(buf, len, "CUDA did not start (driver: %s, runtime: %s): cudaGetDeviceCount: "
                 "%s (%s)", drv, rt, cudaGetErrorName(err), cudaGetErrorString(err));
    }
}

void gpu_below_cc_message(int rung, const char *slug, int min_cc, int device,
                          const char *gpu_name, int cc, char *buf, size_t len)
{
    /* A short buffer truncates the message (its length is checked, so gcc does not warn) */
    const int n = snprintf(buf, len,
                           "rung %02d (%s) " GPU_BELOW_CC_TEXT " %d.%d; device %d (%s) is %d.%d",
                           rung, slug, min_cc / 10, min_cc % 10, device, gpu_name,
                           cc / 10, cc % 10);
    if (n < 0 && len > 0)
        buf[0] = '\0';
}
