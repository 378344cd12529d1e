/*
 * sgemm_workspace.cu - one workspace per (device, stream); see sgemm_workspace.h.
 */
#include <pthread.h>

#include "sgemm_workspace.h"

#define MAX_WORKSPACES 64

struct workspace {
    int used, device;
    cudaStream_t stream;
    pthread_t thread; /* for cudaStreamPerThread, whose handle is the same in every thread */
    void *base;
    size_t bytes;
};
static struct workspace workspaces[MAX_WORKSPACES];
static pthread_mutex_t workspace_lock = PTHREAD_MUTEX_INITIALIZER;

extern "C" cudaError_t sgemm_stream_workspace(cudaStream_t stream, size_t bytes, void **out)
{
    *out = NULL;
    int device = 0;
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
        err = cudaStreamIsCapturing(stream, &capture);
    if (err != cudaSuccess)
        return err;
    const int per_thread = (stream == cudaStreamPerThread);

    pthread_mutex_lock(&workspace_lock);
    struct workspace *found = NULL;
    int free_entry = -1;
    for (int i = 0; i < MAX_WORKSPACES && found == NULL; ++i) {
        struct workspace *ws = &workspaces[i];
        if (ws->used && ws->device == device && ws->stream == stream &&
            (!per_thread || pthread_equal(ws->thread, pthread_self())))
            found = ws;
        else if (!ws->used && free_entry < 0)
            free_entry = i;
    }
    if (found == NULL && capture == cudaStreamCaptureStatusNone && free_entry >= 0) {
        struct workspace *ws = &workspaces[free_entry];
        /* Relaxed: a global-mode capture in another thread must not fail for this cudaMalloc. */
        enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
        err = cudaThreadExchangeStreamCaptureMode(&mode);
        if (err == cudaSuccess) {
            err = cudaMalloc(&ws->base, bytes);
            const cudaError_t back = cudaThreadExchangeStreamCaptureMode(&mode);
            if (err == cudaSuccess)
                err = back;
        }
        if (err == cudaSuccess)
            err = cudaMemsetAsync(ws->base, 0, bytes, stream);
        if (err == cudaSuccess) {
            ws->used = 1;
            ws->device = device;
            ws->stream = stream;
            ws->thread = pthread_self();
            ws->bytes = bytes;
            found = ws;
        }
    }
    if (found != NULL && found->bytes >= bytes)
        *out = found->base;
    pthread_mutex_unlock(&workspace_lock);
    return err;
}
