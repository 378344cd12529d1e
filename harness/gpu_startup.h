/*
 * gpu_startup.h - what a failed CUDA start-up means: the exit code and the message.
 *
 * Pure functions (no device, no driver needed), so the host tests can hold them to the
 * rule: exit 77 (a skip) only when there is no CUDA device (cudaErrorNoDevice) or the GPU
 * is below the rung's compute capability; any other start-up error is exit 3, with the
 * runtime's message, and for a driver older than the runtime both versions.
 * tests/gpu_tests.sh tells the two skips apart by GPU_BELOW_CC_TEXT: a GPU that nvidia-smi
 * lists but a rung cannot see is a failure there, not a skip.
 */
#ifndef HARNESS_GPU_STARTUP_H
#define HARNESS_GPU_STARTUP_H

#include <stddef.h>
#include <cuda_runtime_api.h>

/* Exit codes shared by the harness (see --help). */
enum { EXIT_CHECK_FAILED = 1, EXIT_USAGE = 2, EXIT_CUDA = 3, EXIT_UNSUPPORTED = 77 };

/* The start of the message for exit 77 with no device, and a phrase of the one for a GPU
 * below the rung's compute capability (tests/gpu_tests.sh matches the latter). */
#define GPU_NO_DEVICE_TEXT "no CUDA device"
#define GPU_BELOW_CC_TEXT  "needs compute capability"

/*
 * The exit code for cudaGetDeviceCount's answer (err, and count when err is cudaSuccess):
 * 0 when there is a device, EXIT_UNSUPPORTED for cudaErrorNoDevice, EXIT_CUDA for any
 * other error and for a success that counts no device.
 */
int gpu_startup_exit(cudaError_t err, int count);

/*
 * One line saying why CUDA did not start, for an (err, count) that gpu_startup_exit does
 * not map to 0.  driver_version and runtime_version are cudaDriverGetVersion's and
 * cudaRuntimeGetVersion's answers (1000*major + 10*minor; 0 for no driver, -1 unknown);
 * they are named for cudaErrorInsufficientDriver.
 */
void gpu_startup_message(cudaError_t err, int count, int driver_version, int runtime_version,
                         char *buf, size_t len);

/* The line for a GPU of compute capability cc (10*major + minor) below the rung's min_cc. */
void gpu_below_cc_message(int rung, const char *slug, int min_cc, int device,
                          const char *gpu_name, int cc, char *buf, size_t len);

#endif
