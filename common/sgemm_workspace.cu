/*
 * sgemm_workspace.cu - one workspace per (device, stream); see sgemm_workspace.h.
 */
#include <pthread.h>

#include "sgemm_workspace.h"

#define MAX_WORKSPACES 64

struct workspace {
    int used, device;
    /* cudaStreamGetId: unique for the life of the process, so a destroyed stream's handle
     * reused by a new stream, and each thread's default stream (cudaStreamPerThread, or 0 in
     * a --default-stream per-thread build), each get a workspace of their own. */
    unsigned long long stream_id;
    void *base;
    size_t bytes;
};
static struct workspace workspaces[MAX_WORKSPACES];
static pthread_mutex_t workspace_lock = PTHREAD_MUTEX_INITIALIZER;

/* With workspace_lock held: a new workspace in `ws`; *made := 0 when there is no memory for
 * one (not an error: the rung takes a plan that needs none). */
static cudaError_t make_workspace(struct workspace *ws, cudaStream_t stream, size_t bytes,
                                  int *made)
{
    *made = 0;
    /* Relaxed: a global-mode capture in another thread must not fail for this cudaMalloc. */
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaError_t err = cudaThreadExchangeStreamCaptureMode(&mode);
    if (err != cudaSuccess)
        return err;
    err = cudaMalloc(&ws->base, bytes);
    const cudaError_t back = cudaThreadExchangeStreamCaptureMode(&mode);
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError(); /* not sticky: whole tiles instead */
        return back;
    }
    if (err == cudaSuccess)
        err = back;
    if (err == cudaSuccess)
        err = cudaMemsetAsync(ws->base, 0, bytes, stream);
    if (err != cudaSuccess) {
        (void)cudaFree(ws->base);
        return err;
    }
    ws->bytes = bytes;
    *made = 1;
    return cudaSuccess;
}

extern "C" cudaError_t sgemm_stream_workspace(cudaStream_t stream, size_t bytes, void **out)
{
    *out = NULL;
    int device = 0;
    unsigned long long stream_id = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = cudaStreamGetId(stream, &stream_id);
    if (err != cudaSuccess)
        return err;

    pthread_mutex_lock(&workspace_lock);
    struct workspace *found = NULL;
    int free_entry = -1;
    for (int i = 0; i < MAX_WORKSPACES && found == NULL; ++i) {
        struct workspace *ws = &workspaces[i];
        if (ws->used && ws->device == device && ws->stream_id == stream_id)
            found = ws;
        else if (!ws->used && free_entry < 0)
            free_entry = i;
    }
    /* The capture status is asked under the lock, right before the zero-fill is queued, so
     * that the fill is never captured into a graph instead of run. */
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (found == NULL && free_entry >= 0)
        err = cudaStreamIsCapturing(stream, &capture);
    if (err == cudaSuccess && found == NULL && free_entry >= 0 &&
        capture == cudaStreamCaptureStatusNone) {
        struct workspace *ws = &workspaces[free_entry];
        int made = 0;
        err = make_workspace(ws, stream, bytes, &made);
        if (err == cudaSuccess && made) {
            ws->used = 1;
            ws->device = device;
            ws->stream_id = stream_id;
            found = ws;
        }
    }
    if (found != NULL && found->bytes >= bytes)
        *out = found->base;
    pthread_mutex_unlock(&workspace_lock);
    return err;
}
