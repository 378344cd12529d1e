/*
 * telemetry.h - GPU clocks, power and energy while a kernel's replays run.
 *
 * The harness brackets the timed replays of one kernel with
 *     telemetry_begin(t);  ... replays ...;  telemetry_end(t, replays, &sample);
 * and writes the averages beside the timing (sm_clock_mhz, power_w, ...), so a
 * reader can tell a slow rung from a GPU that was throttling while it ran.
 *
 * NVML is loaded with dlopen at run time (libnvidia-ml.so.1, or the name in
 * the environment variable TELEMETRY_NVML_LIB, which tests use): the build
 * never needs NVML or a driver.  Without NVML every call is a no-op and every
 * sample comes back with valid == 0.  The CUDA device is matched to the NVML
 * device by PCI bus id (cudaDeviceGetPCIBusId), so CUDA_VISIBLE_DEVICES and
 * NVML's own device order cannot pair the wrong GPUs.
 *
 * A background thread samples every TELEMETRY_PERIOD_MS milliseconds between
 * begin and end; end also takes one sample itself, so even a run shorter than
 * one period has data.
 */
#ifndef SGEMM_LADDER_TELEMETRY_H
#define SGEMM_LADDER_TELEMETRY_H

#ifdef __cplusplus
extern "C" {
#endif

#define TELEMETRY_PERIOD_MS 10

struct telemetry_sample {
    int valid;                   /* 1: NVML answered; the fields below hold data */
    double sm_clock_mhz;         /* mean SM clock over the samples */
    double mem_clock_mhz;        /* mean memory clock */
    double power_w;              /* mean board power */
    double energy_mj;            /* energy per GEMM: energy-counter delta / gemms, or, where the
                                    GPU has no counter, mean power * elapsed time / gemms */
    unsigned long long throttle; /* OR of the clock-event (throttle) reason bits seen */
    int samples;                 /* how many samples were averaged */
};
/* Within a valid sample, a quantity NVML never reported (say, a GPU without a
 * memory clock query) is NaN: print it as an empty CSV field (isfinite()). */

struct telemetry;

struct telemetry *telemetry_open(int cuda_device); /* never NULL; no-op handle without NVML */
int telemetry_available(const struct telemetry *t);
void telemetry_begin(struct telemetry *t); /* starts sampling (background thread) */
void telemetry_end(struct telemetry *t, int gemms, struct telemetry_sample *out);
void telemetry_close(struct telemetry *t); /* safe on a no-op handle */

#ifdef __cplusplus
}
#endif

#endif /* SGEMM_LADDER_TELEMETRY_H */
