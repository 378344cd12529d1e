/*
 * telemetry.c - NVML sampling of clocks and power, loaded at run time; energy per GEMM
 * from them (telemetry.h gives the one definition).
 *
 * Why dlopen: the harness must build and run on machines without a driver or
 * NVML (CI, laptops); there telemetry is simply absent (valid == 0).  We
 * declare the handful of NVML types and signatures we call ourselves, so no
 * nvml.h is needed either.  Every NVML return code is checked: a query that
 * fails is left out of the average instead of counting as zero.
 *
 * Threads: telemetry_begin starts one sampler thread that queries NVML every
 * TELEMETRY_PERIOD_MS (absolute deadlines, so the period does not drift) and
 * adds into accumulators under a mutex; telemetry_end wakes it through a
 * condition variable, joins it, takes one last sample itself and averages.
 * The only state is the handle: the NVML function pointers live in it.
 */
#define _POSIX_C_SOURCE 200809L

#include "telemetry.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the part of the NVML API we use (values from nvml.h) ---------------- */

typedef int nvml_return;                    /* nvmlReturn_t; NVML_SUCCESS is 0 */
typedef struct nvml_device_st *nvml_device; /* nvmlDevice_t: opaque */
#define NVML_SUCCESS   0
#define NVML_CLOCK_SM  1 /* nvmlClockType_t values */
#define NVML_CLOCK_MEM 2

typedef nvml_return (*nvml_init_fn)(void);
typedef nvml_return (*nvml_shutdown_fn)(void);
typedef nvml_return (*nvml_handle_by_pci_fn)(const char *pci_bus_id, nvml_device *device);
typedef nvml_return (*nvml_clock_fn)(nvml_device device, int clock_type, unsigned int *mhz);
typedef nvml_return (*nvml_power_fn)(nvml_device device, unsigned int *milliwatts);
typedef nvml_return (*nvml_reasons_fn)(nvml_device device, unsigned long long *reasons);

#define DEFAULT_NVML_LIB "libnvidia-ml.so.1"
#define PCI_BUS_ID_LEN   32 /* "00000000:65:00.0" plus room; NVML's limit is 32 */

struct telemetry {
    /* NVML, resolved at open; lib == NULL means the no-op handle */
    void *lib;
    nvml_shutdown_fn shutdown;
    nvml_clock_fn clock_info;
    nvml_power_fn power_usage;
    nvml_reasons_fn clock_reasons; /* ClocksEventReasons, or the older ThrottleReasons */
    nvml_device device;

    /* sampler thread */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int thread_running;
    int stop;
    int sync_ready; /* lock and wake were initialised */

    /* accumulators for the current begin..end window (under lock) */
    double sum_sm_mhz, sum_mem_mhz, sum_power_w;
    int n_sm, n_mem, n_power;
    unsigned long long throttle;
    int samples;
};

/* Returned only if calloc fails: every call sees lib == NULL and does nothing. */
static struct telemetry oom_noop_handle;

/* dlsym returns an object pointer; copying its bytes into a function pointer is
 * the POSIX-sanctioned conversion and keeps -Wpedantic quiet. */
static int load_symbol(void *lib, const char *name, void *fn_ptr, size_t fn_size)
{
    void *sym = dlsym(lib, name);
    if (sym == NULL || fn_size != sizeof sym)
        return 0;
    memcpy(fn_ptr, &sym, fn_size);
    return 1;
}
#define LOAD(lib, name, fn) load_symbol((lib), (name), &(fn), sizeof(fn))

static void reset_window(struct telemetry *t)
{
    t->sum_sm_mhz = t->sum_mem_mhz = t->sum_power_w = 0.0;
    t->n_sm = t->n_mem = t->n_power = 0;
    t->throttle = 0;
    t->samples = 0;
}

/* One round of queries.  The NVML calls run outside the lock (they take a few
 * tens of microseconds and NVML is thread-safe); only the sums are locked. */
static void take_sample(struct telemetry *t)
{
    unsigned int sm_mhz = 0, mem_mhz = 0, power_mw = 0;
    unsigned long long reasons = 0;
    const int sm_ok = t->clock_info(t->device, NVML_CLOCK_SM, &sm_mhz) == NVML_SUCCESS;
    const int mem_ok = t->clock_info(t->device, NVML_CLOCK_MEM, &mem_mhz) == NVML_SUCCESS;
    const int power_ok = t->power_usage(t->device, &power_mw) == NVML_SUCCESS;
    const int reasons_ok =
        t->clock_reasons != NULL && t->clock_reasons(t->device, &reasons) == NVML_SUCCESS;

    pthread_mutex_lock(&t->lock);
    if (sm_ok) {
        t->sum_sm_mhz += sm_mhz;
        t->n_sm++;
    }
    if (mem_ok) {
        t->sum_mem_mhz += mem_mhz;
        t->n_mem++;
    }
    if (power_ok) {
        t->sum_power_w += power_mw * 1e-3;
        t->n_power++;
    }
    if (reasons_ok)
        t->throttle |= reasons;
    if (sm_ok || mem_ok || power_ok || reasons_ok)
        t->samples++;
    pthread_mutex_unlock(&t->lock);
}

static void add_ms(struct timespec *ts, long ms)
{
    ts->tv_nsec += ms * 1000000L;
    while (ts->tv_nsec >= 1000000000L) {
        ts->tv_nsec -= 1000000000L;
        ts->tv_sec++;
    }
}

static void *sampler_main(void *arg)
{
    struct telemetry *t = arg;
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    for (;;) {
        take_sample(t);
        add_ms(&deadline, TELEMETRY_PERIOD_MS);
        pthread_mutex_lock(&t->lock);
        while (!t->stop && pthread_cond_timedwait(&t->wake, &t->lock, &deadline) == 0)
            ; /* woken early without stop (spurious): wait on for the deadline */
        const int stop = t->stop;
        pthread_mutex_unlock(&t->lock);
        if (stop)
            return NULL;
    }
}

static void stop_sampler(struct telemetry *t)
{
    if (!t->thread_running)
        return;
    pthread_mutex_lock(&t->lock);
    t->stop = 1;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    t->thread_running = 0;
}

static int init_sync(struct telemetry *t)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return 0;
    /* deadlines on the monotonic clock: a wall-clock step cannot stall the sampler */
    int ok = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 &&
             pthread_cond_init(&t->wake, &attr) == 0;
    pthread_condattr_destroy(&attr);
    if (!ok)
        return 0;
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        pthread_cond_destroy(&t->wake);
        return 0;
    }
    t->sync_ready = 1;
    return 1;
}

/* Load NVML and find the CUDA device's NVML handle; on any failure leave
 * t->lib NULL (the no-op handle) with nothing loaded or initialised. */
static void connect_nvml(struct telemetry *t, int cuda_device)
{
    const char *name = getenv("TELEMETRY_NVML_LIB");
    if (name == NULL || name[0] == '\0')
        name = DEFAULT_NVML_LIB;
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL)
        return;

    nvml_init_fn init = NULL;
    nvml_handle_by_pci_fn by_pci = NULL;
    if (!LOAD(lib, "nvmlInit_v2", init) || !LOAD(lib, "nvmlShutdown", t->shutdown) ||
        !LOAD(lib, "nvmlDeviceGetHandleByPciBusId_v2", by_pci) ||
        !LOAD(lib, "nvmlDeviceGetClockInfo", t->clock_info) ||
        !LOAD(lib, "nvmlDeviceGetPowerUsage", t->power_usage)) {
        dlclose(lib);
        return;
    }
    if (init() != NVML_SUCCESS) {
        dlclose(lib);
        return;
    }

    char bus_id[PCI_BUS_ID_LEN] = {0};
    if (cudaDeviceGetPCIBusId(bus_id, (int)sizeof bus_id, cuda_device) != cudaSuccess ||
        by_pci(bus_id, &t->device) != NVML_SUCCESS || !init_sync(t)) {
        t->shutdown();
        dlclose(lib);
        return;
    }

    /* Optional queries: keep them only if this GPU answers them. */
    unsigned long long probe = 0;
    if (!LOAD(lib, "nvmlDeviceGetCurrentClocksEventReasons", t->clock_reasons) ||
        t->clock_reasons(t->device, &probe) != NVML_SUCCESS) {
        if (!LOAD(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", t->clock_reasons) ||
            t->clock_reasons(t->device, &probe) != NVML_SUCCESS)
            t->clock_reasons = NULL;
    }
    t->lib = lib;
}

struct telemetry *telemetry_open(int cuda_device)
{
    struct telemetry *t = calloc(1, sizeof *t);
    if (t == NULL)
        return &oom_noop_handle;
    connect_nvml(t, cuda_device);
    return t;
}

int telemetry_available(const struct telemetry *t)
{
    return t != NULL && t->lib != NULL;
}

void telemetry_begin(struct telemetry *t)
{
    if (!telemetry_available(t))
        return;
    stop_sampler(t); /* a begin without its end: drop the old window */
    reset_window(t);
    t->stop = 0;
    /* If the thread cannot start, end() still takes its one sample. */
    t->thread_running = pthread_create(&t->thread, NULL, sampler_main, t) == 0;
}

static double mean_or_nan(double sum, int n)
{
    return n > 0 ? sum / n : NAN;
}

void telemetry_end(struct telemetry *t, int gemms, double elapsed_ms,
                   struct telemetry_sample *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    if (!telemetry_available(t))
        return;
    stop_sampler(t);
    take_sample(t); /* the last moments of the window, and all of a very short one */

    out->samples = t->samples;
    out->valid = t->samples > 0;
    out->sm_clock_mhz = mean_or_nan(t->sum_sm_mhz, t->n_sm);
    out->mem_clock_mhz = mean_or_nan(t->sum_mem_mhz, t->n_mem);
    out->power_w = mean_or_nan(t->sum_power_w, t->n_power);
    out->throttle = t->throttle;
    /* mean power (W) times the time per GEMM (ms) is mJ; NaN power stays NaN */
    out->energy_mj = (elapsed_ms >= 0.0) ? out->power_w * elapsed_ms / (gemms > 0 ? gemms : 1)
                                         : NAN; /* a negative or NaN time: unknown */
}

void telemetry_close(struct telemetry *t)
{
    if (t == NULL || t == &oom_noop_handle)
        return;
    if (t->lib != NULL) {
        stop_sampler(t);
        t->shutdown();
        dlclose(t->lib);
    }
    if (t->sync_ready) {
        pthread_mutex_destroy(&t->lock);
        pthread_cond_destroy(&t->wake);
    }
    free(t);
}
