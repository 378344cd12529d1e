/*
 * sgemm_workspace.cu - one workspace per (device, stream); see sgemm_workspace.h.
 */
#include <pthread.h>

#include "sgemm_workspace.h"

#define MAX_WORKSPACES 64

struct workspace {
    int used;    /* 0: free entry; 1: in use; 2: retired (its stream's handle was reused) */
    int device;
    /* The key: the stream's handle, and for cudaStreamPerThread (one handle, a stream per
     * thread) the thread. cudaStreamGetId, unique for the life of the process, is not allowed
     * while a stream is capturing, so it only confirms the key outside capture: a handle that a
     * destroyed stream left and a new stream got again has a new id. */
    cudaStream_t stream;
    pthread_t thread;
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

/* The workspace a launch on a capturing stream made in the graph (this thread's, until that
 * launch gives it back with sgemm_workspace_done()). */
static thread_local void *graph_work = NULL;

/* Where a capturing stream has no workspace: one made in the graph the capture builds, so that
 * the captured launch takes the path a direct launch takes. cudaMallocAsync and the zero-fill
 * become graph nodes (nothing is allocated now), and sgemm_workspace_done() adds the free
 * after the launch's kernels: each replay allocates, zeroes and frees it in stream order. */
static cudaError_t make_graph_workspace(cudaStream_t stream, size_t bytes, void **out)
{
    cudaError_t err = cudaMallocAsync(out, bytes, stream);
    if (err == cudaSuccess && (err = cudaMemsetAsync(*out, 0, bytes, stream)) != cudaSuccess)
        (void)cudaFreeAsync(*out, stream);
    if (err != cudaSuccess) {
        *out = NULL;
        return err;
    }
    graph_work = *out;
    return cudaSuccess;
}

extern "C" cudaError_t sgemm_workspace_done(cudaStream_t stream, const void *work, cudaError_t err)
{
    if (work == NULL || work != graph_work)
        return err;
    graph_work = NULL;
    const cudaError_t freed = cudaFreeAsync((void *)work, stream);
    return err != cudaSuccess ? err : freed;
}

extern "C" cudaError_t sgemm_stream_workspace(cudaStream_t stream, size_t bytes, void **out)
{
    *out = NULL;
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    const int per_thread = (stream == cudaStreamPerThread);
    const pthread_t self = pthread_self();

    pthread_mutex_lock(&workspace_lock);
    /* The capture status is asked under the lock, right before the zero-fill is queued, so
     * that the fill is never captured into a graph instead of run. */
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    unsigned long long stream_id = 0;
    err = cudaStreamIsCapturing(stream, &capture);
    if (err == cudaSuccess && capture == cudaStreamCaptureStatusNone)
        err = cudaStreamGetId(stream, &stream_id);
    struct workspace *found = NULL;
    int free_entry = -1;
    for (int i = 0; i < MAX_WORKSPACES && err == cudaSuccess && found == NULL; ++i) {
        struct workspace *ws = &workspaces[i];
        if (ws->used == 1 && ws->device == device && ws->stream == stream &&
            (!per_thread || pthread_equal(ws->thread, self)))
            found = ws;
        else if (!ws->used && free_entry < 0)
            free_entry = i;
    }
    /* A reused handle: the old stream's last launches may still be running on its workspace,
     * so that one is retired (kept, never freed: freeing would wait for the GPU) and the new
     * stream gets its own. */
    if (found != NULL && capture == cudaStreamCaptureStatusNone && found->stream_id != stream_id) {
        found->used = 2;
        found = NULL;
        for (int i = 0; i < MAX_WORKSPACES && free_entry < 0; ++i)
            if (!workspaces[i].used)
                free_entry = i;
    }
    if (err == cudaSuccess && found == NULL && free_entry >= 0 &&
        capture == cudaStreamCaptureStatusNone) {
        struct workspace *ws = &workspaces[free_entry];
        int made = 0;
        err = make_workspace(ws, stream, bytes, &made);
        if (err == cudaSuccess && made) {
            ws->used = 1;
            ws->device = device;
            ws->stream = stream;
            ws->thread = self;
            ws->stream_id = stream_id;
            found = ws;
        }
    }
    if (found != NULL && found->bytes >= bytes)
        *out = found->base;
    pthread_mutex_unlock(&workspace_lock);
    if (err == cudaSuccess && *out == NULL && capture == cudaStreamCaptureStatusActive)
        err = make_graph_workspace(stream, bytes, out);
    return err;
}
