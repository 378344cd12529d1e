/*
 * device_facts.h - what a launcher asks of a device once and then keeps, per device and safe
 * from concurrent host threads:
 *   - sgemm_device_facts(): the facts every plan reads (SMs, compute capability, shared memory,
 *     whether cooperative and cluster launches exist), asked of the current device;
 *   - struct sgemm_rung_facts: a rung's own facts (a kernel's opt-in to more shared memory, how
 *     many of its blocks fit at once), made by the rung's `ask` function the first time a host
 *     thread launches on a device, and copied out to every launch after it;
 *   - sgemm_launch_start(): the prologue, then both, as a planned launch begins.
 * Neither does stream work: the first launch on a device may be one that a stream captures.
 * Usable from C and CUDA C (host code).
 */
#ifndef SGEMM_LADDER_DEVICE_FACTS_H
#define SGEMM_LADDER_DEVICE_FACTS_H

#include <pthread.h>
#include <stddef.h>
#include <cuda_runtime.h>

#define SGEMM_MAX_DEVICES 64 /* device numbers 0..63; a launch on a higher one is refused */

#ifdef __cplusplus
extern "C" {
#endif

struct sgemm_device {
    int device;      /* its number, < SGEMM_MAX_DEVICES */
    int cc;          /* compute capability, 10*major+minor */
    int sms;         /* multiprocessors, at least 1 */
    int cooperative; /* cooperative launches (stream-K's co-resident blocks) */
    int clusters;    /* thread block cluster launches (sm_90 on) */
    int smem_optin;  /* shared memory a block may have once its kernel opts in, bytes */
    int smem_sm;     /* shared memory per multiprocessor, bytes */
};

/* *out := the current device's facts, asked once per device. */
cudaError_t sgemm_device_facts(struct sgemm_device *out);

/* A rung's own facts: one entry of `size` bytes per device in `entries`, filled by `ask` once. */
struct sgemm_rung_facts {
    pthread_mutex_t lock; /* also the lock for anything a rung keeps in an entry later */
    unsigned char known[SGEMM_MAX_DEVICES];
    cudaError_t (*ask)(const struct sgemm_device *dev, void *entry);
    size_t size;
    void *entries;
};
/* static struct sgemm_rung_facts table = SGEMM_RUNG_FACTS(entries, ask); with entries an array
 * of SGEMM_MAX_DEVICES structs of the rung's own type. */
#define SGEMM_RUNG_FACTS(entries, ask) \
    {PTHREAD_MUTEX_INITIALIZER, {0}, (ask), sizeof((entries)[0]), (void *)(entries)}

/* What a planned launch does first: sgemm_prologue() (common/sgemm_common.h; *done when it
 * settled the call, or an error when it refused it), then *dev, the current device's facts,
 * and with a table the rung's entry for that device (sgemm_rung_facts(); table NULL: *dev
 * alone). */
cudaError_t sgemm_launch_start(int M, int N, int K, float alpha, const float *A, int lda,
                               const float *B, int ldb, float beta, float *C, int ldc,
                               cudaStream_t stream, struct sgemm_rung_facts *table,
                               struct sgemm_device *dev, void *entry, int *done);

/* *dev := the current device's facts; *entry := the rung's entry for it (asked now if this is
 * the device's first launch of the rung). An error from `ask` is returned, and asked again at
 * the next launch. */
cudaError_t sgemm_rung_facts(struct sgemm_rung_facts *table, struct sgemm_device *dev,
                             void *entry);

#ifdef __cplusplus
}
#endif

#endif /* SGEMM_LADDER_DEVICE_FACTS_H */
