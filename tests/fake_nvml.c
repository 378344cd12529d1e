/*
 * fake_nvml.c - a stand-in libnvidia-ml for tests/test_telemetry.c.
 *
 * Built as a shared library and loaded by harness/telemetry.c through
 * TELEMETRY_NVML_LIB, it answers the few NVML calls telemetry makes with fixed,
 * known values, so the averaging and the per-GEMM energy can be checked on a
 * machine without a GPU.  It knows one GPU, at PCI bus id FAKE_BUS_ID.
 * FAKE_NVML_INIT_FAIL=1 in the environment makes nvmlInit_v2 fail.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#define FAKE_BUS_ID                 "00000000:17:00.0"
#define NVML_SUCCESS                0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_FOUND        6
#define NVML_ERROR_UNKNOWN          999

#define FAKE_SM_MHZ         1755u
#define FAKE_MEM_MHZ        2619u
#define FAKE_POWER_MW       412500u /* 412.5 W */
#define FAKE_ENERGY_STEP_MJ 700ull  /* each energy query: the counter moved by this much */

struct fake_device {
    int unused;
};
static struct fake_device the_gpu;
static unsigned long long energy_mj = 1000000ull;
static unsigned long long reason_calls;
static int initialised;

int nvmlInit_v2(void)
{
    const char *fail = getenv("FAKE_NVML_INIT_FAIL");
    if (fail != NULL && strcmp(fail, "1") == 0)
        return NVML_ERROR_UNKNOWN;
    initialised++;
    return NVML_SUCCESS;
}

int nvmlShutdown(void)
{
    if (initialised == 0)
        return NVML_ERROR_UNKNOWN;
    initialised--;
    return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, struct fake_device **device)
{
    if (initialised == 0 || bus_id == NULL || device == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strcmp(bus_id, FAKE_BUS_ID) != 0)
        return NVML_ERROR_NOT_FOUND;
    *device = &the_gpu;
    return NVML_SUCCESS;
}

int nvmlDeviceGetClockInfo(struct fake_device *device, int type, unsigned int *mhz)
{
    if (device != &the_gpu || mhz == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (type == 1) {
        *mhz = FAKE_SM_MHZ;
        return NVML_SUCCESS;
    }
    if (type == 2) {
        *mhz = FAKE_MEM_MHZ;
        return NVML_SUCCESS;
    }
    return NVML_ERROR_INVALID_ARGUMENT;
}

int nvmlDeviceGetPowerUsage(struct fake_device *device, unsigned int *mw)
{
    if (device != &the_gpu || mw == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *mw = FAKE_POWER_MW;
    return NVML_SUCCESS;
}

int nvmlDeviceGetTotalEnergyConsumption(struct fake_device *device, unsigned long long *mj)
{
    if (device != &the_gpu || mj == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    energy_mj += FAKE_ENERGY_STEP_MJ;
    *mj = energy_mj;
    return NVML_SUCCESS;
}

/* Alternates two reason bits, so any two consecutive samples OR to 0x5. */
int nvmlDeviceGetCurrentClocksEventReasons(struct fake_device *device, unsigned long long *reasons)
{
    if (device != &the_gpu || reasons == NULL)
        return NVML_ERROR_INVALID_ARGUMENT;
    *reasons = (reason_calls++ % 2 == 0) ? 0x1ull : 0x4ull;
    return NVML_SUCCESS;
}
