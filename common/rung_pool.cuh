/*
 * rung_pool.cuh - a rung's own memory pool on each device, for what it queues before the
 * product (rung 26's split B, rung 27's aligned copies): memory in stream order, never while the
 * stream is captured (the caller checks), kept by the pool between launches.
 *
 *   struct rung_pool   a rung's memory pool on one device, made at first use
 *   rung_memory()      memory from it, or given back to it, in stream order
 */
#ifndef SGEMM_LADDER_RUNG_POOL_CUH
#define SGEMM_LADDER_RUNG_POOL_CUH

#include <stdint.h>
#include <string.h>
#include <pthread.h>

#include "device_facts.h" /* SGEMM_MAX_DEVICES, struct sgemm_rung_facts (its lock) */

/* A rung's memory pool on one device (one entry per device, under the rung's facts lock):
 * made at first use, it keeps what is given back, and never makes one stream wait for another's
 * memory. */
struct rung_pool {
    cudaMemPool_t pool; /* NULL until its first use */
    int failed;         /* making it failed: nothing taken from it on this device */
};

/* Memory from the rung's pool on the current device (`pools` has SGEMM_MAX_DEVICES entries,
 * guarded by `table`'s lock), taken (bytes > 0) or given back (bytes == 0) in stream order, in
 * relaxed capture mode (a global capture elsewhere stays valid). */
static cudaError_t rung_memory(struct sgemm_rung_facts *table, struct rung_pool *pools,
                               size_t bytes, void **mem, cudaStream_t stream)
{
    int device = 0;
    cudaError_t err = cudaGetDevice(&device); /* < SGEMM_MAX_DEVICES: sgemm_rung_facts() saw */
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    if (err != cudaSuccess || (err = cudaThreadExchangeStreamCaptureMode(&mode)) != cudaSuccess)
        return err;
    pthread_mutex_lock(&table->lock);
    cudaMemPool_t *pool = &pools[device].pool;
    if (*pool == NULL && !pools[device].failed) {
        cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        uint64_t keep = UINT64_MAX; /* the attribute is a cuuint64_t */
        int no = 0;
        if ((err = cudaMemPoolCreate(pool, &props)) == cudaSuccess &&
            ((err = cudaMemPoolSetAttribute(*pool, cudaMemPoolAttrReleaseThreshold, &keep)) ||
             (err = cudaMemPoolSetAttribute(*pool, cudaMemPoolReuseAllowInternalDependencies,
                                            &no))))
            (void)cudaMemPoolDestroy(*pool);
        pools[device].failed = err != cudaSuccess;
        *pool = err != cudaSuccess ? NULL : *pool;
    }
    const cudaMemPool_t use = *pool;
    pthread_mutex_unlock(&table->lock);
    if (err == cudaSuccess)
        err = !bytes ? cudaFreeAsync(*mem, stream)
              : use  ? cudaMallocFromPoolAsync(mem, bytes, use, stream)
                     : cudaErrorNotSupported;
    const cudaError_t back = cudaThreadExchangeStreamCaptureMode(&mode);
    if (err == cudaSuccess && back != cudaSuccess && bytes) /* (never seen) */
        (void)cudaFreeAsync(*mem, stream);
    return err != cudaSuccess ? err : back;
}

#endif /* SGEMM_LADDER_RUNG_POOL_CUH */
