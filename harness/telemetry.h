/*
 * telemetry.h - GPU clocks, power and energy while a kernel's replays run.
 *
 * The harness brackets a back-to-back run of one kernel with
 *     telemetry_begin(t);  ... gemms launches ...;  telemetry_end(t, gemms, ms, &sample);
 * (ms: the run's duration on the GPU, from CUDA events) and writes the averages
 * beside the timing (sm_clock_mhz, power_w, energy_mj, ...), so a reader can tell
 * a slow rung from a GPU that was throttling while it ran.
 *
 * Energy per GEMM has one definition, the one the CSV column energy_mj holds:
 * mean board power x the run's GPU time / gemms (W x ms = mJ).  NVML's energy
 * counter is not read: the column is then the product of two things the CSV
 * shows beside it (power_w and the time per GEMM), whatever the GPU.
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
    double energy_mj;            /* energy per GEMM: power_w * elapsed_ms / gemms */
    unsigned long long throttle; /* OR of the clock-event (throttle) reason bits seen */
    int samples;                 /* how many samples were averaged */
};
/* Within a valid sample, a quantity NVML never reported (say, a GPU without a
 * memory clock query) is NaN: print it as an empty CSV field (isfinite()). */

struct telemetry;

struct telemetry *telemetry_open(int cuda_device); /* never NULL; no-op handle without NVML */
int telemetry_available(const struct telemetry *t);
void telemetry_begin(struct telemetry *t); /* starts sampling (background thread) */
/* Stops sampling and averages the window into *out.  gemms: the launches in the window
 * (below 1 counts as 1); elapsed_ms: their time on the GPU (CUDA events).  energy_mj is
 * NaN when the power or the time is unknown (elapsed_ms NaN or negative). */
void telemetry_end(struct telemetry *t, int gemms, double elapsed_ms,
                   struct telemetry_sample *out);
void telemetry_close(struct telemetry *t); /* safe on a no-op handle */

#ifdef __cplusplus
}
#endif

#endif /* SGEMM_LADDER_TELEMETRY_H */
