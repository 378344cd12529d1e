/*
 * gpu_contract.c - holds one rung to the launch contract of common/step.h:
 *   - a launch never synchronizes and never allocates while its stream is capturing, so the
 *     first launch of a process may be captured into a CUDA graph, and the graph replayed;
 *   - launches on several streams at once, from several host threads at once, and on several
 *     GPUs at once give the same bits as the same launches made one after another.
 *
 * Usage: contract_NN capture|capture-warm|capture-random|streams|threads|devices M N K
 *        contract_NN paths
 *   capture  the rung's first launch in this process is captured (cudaStreamCaptureModeGlobal)
 *            into a graph; the capture must stay valid, the graph is replayed four times and a
 *            direct launch follows; all agree bit for bit.
 *   capture-warm  the same after one direct launch on the stream, so that the captured
 *            launch finds what the rung keeps per stream (rungs 14-19's workspace) and takes the
 *            paths that use it: split-K, stream-K, the large-tile split.
 *   capture-random  capture on random floats in [-1, 1): no exact answer, so the replays and
 *            the direct launch after them are compared bit for bit with each other alone. A
 *            captured launch that took another path than a direct one (another order of the
 *            sums) fails here, where the integer inputs of `capture` cannot tell.
 *   streams  four problems on four non-blocking streams, three rounds issued to all four
 *            before any synchronization (the last two held back behind a host gate, so a
 *            launch that waits for the GPU is seen), against the same problems run one after
 *            another on one stream before.
 *   threads  two host threads, each with its own stream and problem, start together and
 *            launch four times each (these are the first launches of the process); against
 *            the same problems run one after another on one stream afterwards.
 *   devices  a host thread on each GPU (up to 8) of the rung's compute capability, each with
 *            its own problem and stream, start together and launch four times each (the
 *            first launches on every device: what the rung keeps per device is made on all
 *            of them at once); against the same problems run one after another afterwards.
 *            Fewer than two such GPUs: a skip (exit 77) that says so.
 *   paths    every launch path of a rung with several (struct step's `paths`) taken at least
 *            once: shapes derived from the GPU's SM count, each launched once with SGEMM_TRACE
 *            set and checked exact, stderr read back for the path each launch names (see
 *            "paths" below). A rung with one path prints "ok paths: one path".
 * The inputs are small integers and alpha = 2, beta = -1, so every result is exact whatever
 * the order of the sums (split-K, stream-K): a difference of one bit is a wrong value, never
 * rounding. Sampled entries (whole rows and columns among them) are also checked against the
 * exact result computed on the host.
 *
 * Prints one line, "ok <mode> MxNxK: ..." or "FAIL <mode> MxNxK: <reason>", and exits 0 or 1;
 * 2 for a usage error; 3 when CUDA cannot start (other than no device); 77 (a skip) when
 * there is no CUDA device or the device is below the rung's compute capability.
 *
 * Built once per rung with -DSTEP_SYMBOL=step_NN and linked with that rung's object.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "../common/step.h"

#ifndef STEP_SYMBOL
#error "build with -DSTEP_SYMBOL=step_NN"
#endif

extern const struct step STEP_SYMBOL;

/* C := ALPHA_INT * A * B + BETA_INT * C: both exact in float, and applying it twice with
 * beta = -1 gives C back (C -> 2AB - C -> C), which the back-to-back replays use. */
#define ALPHA_INT 2
#define BETA_INT (-1)

#define MAX_DIM 65536          /* M, N */
#define MAX_K 1000000          /* |2AB - C| <= 12 K + 5 stays below 2^24: exact in float */
#define MAX_ELEMS (1L << 28)   /* floats per operand */
#define STREAMS 4
#define STREAM_ROUNDS 3
#define THREADS 2
#define THREAD_ROUNDS 4
#define MAX_TEST_DEVICES 8     /* devices: at most this many GPUs, a host thread each */
#define GATE_SECONDS 10        /* how long the gate holds a stream before it gives up */
#define SAMPLES 1024           /* scattered entries checked against the exact result */

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_CUDA = 3, EXIT_SKIP = 77 };

static const struct step *const rung = &STEP_SYMBOL;
static char label[96]; /* "capture 256x256x4096", the head of the one line printed */
/* capture-warm: one direct launch on the stream before the capture, so that what the rung
 * keeps per stream (a workspace) exists and the captured launch takes the paths that use it. */
static int warm_first;
/* capture-random: the inputs are random floats, not small integers (problem_randomize()), so
 * that a captured launch that took another path than a direct one (another order of the sums)
 * gives other bits; no exact answer is known, only the two launches compared. */
static int random_inputs;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

/* Prints "FAIL <label>: <reason>" and ends the process at once, from any thread (the one
 * line is printed once; nothing is freed: the process ends). */
static _Noreturn void fail(const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&fail_lock);
    printf("FAIL %s: ", label);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    fflush(stderr);
    _Exit(EXIT_FAIL);
}

#define CHECK(call) check_cuda((call), #call, __LINE__)

static void check_cuda(cudaError_t e, const char *what, int line)
{
    if (e != cudaSuccess)
        fail("%s (gpu_contract.c:%d) returned %s: %s", what, line, cudaGetErrorName(e),
             cudaGetErrorString(e));
}

static void *host_alloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL)
        fail("out of host memory (%zu bytes)", bytes);
    return p;
}

static float *device_alloc(size_t count)
{
    void *p = NULL;
    CHECK(cudaMalloc(&p, count * sizeof(float)));
    return p;
}

/* ---- the problems: small integers, so every result is exact ------------------------------ */

static int a_value(long seed, long i, long k) { return (int)((i * 7 + k * 3 + seed) % 5) - 2; }
static int b_value(long seed, long k, long j) { return (int)((k * 5 + j * 11 + 3 * seed) % 7) - 3; }
/* Odd, so that 2AB - C is odd: never zero, no signed zero to tell apart. */
static int c_value(long seed, long i, long j) { return 2 * (int)((i * 3 + j * 13 + 5 * seed) % 5) - 3; }

/* A rows x cols operand of value(seed, r, c): kept on the host as bytes (for the exact
 * answer), copied to `dev` as floats through `stage`. */
static void fill_operand(int (*value)(long, long, long), long seed, long rows, long cols,
                         signed char *host, float *stage, float *dev)
{
    for (long r = 0; r < rows; r++)
        for (long c = 0; c < cols; c++) {
            const int v = value(seed, r, c);
            host[r * cols + c] = (signed char)v;
            stage[r * cols + c] = (float)v;
        }
    CHECK(cudaMemcpy(dev, stage, (size_t)(rows * cols) * sizeof(float), cudaMemcpyHostToDevice));
}

struct problem {
    int m, n, k;
    long seed;
    signed char *ha, *hb;   /* host copies of A and B, for the exact results */
    float *a, *b, *c, *c0;  /* device: A, B, C and C's starting values */
};

static size_t c_bytes(const struct problem *p) { return (size_t)p->m * (size_t)p->n * sizeof(float); }

/* Allocates and fills one problem; on return the device is idle (the copies are done). */
static void problem_init(struct problem *p, int m, int n, int k, long seed)
{
    const size_t mk = (size_t)m * (size_t)k, kn = (size_t)k * (size_t)n, mn = (size_t)m * (size_t)n;
    size_t most = mk > kn ? mk : kn;
    most = most > mn ? most : mn;
    float *stage = host_alloc(most * sizeof(float));

    p->m = m;
    p->n = n;
    p->k = k;
    p->seed = seed;
    p->ha = host_alloc(mk);
    p->hb = host_alloc(kn);
    p->a = device_alloc(mk);
    p->b = device_alloc(kn);
    p->c = device_alloc(mn);
    p->c0 = device_alloc(mn);

    fill_operand(a_value, seed, m, k, p->ha, stage, p->a);
    fill_operand(b_value, seed, k, n, p->hb, stage, p->b);
    for (long i = 0; i < m; i++)
        for (long j = 0; j < n; j++)
            stage[i * n + j] = (float)c_value(seed, i, j);
    CHECK(cudaMemcpy(p->c0, stage, mn * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(p->c, p->c0, mn * sizeof(float), cudaMemcpyDeviceToDevice));
    /* The copies above may still be in flight on the legacy stream, which the non-blocking
     * streams do not wait for. */
    CHECK(cudaDeviceSynchronize());
    free(stage);
}

/* A, B and C's starting values as random floats in [-1, 1) (a hash of the index: the same
 * every run), in place of the integers. */
static void problem_randomize(struct problem *p)
{
    float *arrays[3] = {p->a, p->b, p->c0};
    const size_t counts[3] = {(size_t)p->m * (size_t)p->k, (size_t)p->k * (size_t)p->n,
                              (size_t)p->m * (size_t)p->n};
    for (int w = 0; w < 3; w++) {
        float *stage = host_alloc(counts[w] * sizeof(float));
        for (size_t i = 0; i < counts[w]; i++) {
            unsigned long long h = (i + 1) * 0x9e3779b97f4a7c15ull + (unsigned long long)w;
            h ^= h >> 31;
            h *= 0xbf58476d1ce4e5b9ull;
            h ^= h >> 29;
            stage[i] = (float)((double)(h >> 40) / (double)(1ull << 23) - 1.0);
        }
        CHECK(cudaMemcpy(arrays[w], stage, counts[w] * sizeof(float), cudaMemcpyHostToDevice));
        free(stage);
    }
    CHECK(cudaMemcpy(p->c, p->c0, c_bytes(p), cudaMemcpyDeviceToDevice));
    CHECK(cudaDeviceSynchronize());
}

static void problem_free(struct problem *p)
{
    CHECK(cudaFree(p->a));
    CHECK(cudaFree(p->b));
    CHECK(cudaFree(p->c));
    CHECK(cudaFree(p->c0));
    free(p->ha);
    free(p->hb);
}

/* C := its starting values, in order on `s`. */
static void problem_reset(const struct problem *p, cudaStream_t s)
{
    CHECK(cudaMemcpyAsync(p->c, p->c0, c_bytes(p), cudaMemcpyDeviceToDevice, s));
}

/* The rung's launch on `s`; `what` names it in a failure. */
static void problem_launch(const struct problem *p, cudaStream_t s, const char *what)
{
    cudaError_t e = rung->launch(p->m, p->n, p->k, (float)ALPHA_INT, p->a, p->k, p->b, p->n,
                                 (float)BETA_INT, p->c, p->n, s);
    if (e != cudaSuccess)
        fail("%s returned %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
    e = cudaGetLastError();
    if (e != cudaSuccess)
        fail("%s returned cudaSuccess but left an error behind (cudaGetLastError): %s: %s", what,
             cudaGetErrorName(e), cudaGetErrorString(e));
}

/* Copies a device C into host memory. The stream that wrote it must have been synchronized:
 * cudaMemcpy runs on the legacy stream, which does not wait for non-blocking streams. */
static void read_c(const struct problem *p, float *host, const float *dev)
{
    CHECK(cudaMemcpy(host, dev, c_bytes(p), cudaMemcpyDeviceToHost));
}

/* Problem i alone on stream s, from C's starting values, its C read into `out`; `what`
 * (what_size bytes) gets its name for the messages. */
static void run_alone(struct problem *p, int i, cudaStream_t s, float *out, char *what,
                      size_t what_size)
{
    snprintf(what, what_size, "problem %d, launched alone", i);
    problem_reset(p, s);
    problem_launch(p, s, what);
    CHECK(cudaStreamSynchronize(s));
    read_c(p, out, p->c);
}

/* ---- checks --------------------------------------------------------------------------------- */

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float exact(const struct problem *p, int i, int j)
{
    long long sum = 0;
    for (long kk = 0; kk < p->k; kk++)
        sum += (long long)p->ha[(long)i * p->k + kk] * p->hb[kk * p->n + j];
    return (float)(ALPHA_INT * sum + BETA_INT * (long long)c_value(p->seed, i, j));
}

static void check_entry(const struct problem *p, const float *got, int i, int j, const char *what)
{
    const float want = exact(p, i, j);
    const float have = got[(size_t)i * (size_t)p->n + (size_t)j];
    if (bits(have) != bits(want))
        fail("%s: C[%d][%d] = %.9g, the exact result is %.9g", what, i, j, have, want);
}

/* Rows 0, M/2 and M-1 and columns 0 and N-1 whole, and SAMPLES scattered entries, against
 * the exact result. */
static void check_exact(const struct problem *p, const float *got, const char *what)
{
    const int rows[3] = {0, p->m / 2, p->m - 1}, cols[2] = {0, p->n - 1};
    for (int r = 0; r < 3; r++)
        for (int j = 0; j < p->n; j++)
            check_entry(p, got, rows[r], j, what);
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < p->m; i++)
            check_entry(p, got, i, cols[c], what);
    for (long t = 0; t < SAMPLES; t++)
        check_entry(p, got, (int)((t * 7919 + 13) % p->m), (int)((t * 104729 + 7) % p->n), what);
}

/* got and want, all M x N entries, bit for bit. */
static void check_same(const struct problem *p, const float *got, const float *want,
                       const char *what, const char *against)
{
    const size_t count = (size_t)p->m * (size_t)p->n;
    size_t first = 0, differ = 0;
    for (size_t e = 0; e < count; e++)
        if (bits(got[e]) != bits(want[e]) && differ++ == 0)
            first = e;
    if (differ > 0)
        fail("%s differs from %s in %zu of %zu entries, first C[%zu][%zu] = %.9g instead of %.9g",
             what, against, differ, count, first / (size_t)p->n, first % (size_t)p->n,
             got[first], want[first]);
}

/* ---- capture: the first launch of the process inside a CUDA graph capture ----------------- */

static void run_capture(int m, int n, int k)
{
    struct problem p;
    cudaStream_t s;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec;
    size_t nodes = 0;

    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    problem_init(&p, m, n, k, 1);
    if (random_inputs)
        problem_randomize(&p);
    float *first = host_alloc(c_bytes(&p)), *got = host_alloc(c_bytes(&p));

    if (warm_first) {
        problem_launch(&p, s, "the direct launch before the capture");
        CHECK(cudaStreamSynchronize(s));
    }
    /* Unless warm_first, nothing of the rung has run yet: whatever it sets up on first use
     * happens here. */
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    const cudaError_t launched = rung->launch(m, n, k, (float)ALPHA_INT, p.a, k, p.b, n,
                                              (float)BETA_INT, p.c, n, s);
    const cudaError_t left = cudaGetLastError();
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    const cudaError_t queried = cudaStreamIsCapturing(s, &status);
    const cudaError_t ended = cudaStreamEndCapture(s, &graph);
    if (launched != cudaSuccess)
        fail("the first launch, captured, returned %s: %s (a launch must not synchronize or "
             "allocate while its stream is capturing)",
             cudaGetErrorName(launched), cudaGetErrorString(launched));
    CHECK(queried);
    if (status == cudaStreamCaptureStatusInvalidated)
        fail("the first launch invalidated the capture of its stream (it synchronized, "
             "allocated, or made another call a capture forbids)");
    if (status != cudaStreamCaptureStatusActive)
        fail("the stream was no longer capturing after the first launch");
    if (ended != cudaSuccess)
        fail("cudaStreamEndCapture after the first launch returned %s: %s",
             cudaGetErrorName(ended), cudaGetErrorString(ended));
    if (left != cudaSuccess)
        fail("the first launch, captured, returned cudaSuccess but left an error behind "
             "(cudaGetLastError): %s: %s", cudaGetErrorName(left), cudaGetErrorString(left));
    CHECK(cudaGraphGetNodes(graph, NULL, &nodes));
    if (nodes == 0)
        fail("the captured graph is empty: the launch put no work on its stream");
    CHECK(cudaGraphInstantiate(&exec, graph, 0));

    /* Replay 1 and 2, each from C's starting values (the copy is outside the graph). */
    problem_reset(&p, s);
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    read_c(&p, first, p.c);
    if (!random_inputs)
        check_exact(&p, first, "the first replay of the captured launch");
    problem_reset(&p, s);
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    read_c(&p, got, p.c);
    check_same(&p, got, first, "the second replay", "the first replay");
    /* Replays 3 and 4 back to back, nothing between them: C -> 2AB - C -> C, so C ends as
     * the second replay left it (every value exact; random inputs: not exact, not compared). */
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    read_c(&p, got, p.c);
    if (!random_inputs)
        check_same(&p, got, first, "two replays back to back", "one replay");

    /* The same call made directly. */
    problem_reset(&p, s);
    problem_launch(&p, s, "the direct launch after the replays");
    CHECK(cudaStreamSynchronize(s));
    read_c(&p, got, p.c);
    check_same(&p, got, first, "the direct launch", "the captured launch");

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaStreamDestroy(s));
    problem_free(&p);
    free(first);
    free(got);
    printf("ok %s: the first launch captured (a graph of %zu node%s), 4 replays and a direct "
           "launch agree\n", label, nodes, nodes == 1 ? "" : "s");
}

/* ---- streams: four streams at once --------------------------------------------------------- */

/* A host function queued on a stream holds everything after it until the gate opens (or
 * GATE_SECONDS pass). A launch that waits for earlier work on the GPU (a synchronize, an
 * event wait on the host, a cudaFree) cannot return before then. */
struct gate {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int open;
    int timed_out;
};

static void CUDART_CB gate_wait(void *arg)
{
    struct gate *g = arg;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += GATE_SECONDS;
    pthread_mutex_lock(&g->lock);
    while (!g->open)
        if (pthread_cond_timedwait(&g->cond, &g->lock, &deadline) == ETIMEDOUT) {
            g->timed_out = 1;
            g->open = 1;
        }
    pthread_mutex_unlock(&g->lock);
}

static void gate_open(struct gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->open = 1;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

static void run_streams(int m, int n, int k)
{
    struct problem p[STREAMS];
    cudaStream_t seq, s[STREAMS];
    float *want[STREAMS], *out[STREAMS][STREAM_ROUNDS];
    struct gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    char what[96];

    for (int i = 0; i < STREAMS; i++)
        problem_init(&p[i], m, n, k, 1 + i);
    float *got = host_alloc(c_bytes(&p[0]));

    /* One after another on one stream. */
    CHECK(cudaStreamCreateWithFlags(&seq, cudaStreamNonBlocking));
    for (int i = 0; i < STREAMS; i++) {
        want[i] = host_alloc(c_bytes(&p[i]));
        run_alone(&p[i], i, seq, want[i], what, sizeof what);
        check_exact(&p[i], want[i], what);
    }

    /* All rounds issued to all four streams before any synchronization; each round starts
     * from C's starting values and copies its result aside. Rounds 1 on wait behind a gate
     * that opens only once every launch has returned. */
    for (int i = 0; i < STREAMS; i++) {
        CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
        for (int r = 0; r < STREAM_ROUNDS; r++)
            out[i][r] = device_alloc((size_t)m * (size_t)n);
    }
    for (int r = 0; r < STREAM_ROUNDS; r++) {
        if (r == 1)
            for (int i = 0; i < STREAMS; i++)
                CHECK(cudaLaunchHostFunc(s[i], gate_wait, &gate));
        for (int i = 0; i < STREAMS; i++) {
            snprintf(what, sizeof what, "problem %d on stream %d, round %d", i, i, r);
            problem_reset(&p[i], s[i]);
            problem_launch(&p[i], s[i], what);
            CHECK(cudaMemcpyAsync(out[i][r], p[i].c, c_bytes(&p[i]), cudaMemcpyDeviceToDevice, s[i]));
        }
    }
    gate_open(&gate);
    for (int i = 0; i < STREAMS; i++)
        CHECK(cudaStreamSynchronize(s[i]));
    if (gate.timed_out)
        fail("a launch did not return while earlier work on the streams was held back (%d s): "
             "it waits for the GPU", GATE_SECONDS);

    for (int i = 0; i < STREAMS; i++)
        for (int r = 0; r < STREAM_ROUNDS; r++) {
            snprintf(what, sizeof what, "problem %d on stream %d, round %d", i, i, r);
            read_c(&p[i], got, out[i][r]);
            check_same(&p[i], got, want[i], what, "the same problem launched alone");
        }

    for (int i = 0; i < STREAMS; i++) {
        for (int r = 0; r < STREAM_ROUNDS; r++)
            CHECK(cudaFree(out[i][r]));
        CHECK(cudaStreamDestroy(s[i]));
        problem_free(&p[i]);
        free(want[i]);
    }
    CHECK(cudaStreamDestroy(seq));
    free(got);
    pthread_mutex_destroy(&gate.lock);
    pthread_cond_destroy(&gate.cond);
    printf("ok %s: %d streams x %d rounds at once agree with one stream\n", label, STREAMS,
           STREAM_ROUNDS);
}

/* ---- threads: two host threads at once ----------------------------------------------------- */

struct worker {
    int index;
    int device; /* the GPU it launches on */
    struct problem *p;
    float *out[THREAD_ROUNDS];
    pthread_barrier_t *start;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    cudaStream_t s;
    char what[96];

    CHECK(cudaSetDevice(w->device));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    pthread_barrier_wait(w->start);
    for (int r = 0; r < THREAD_ROUNDS; r++) {
        snprintf(what, sizeof what, "thread %d on device %d, round %d", w->index, w->device, r);
        problem_reset(w->p, s);
        problem_launch(w->p, s, what);
        CHECK(cudaMemcpyAsync(w->out[r], w->p->c, c_bytes(w->p), cudaMemcpyDeviceToDevice, s));
        if (r % 2 == 1)
            CHECK(cudaStreamSynchronize(s));
    }
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaStreamDestroy(s));
    return NULL;
}

/* Starts a thread per worker, all launching together behind one barrier, and waits for them. */
static void run_workers(struct worker *w, int count)
{
    pthread_t tid[MAX_TEST_DEVICES > THREADS ? MAX_TEST_DEVICES : THREADS];
    pthread_barrier_t start;
    int e;

    if ((e = pthread_barrier_init(&start, NULL, (unsigned)count)) != 0)
        fail("pthread_barrier_init: %s", strerror(e));
    for (int t = 0; t < count; t++) {
        w[t].start = &start;
        if ((e = pthread_create(&tid[t], NULL, worker_main, &w[t])) != 0)
            fail("pthread_create: %s", strerror(e));
    }
    for (int t = 0; t < count; t++)
        if ((e = pthread_join(tid[t], NULL)) != 0)
            fail("pthread_join: %s", strerror(e));
    pthread_barrier_destroy(&start);
}

static void run_threads(int m, int n, int k)
{
    struct problem p[THREADS];
    struct worker w[THREADS];
    cudaStream_t seq;
    char what[96];

    for (int t = 0; t < THREADS; t++) {
        problem_init(&p[t], m, n, k, 11 + t);
        w[t].index = t;
        w[t].device = 0;
        w[t].p = &p[t];
        for (int r = 0; r < THREAD_ROUNDS; r++)
            w[t].out[r] = device_alloc((size_t)m * (size_t)n);
    }
    float *want = host_alloc(c_bytes(&p[0])), *got = host_alloc(c_bytes(&p[0]));

    /* The threads make the process's first launches, together. */
    run_workers(w, THREADS);

    /* The same problems one after another on one stream, from this thread. */
    CHECK(cudaStreamCreateWithFlags(&seq, cudaStreamNonBlocking));
    for (int t = 0; t < THREADS; t++) {
        run_alone(&p[t], t, seq, want, what, sizeof what);
        check_exact(&p[t], want, what);
        for (int r = 0; r < THREAD_ROUNDS; r++) {
            snprintf(what, sizeof what, "thread %d, round %d", t, r);
            read_c(&p[t], got, w[t].out[r]);
            check_same(&p[t], got, want, what, "the same problem launched alone");
        }
    }

    CHECK(cudaStreamDestroy(seq));
    for (int t = 0; t < THREADS; t++) {
        for (int r = 0; r < THREAD_ROUNDS; r++)
            CHECK(cudaFree(w[t].out[r]));
        problem_free(&p[t]);
    }
    free(want);
    free(got);
    printf("ok %s: %d host threads x %d launches at once agree with one thread\n", label,
           THREADS, THREAD_ROUNDS);
}

/* ---- devices: a host thread on each GPU at once --------------------------------------------- */

/* The devices whose compute capability the rung supports, at most MAX_TEST_DEVICES; how many. */
static int usable_devices(int *dev)
{
    int count = 0, used = 0;
    CHECK(cudaGetDeviceCount(&count));
    for (int d = 0; d < count && used < MAX_TEST_DEVICES; d++) {
        struct cudaDeviceProp prop;
        CHECK(cudaGetDeviceProperties(&prop, d));
        if (10 * prop.major + prop.minor >= rung->min_cc)
            dev[used++] = d;
    }
    return used;
}

static void run_devices(int m, int n, int k)
{
    int dev[MAX_TEST_DEVICES];
    struct problem p[MAX_TEST_DEVICES];
    struct worker w[MAX_TEST_DEVICES];
    char what[96];

    const int used = usable_devices(dev);
    if (used < 2) {
        if (rung->min_cc > 0)
            printf("skip %s: fewer than two CUDA devices of compute capability %d.%d or more (%d)\n",
                   label, rung->min_cc / 10, rung->min_cc % 10, used);
        else
            printf("skip %s: fewer than two CUDA devices (%d)\n", label, used);
        fflush(stdout);
        exit(EXIT_SKIP);
    }
    /* Each problem, its copies aside and (below) its stream live on its own device. */
    for (int t = 0; t < used; t++) {
        CHECK(cudaSetDevice(dev[t]));
        problem_init(&p[t], m, n, k, 21 + t);
        w[t].index = t;
        w[t].device = dev[t];
        w[t].p = &p[t];
        for (int r = 0; r < THREAD_ROUNDS; r++)
            w[t].out[r] = device_alloc((size_t)m * (size_t)n);
    }
    float *want = host_alloc(c_bytes(&p[0])), *got = host_alloc(c_bytes(&p[0]));

    /* The threads make the rung's first launches on every device, together: what the rung
     * keeps per device is made on all of them at once. */
    run_workers(w, used);

    /* Each problem again alone on its device, from this thread, one device after another. */
    for (int t = 0; t < used; t++) {
        cudaStream_t s;
        CHECK(cudaSetDevice(dev[t]));
        CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        run_alone(&p[t], t, s, want, what, sizeof what);
        check_exact(&p[t], want, what);
        for (int r = 0; r < THREAD_ROUNDS; r++) {
            snprintf(what, sizeof what, "device %d, round %d", dev[t], r);
            read_c(&p[t], got, w[t].out[r]);
            check_same(&p[t], got, want, what, "the same problem launched alone");
        }
        CHECK(cudaStreamDestroy(s));
        for (int r = 0; r < THREAD_ROUNDS; r++)
            CHECK(cudaFree(w[t].out[r]));
        problem_free(&p[t]);
    }
    free(want);
    free(got);
    printf("ok %s: %d devices, a host thread each, %d launches each at once, agree with "
           "launches one after another\n", label, used, THREAD_ROUNDS);
}

/* ---- paths: every launch path of the rung taken at least once ---------------------------- */
/*
 * With SGEMM_TRACE set, a rung with several paths prints one line per launch on stderr naming
 * the path it took (sgemm_trace(), common/sgemm_common.h). The shapes below come from the
 * plan code of rungs 13-19 (common/ffma_plan.cu: ffma_choose_plan() and the split prices)
 * for a GPU of S SMs; every path has two or three, in different corners of its region, so that
 * a small change of a constant leaves one of them there. Each runs once, in this order, on one
 * stream.
 *   whole-large  a) M=128S N=256 K=128: S 128x256 tiles, one round; b) M=256 N=256S K=128: 2S
 *                tiles, two rounds. Whole rounds: no stream-K, and WL <= WS (104 per round).
 *   stream-k     t 128x256 tiles (M=128t N=256 K=128), a) t = S + ceil(S/16), b) t = 2S +
 *                ceil(S/16) (a round of whole tiles first), c) t = S + floor(3S/4) + 1 (232 on
 *                132 SMs, as 14848x512x1024): SK < WL and SK <= WS.
 *   whole-small  a) M=128*floor(S/4) N=256 K=128; b) M=64*floor(7S/8) N=128 K=128: between
 *                3S/4 and S 64x128 tiles, WS 26 < WL 100. K = 128 (16 K tiles): a split of s
 *                puts ceil(s*tiles/S) >= 2 blocks on an SM, 2 * (8 + 8) (rungs 14-15), 2 * (8 + 2)
 *                (rungs 16-19, clusters), above 16; a large-tile split needs 32 K tiles.
 *   split-k      a) M=64 N=128*floor(S/8) K=1024: S/8 64x128 tiles, 8 slices fill one round;
 *                b) M=64 N=128*ceil(S/8) K=4096. The small split's cost below the large one's.
 *                c) 768x256x512: 24 tiles of 64x128, 5 slices (4 on 114 SMs), one cluster
 *                apiece, where 48 tiles of 64x64 would share SMs.
 *   large-split  a) 256x256x16384: two 128x256 tiles of S/2 slices each; b) M=128*ceil(S/16)
 *                N=1024 K=16384. The large split's cost below the small one's.
 *   uneven-tail  (rung 18) t 128x256 tiles, M=128t N=256 K=2048, a) t = S + floor(3S/4) + 1,
 *                b) t = 2S + floor(3S/4) + 1: a last round more than half busy and a K long
 *                enough that its cut (UN) costs less than stream-K; rungs 15-17 run stream-K.
 *   small-split  (rung 18) the 64x128 tile's slabs: a) 4096x128x4096 (64 tiles); b) M=64 *
 *                floor(2S/3) N=128 K=4096: 3 slices put 2 blocks on an SM, where the cluster
 *                split leaves one; rungs 14-17 run split-K. Rung 18 also takes it for split-k b)
 *                and large-split b) on 132 SMs (and large-split b) on 114).
 *   split-k-64   (rungs 17-19) the cluster split on 64x64 tiles (T_KT_COST: 0.66 of a 64x128 K
 *                tile): a) 128x128x128, b) 64x512x2048, c) 64x256x4096, every S: twice the
 *                tiles at the same slices, still one cluster an SM; rungs 14-16 run split-k for a)
 *                and b), large-split for c).
 * Costs: choose_plan()'s hundredths of a 128x256 tile, WL whole 128x256 tiles, WS whole 64x128
 * tiles, SK stream-K (one 128x256 stream-K block per SM resident: 241 registers x 256
 * threads), UN the uneven tail (uneven_tail()); split_slices() and large_split()'s K tiles,
 * s the slices; SL small_slabs(). Rungs 16-19's split costs assume 8 GPCs of floor(S/8) SMs
 * (cluster_cap[s] = 8 * floor(floor(S/8) / s)); a shape takes the same path in rungs 14-15 (13:
 * lines) and 16-19 (14: lines) unless its line says otherwise; rung 13 runs whole tiles alone.
 * S = 132 (H100 SXM, H200):
 *   16896x256x128    whole-large  WL 100 <= WS 104
 *   256x33792x128    whole-large  WL 200 <= WS 208
 *   18048x256x128    stream-k     SK 120 < WL 200, <= WS 130
 *   34944x256x128    stream-k     SK 220 < WL 300, <= WS 234
 *   29696x256x128    stream-k     SK 198 < WL 200, <= WS 208
 *   4224x256x128     whole-small  WS 26 < WL 100; no split
 *   7360x128x128     whole-small  WS 26 < WL 100; no split
 *   64x2048x1024     split-k      s=8: 24 (14: s=8: 18) < large s=8: 74
 *   64x2176x4096     split-k      s=7: 82 < large s=14: 150 (14: small-split SL s=7: 83 < s=5:
 *                                 105 < large 150)
 *   256x256x16384    large-split  large s=66: 153 < s=8: 264 (14: s=8: 258, SL 262)
 *   1152x1024x16384  large-split  large s=3: 2295 < s=7: 2408 (14: small-split SL s=7: 2237 <
 *                                 large s=5: 2295 < s=5: 2472)
 *   29696x256x2048   uneven-tail  UN 184 < SK 198 < WL 200, < WS 208 (13: stream-k)
 *   46592x256x2048   uneven-tail  UN 284 < SK 298 < WL 300, < WS 312 (13: stream-k)
 *   4096x128x4096    small-split  SL s=4: 255 < s=2: 258 < large 452 (13: split-k)
 *   5632x128x4096    small-split  SL s=3: 335 < s=3: 390 < large 594 (13: split-k)
 *   768x256x512      split-k      s=5: 15 (14: < 64x64 s=5: 20 < SL 22)
 *   128x128x128      split-k-64   64x64 s=4: 4 < s=4: 6, SL 6 (13: split-k)
 *   64x512x2048      split-k-64   64x64 s=8: 23 < s=8: 34 < SL 36 < large s=16: 70 (13: split-k)
 *   64x256x4096      split-k-64   64x64 s=8: 44 < s=8: 66 < SL 67 < large s=32: 70 (13:
 *                                 large-split)
 * S = 114 (H100 PCIe):
 *   14592x256x128    whole-large  WL 100 <= WS 104
 *   256x29184x128    whole-large  WL 200 <= WS 208
 *   15616x256x128    stream-k     SK 120 < WL 200, <= WS 130
 *   30208x256x128    stream-k     SK 220 < WL 300, <= WS 234
 *   25600x256x128    stream-k     SK 198 < WL 200, <= WS 208
 *   3584x256x128     whole-small  WS 26 < WL 100; no split
 *   6336x128x128     whole-small  WS 26 < WL 100; no split
 *   64x1792x1024     split-k      s=8: 24 (14: s=7: 21) < large s=8: 73
 *   64x1920x4096     split-k      s=7: 82 (14: s=7: 76) < large s=14: 149
 *   256x256x16384    large-split  large s=57: 161 < s=8: 264 (14: s=8: 258)
 *   1024x1024x16384  large-split  large s=3: 2292 < s=7: 2408 (14: small-split SL s=7: 2229 <
 *                                 large 2292 < s=3: 2740)
 *   25600x256x2048   uneven-tail  UN 184 < SK 198 < WL 200, < WS 208 (13: stream-k)
 *   40192x256x2048   uneven-tail  UN 284 < SK 298 < WL 300, < WS 312 (13: stream-k)
 *   4096x128x4096    split-k      (14: s=7: 304 < SL 308)
 *   4864x128x4096    small-split  SL s=3: 332 < s=7: 380 (13: split-k)
 *   768x256x512      split-k      s=4: 18 (14: < 64x64 s=2: 23 < SL 24)
 *   128x128x128      split-k-64   64x64 s=4: 4 < s=4: 6, SL 6 (13: split-k)
 *   64x512x2048      split-k-64   64x64 s=8: 23 < s=8: 34 < SL 36 < large s=16: 70 (13: split-k)
 *   64x256x4096      split-k-64   64x64 s=8: 44 < s=8: 66 < SL 67 < large s=32: 70 (13:
 *                                 large-split)
 * S = 108 (A100; rungs 13-15 only, 16-19 need sm_90):
 *   13824x256x128    whole-large  WL 100 <= WS 104
 *   256x27648x128    whole-large  WL 200 <= WS 208
 *   14720x256x128    stream-k     SK 120 < WL 200, <= WS 130
 *   28544x256x128    stream-k     SK 220 < WL 300, <= WS 234
 *   24320x256x128    stream-k     SK 198 < WL 200, <= WS 208
 *   3456x256x128     whole-small  WS 26 < WL 100; no split
 *   6016x128x128     whole-small  WS 26 < WL 100; no split
 *   64x1664x1024     split-k      s=8: 24 < large s=8: 72
 *   64x1792x4096     split-k      s=7: 82 < large s=15: 142
 *   256x256x16384    large-split  large s=54: 166 < s=8: 264
 *   896x1024x16384   large-split  large s=3: 2289 < s=7: 2408
 * A model of rung 18's plan code (8 GPCs) finds every path among the shapes for every S from
 * 56 to 256 but one (S = 240: no small-split); below 56 SMs no cluster of 8 fits, and the
 * slabs take the split-k shapes.
 * Rungs 20 and 21 have one path. Rungs 22-27 (split_slices(), common/split_sum.cuh) name two
 * of their own: whole (one block a tile) and split-k (the split-k and large-split shapes).
 * Rungs 26 and 27 name split-b (B split before the product, split_b_first()):
 * whole tiles with M >= 1152 and lda a multiple of 4 (every whole-large, stream-k, whole-small
 * and uneven-tail shape above but 256x256S); whole is 256x256Sx128.
 * Rung 28 names one (rung 27's plan for all of C) and tail (the last row of tiles split in a
 * launch of their own, tc-tail: S + 1 rows of two 128x128 tiles, K = 2048: the rows above in
 * two whole rounds, the last two tiles split 8 ways, 128 + 11.5 + 1 < 192 K tiles at every S);
 * rung 27 prints its lines after rung 28's. Rung 29 names ffma (a product below ~0.68 GFLOP on 132
 * SMs, sent to rung 19: 128x128x128, 768x256x512, 64x2048x1024) and tensor (the rest, sent to
 * rung 28); the rungs it calls print their lines after rung 29's.
 * The check: every launch prints exactly one trace line of this rung, naming a path of its
 * list (followed, for a rung that routes, by the lines of the earlier rung it called), and
 * every path of the list is named at least once.
 */
#define PATH_TRIES 20
#define PATH_NAME 32

struct path_try {
    const char *meant;    /* the path the plan code takes for it (the table above) */
    long m, n, k;
    char ran[PATH_NAME];  /* the path its launch named */
};

/* The shapes for a GPU of `sms` SMs (those within this program's limits); returns how many. */
static int path_shapes(long sms, struct path_try *out)
{
    const long s16 = (sms + 15) / 16, s8 = sms / 8 > 0 ? sms / 8 : 1;
    const struct path_try all[PATH_TRIES] = {
        {"whole-large", 128 * sms, 256, 128, ""},
        {"whole-large", 256, 256 * sms, 128, ""},
        {"stream-k", 128 * (sms + s16), 256, 128, ""},
        {"stream-k", 128 * (2 * sms + s16), 256, 128, ""},
        {"stream-k", 128 * (sms + 3 * sms / 4 + 1), 256, 128, ""},
        {"whole-small", 128 * (sms / 4), 256, 128, ""},
        {"whole-small", 64 * (7 * sms / 8), 128, 128, ""},
        {"split-k", 64, 128 * s8, 1024, ""},
        {"split-k", 64, 128 * ((sms + 7) / 8), 4096, ""},
        {"split-k", 768, 256, 512, ""},
        {"large-split", 256, 256, 16384, ""},
        {"large-split", 128 * s16, 1024, 16384, ""},
        {"uneven-tail", 128 * (sms + 3 * sms / 4 + 1), 256, 2048, ""},
        {"uneven-tail", 128 * (2 * sms + 3 * sms / 4 + 1), 256, 2048, ""},
        {"small-split", 4096, 128, 4096, ""},
        {"small-split", 64 * (2 * sms / 3), 128, 4096, ""},
        {"split-k-64", 128, 128, 128, ""},
        {"split-k-64", 64, 512, 2048, ""},
        {"split-k-64", 64, 256, 4096, ""},
        {"tc-tail", 128 * (sms + 1), 256, 2048, ""},
    };
    int count = 0;
    for (int i = 0; i < PATH_TRIES; i++) {
        const struct path_try *t = &all[i];
        if (t->m >= 1 && t->n >= 1 && t->m <= MAX_DIM && t->n <= MAX_DIM && t->k <= MAX_K &&
            t->m * t->n <= MAX_ELEMS && t->m * t->k <= MAX_ELEMS && t->k * t->n <= MAX_ELEMS)
            out[count++] = *t;
    }
    return count;
}

/* The trace lines written since the last call: the path of the one trace line of this rung
 * into `ran`; a line that is not a trace goes to the real stderr (`real_err`). */
static void read_trace(FILE *in, int real_err, const char *what, char *ran)
{
    char line[512], path[PATH_NAME];
    int lines = 0, step = 0;
    while (fgets(line, sizeof line, in) != NULL) {
        if (strncmp(line, "sgemm_trace ", 12) != 0) {
            dprintf(real_err, "%s", line);
            continue;
        }
        line[strcspn(line, "\n")] = '\0'; /* quoted whole in a failure */
        if (sscanf(line, "sgemm_trace step=%d path=%31s", &step, path) != 2)
            fail("%s: a trace line of another form: %s", what, line);
        if (step < rung->number && lines == 1)
            continue; /* the lines of an earlier rung this one called (rungs 28 and 29) */
        if (step != rung->number)
            fail("%s: a trace line of rung %d, not %d: %s", what, step, rung->number, line);
        if (++lines == 1)
            snprintf(ran, PATH_NAME, "%s", path);
    }
    clearerr(in); /* more is read after the next launch */
    if (lines != 1)
        fail("%s: %d trace lines for one launch (one expected)", what, lines);
}

/* 1 when `name` is one of the space-separated words of `list`. */
static int in_list(const char *list, const char *name)
{
    const size_t len = strlen(name);
    for (const char *w = list; *w != '\0';) {
        while (*w == ' ')
            w++;
        const size_t wlen = strcspn(w, " ");
        if (wlen == len && wlen > 0 && strncmp(w, name, len) == 0)
            return 1;
        w += wlen;
    }
    return 0;
}

static void run_paths(int m_unused, int n_unused, int k_unused)
{
    (void)m_unused, (void)n_unused, (void)k_unused;
    if (rung->paths == NULL) {
        printf("ok %s: one path\n", label);
        return;
    }
    int dev = 0, sms = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    struct path_try tries[PATH_TRIES];
    const int count = path_shapes(sms, tries);

    /* SGEMM_TRACE before the rung's first launch (it is read once), stderr into a file. */
    if (setenv("SGEMM_TRACE", "1", 1) != 0)
        fail("setenv: %s", strerror(errno));
    const char *dir = getenv("TMPDIR") != NULL && getenv("TMPDIR")[0] != '\0' ? getenv("TMPDIR")
                                                                              : "/tmp";
    char name[4096];
    snprintf(name, sizeof name, "%s/sgemm_paths_XXXXXX", dir);
    const int fd = mkstemp(name);
    if (fd < 0)
        fail("mkstemp %s: %s", name, strerror(errno));
    FILE *in = fopen(name, "r");
    if (in == NULL)
        fail("fopen %s: %s", name, strerror(errno));
    unlink(name);
    fflush(stderr);
    const int real_err = dup(2);
    if (real_err < 0 || dup2(fd, 2) < 0)
        fail("redirecting stderr: %s", strerror(errno));
    close(fd);

    cudaStream_t s;
    char what[128];
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int i = 0; i < count; i++) {
        struct path_try *t = &tries[i];
        struct problem p;
        snprintf(what, sizeof what, "%ldx%ldx%ld (for %s)", t->m, t->n, t->k, t->meant);
        problem_init(&p, (int)t->m, (int)t->n, (int)t->k, 21 + i);
        float *got = host_alloc(c_bytes(&p));
        problem_reset(&p, s);
        problem_launch(&p, s, what);
        CHECK(cudaStreamSynchronize(s));
        fflush(stderr);
        read_trace(in, real_err, what, t->ran);
        if (!in_list(rung->paths, t->ran))
            fail("%s: the launch took path %s, which is not in the rung's list \"%s\"", what,
                 t->ran, rung->paths);
        read_c(&p, got, p.c);
        check_exact(&p, got, what);
        free(got);
        problem_free(&p);
    }
    CHECK(cudaStreamDestroy(s));
    fflush(stderr);
    if (dup2(real_err, 2) < 0)
        fail("restoring stderr: %s", strerror(errno));
    close(real_err);
    fclose(in);

    /* Every path of the list, and the first shape that took it. */
    char ok[1024] = "", missing[512] = "", tried[2048] = "";
    size_t ok_len = 0, missing_len = 0, tried_len = 0;
    for (const char *w = rung->paths; *w != '\0';) {
        while (*w == ' ')
            w++;
        const int len = (int)strcspn(w, " ");
        if (len == 0)
            break;
        int first = -1;
        for (int i = 0; i < count && first < 0; i++)
            if ((int)strlen(tries[i].ran) == len && strncmp(tries[i].ran, w, (size_t)len) == 0)
                first = i;
        if (first >= 0 && ok_len < sizeof ok)
            ok_len += (size_t)snprintf(ok + ok_len, sizeof ok - ok_len, " %.*s@%ldx%ldx%ld", len,
                                       w, tries[first].m, tries[first].n, tries[first].k);
        else if (first < 0 && missing_len < sizeof missing)
            missing_len += (size_t)snprintf(missing + missing_len, sizeof missing - missing_len,
                                            "%s%.*s", missing_len ? " " : "", len, w);
        w += len;
    }
    if (missing_len > 0) {
        for (int i = 0; i < count && tried_len < sizeof tried; i++)
            tried_len += (size_t)snprintf(tried + tried_len, sizeof tried - tried_len,
                                          "%s%ldx%ldx%ld (for %s): %s", i ? ", " : "", tries[i].m,
                                          tries[i].n, tries[i].k, tries[i].meant, tries[i].ran);
        fail("never ran: %s (SMs=%d; shapes tried: %s)", missing, sms, tried);
    }
    printf("ok %s:%s\n", label, ok);
}

/* ---- start-up ------------------------------------------------------------------------------ */

static int parse_dim(const char *s, long max, int *out)
{
    char *end = NULL;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 1 || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s capture|capture-warm|capture-random|streams|threads|devices M N K\n"
            "       %s paths\n"
            "  holds rung %02d (%s) to the launch contract; M, N in 1..%d, K in 1..%d\n",
            prog, prog, rung->number, rung->slug, MAX_DIM, MAX_K);
}

int main(int argc, char **argv)
{
    const char *prog = argc > 0 ? argv[0] : "gpu_contract";
    int m = 1, n = 1, k = 1;

    const int paths = (argc == 2 && strcmp(argv[1], "paths") == 0); /* no sizes: its own */
    if (!paths && (argc != 5 || parse_dim(argv[2], MAX_DIM, &m) != 0 ||
                   parse_dim(argv[3], MAX_DIM, &n) != 0 || parse_dim(argv[4], MAX_K, &k) != 0)) {
        usage(prog);
        return EXIT_USAGE;
    }
    const char *mode = argv[1];
    void (*run)(int, int, int) = NULL;
    if (paths)
        run = run_paths;
    else if (strcmp(mode, "capture") == 0)
        run = run_capture;
    else if (strcmp(mode, "capture-warm") == 0) {
        run = run_capture;
        warm_first = 1;
    }
    else if (strcmp(mode, "capture-random") == 0) {
        run = run_capture;
        random_inputs = 1;
    }
    else if (strcmp(mode, "streams") == 0)
        run = run_streams;
    else if (strcmp(mode, "threads") == 0)
        run = run_threads;
    else if (strcmp(mode, "devices") == 0)
        run = run_devices;
    if (run == NULL || (long)m * n > MAX_ELEMS || (long)m * k > MAX_ELEMS || (long)k * n > MAX_ELEMS) {
        usage(prog);
        return EXIT_USAGE;
    }
    if (paths)
        snprintf(label, sizeof label, "paths");
    else
        snprintf(label, sizeof label, "%s %dx%dx%d", mode, m, n, k);

    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaErrorNoDevice) {
        printf("skip %s: no CUDA device (%s)\n", label, cudaGetErrorString(e));
        return EXIT_SKIP;
    }
    if (e == cudaSuccess && count < 1)
        e = cudaErrorNoDevice; /* success with no device: not a state to trust */
    if (e == cudaSuccess)
        e = cudaSetDevice(0);
    struct cudaDeviceProp prop;
    if (e == cudaSuccess)
        e = cudaGetDeviceProperties(&prop, 0);
    if (e != cudaSuccess) {
        printf("FAIL %s: CUDA did not start (device count %d): %s: %s\n", label, count,
               cudaGetErrorName(e), cudaGetErrorString(e));
        return EXIT_CUDA;
    }
    const int cc = 10 * prop.major + prop.minor;
    if (cc < rung->min_cc) {
        printf("skip %s: rung %02d (%s) needs compute capability %d.%d; device 0 (%s) is %d.%d\n",
               label, rung->number, rung->slug, rung->min_cc / 10, rung->min_cc % 10, prop.name,
               prop.major, prop.minor);
        return EXIT_SKIP;
    }

    run(m, n, k);
    return EXIT_OK;
}
