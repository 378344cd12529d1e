/*
 * sgemm_workspace.h - scratch memory in device memory for the rungs that need some (partial
 * sums of split-K and stream-K), kept per (device, stream).
 *
 * Launches on one stream run in order, so they may share a workspace; launches on two streams
 * may run at once, so they get two (as cuBLAS keeps one per stream). A workspace is made by
 * the first call that asks for it on that stream, zero-filled on the stream, and kept until
 * the process ends: a launcher never waits for the GPU, so it cannot know when freeing would
 * be safe, and a captured CUDA graph may use it at any later time. It is never made while
 * the stream is capturing: then the call gets one made in the graph instead (cudaMallocAsync
 * and its zero-fill captured as graph nodes), which the launch gives back after its kernels
 * with sgemm_workspace_done() (a free node), so that a captured launch takes the same path,
 * and gives the same bits, as a direct one. The call gets NULL when the table of workspaces
 * is full or the stream's workspace is smaller than asked (outside capture), and the rung
 * takes a plan that needs none. A rung that uses it must leave it as it found it where that
 * matters (every flag it raises cleared again), so that the next launch on the stream finds it
 * clean.
 * Workspaces are keyed by the stream's handle (and the thread, for cudaStreamPerThread);
 * outside capture the stream's id confirms the key, so a new stream that got a destroyed
 * stream's handle gets a new workspace (the old one is kept: the old stream's launches may
 * still run). The one case left to the caller: a new stream whose very first launch is
 * captured, on the handle of a destroyed stream whose launches are still running.
 * A graph captured on a stream uses that stream's workspace: replaying it while other work
 * that uses the same workspace runs (a launch on that stream, another replay on another
 * stream) is for the caller to avoid, as with the workspace cuBLAS keeps per stream. The
 * workspaces belong to the CUDA context they were made in: a process that resets its device
 * (cudaDeviceReset) must not launch these rungs afterwards. Without memory for a workspace,
 * the call gets NULL as well (no error).
 */
#ifndef SGEMM_LADDER_WORKSPACE_H
#define SGEMM_LADDER_WORKSPACE_H

#include <stddef.h>
#include <cuda_runtime.h>

/* The one size every rung asks for, so that the workspace a stream gets from whichever rung
 * launches first on it serves every rung after it (a smaller one would leave them NULL, and so
 * without split-K): SGEMM_WORKSPACE_FLOATS_PER_SM floats per SM for partial sums (two 128x256
 * tiles, or four 128x128), then SGEMM_WORKSPACE_FLAGS_PER_SM flags or counters per SM. */
#define SGEMM_WORKSPACE_FLOATS_PER_SM (2 * 128 * 256)
#define SGEMM_WORKSPACE_FLAGS_PER_SM  8
#define SGEMM_WORKSPACE_FLOATS(sms)   ((size_t)SGEMM_WORKSPACE_FLOATS_PER_SM * (size_t)(sms))
/* The flags, after the floats, of a workspace `work` (float *) made for `sms` SMs. */
#define SGEMM_WORKSPACE_FLAGS(work, sms)                                                         \
    ((unsigned *)((float *)(work) + SGEMM_WORKSPACE_FLOATS(sms)))
#define SGEMM_WORKSPACE_BYTES(sms)                                                               \
    (SGEMM_WORKSPACE_FLOATS(sms) * sizeof(float) +                                               \
     (size_t)SGEMM_WORKSPACE_FLAGS_PER_SM * (size_t)(sms) * sizeof(unsigned))

#ifdef __cplusplus
extern "C" {
#endif

/* *out := the workspace of `stream` on the current device, at least `bytes` long (made now if
 * the stream has none and is not capturing; made in the graph if it is capturing), or NULL.
 * Safe from concurrent host threads. */
cudaError_t sgemm_stream_workspace(cudaStream_t stream, size_t bytes, void **out);

/* After the last kernel a launch queued with `work`: gives back a workspace made in a graph
 * (cudaFreeAsync on the capturing stream); any other `work`, NULL included, is left alone.
 * Returns err, or the free's error where err is cudaSuccess. */
cudaError_t sgemm_workspace_done(cudaStream_t stream, const void *work, cudaError_t err);

#ifdef __cplusplus
}
#endif

#endif /* SGEMM_LADDER_WORKSPACE_H */
