/*
 * device_facts.cu - the facts a launcher keeps per device; see device_facts.h.
 */
#include <string.h>

#include "device_facts.h"
#include "sgemm_common.h" /* sgemm_prologue */

static struct sgemm_device devices[SGEMM_MAX_DEVICES];
static unsigned char known[SGEMM_MAX_DEVICES];
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

static cudaError_t ask(int device, struct sgemm_device *d)
{
    int major = 0, minor = 0;
    int *const out[] = {&major, &minor, &d->sms, &d->cooperative, &d->clusters, &d->smem_optin,
                        &d->smem_sm};
    const enum cudaDeviceAttr attr[] = {
        cudaDevAttrComputeCapabilityMajor, cudaDevAttrComputeCapabilityMinor,
        cudaDevAttrMultiProcessorCount,    cudaDevAttrCooperativeLaunch,
        cudaDevAttrClusterLaunch,          cudaDevAttrMaxSharedMemoryPerBlockOptin,
        cudaDevAttrMaxSharedMemoryPerMultiprocessor};
    cudaError_t err = cudaSuccess;
    for (size_t i = 0; i < sizeof attr / sizeof attr[0] && err == cudaSuccess; ++i)
        err = cudaDeviceGetAttribute(out[i], attr[i], device);
    d->device = device;
    d->cc = 10 * major + minor;
    d->sms = d->sms < 1 ? 1 : d->sms;
    return err;
}

extern "C" cudaError_t sgemm_device_facts(struct sgemm_device *out)
{
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    if (device < 0 || device >= SGEMM_MAX_DEVICES)
        return cudaErrorInvalidDevice;
    pthread_mutex_lock(&devices_lock);
    if (!known[device]) {
        err = ask(device, &devices[device]);
        known[device] = (err == cudaSuccess);
    }
    *out = devices[device];
    pthread_mutex_unlock(&devices_lock);
    return err;
}

extern "C" cudaError_t sgemm_rung_facts(struct sgemm_rung_facts *table, struct sgemm_device *dev,
                                        void *entry)
{
    cudaError_t err = sgemm_device_facts(dev);
    if (err != cudaSuccess)
        return err;
    char *mine = (char *)table->entries + (size_t)dev->device * table->size;
    pthread_mutex_lock(&table->lock);
    if (!table->known[dev->device]) {
        err = table->ask(dev, mine);
        table->known[dev->device] = (err == cudaSuccess);
    }
    memcpy(entry, mine, table->size);
    pthread_mutex_unlock(&table->lock);
    return err;
}

extern "C" cudaError_t sgemm_launch_start(int M, int N, int K, float alpha, const float *A,
                                          int lda, const float *B, int ldb, float beta, float *C,
                                          int ldc, cudaStream_t stream,
                                          struct sgemm_rung_facts *table,
                                          struct sgemm_device *dev, void *entry, int *done)
{
    cudaError_t err = sgemm_prologue(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, done);
    if (err != cudaSuccess || *done)
        return err;
    return table ? sgemm_rung_facts(table, dev, entry) : sgemm_device_facts(dev);
}
