/*
 * all_rungs.c - every rung linked into one program, as common/step.h promises: a rung exports
 * step_NN alone, so any set of rungs links beside any other (a second definition of any
 * symbol fails this program's link, and so `make all`).
 *
 * Without a GPU it checks the table the rungs export: each step_NN says it is rung NN, the
 * numbers rise, the slugs are distinct, every rung has a launch function and a known minimum
 * compute capability.
 * With one, it also runs every rung the GPU can run, one after another on one stream of one
 * process (the rungs that keep a workspace per stream share it), on shapes with edge tiles,
 * a long K (split-K) and more tiles than SMs, and compares each C with the exact answer: the
 * inputs are small integers, alpha = 2 and beta = -1, so every sum is exact in any order.
 *
 * Built with -DRUNG_LIST="X(01) X(02) ..." (the Makefile's list of rungs). Prints a line per
 * rung and shape, then "all rungs: N passed, N failed"; exits 0 or 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../common/step.h"

#ifndef RUNG_LIST
#error "build with -DRUNG_LIST=\"X(01) X(02) ...\""
#endif

#define X(nn) extern const struct step step_##nn;
RUNG_LIST
#undef X

struct entry {
    const struct step *step;
    int nn; /* the number in its symbol's name */
};
#define X(nn) {&step_##nn, (int)(1##nn - 100)},
static const struct entry rungs[] = {RUNG_LIST};
#undef X
#define RUNGS ((int)(sizeof rungs / sizeof rungs[0]))

static int passed, failed;

static void result(int ok, const char *fmt, int a, const char *b)
{
    printf("%s ", ok ? "ok  " : "FAIL");
    printf(fmt, a, b);
    printf("\n");
    if (ok)
        ++passed;
    else
        ++failed;
}

static void check_table(void)
{
    for (int i = 0; i < RUNGS; ++i) {
        const struct step *s = rungs[i].step;
        int ok = s->number == rungs[i].nn && s->launch != NULL && s->slug && s->slug[0] &&
                 s->title && s->title[0] && (s->min_cc == 0 || s->min_cc >= 30);
        ok = ok && (i == 0 || s->number > rungs[i - 1].step->number);
        for (int j = 0; j < i; ++j)
            ok = ok && strcmp(s->slug, rungs[j].step->slug) != 0;
        result(ok, "table: step_%02d (%s): number, slug, title, launch, min_cc", rungs[i].nn,
               s->slug ? s->slug : "(null)");
    }
}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        const cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                                   \
            printf("FAIL %s: %s (all_rungs.c:%d)\n", #call, cudaGetErrorString(e_), __LINE__);    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static float a_value(long i, long k) { return (float)((i * 7 + k * 3) % 5 - 2); }
static float b_value(long k, long j) { return (float)((k * 5 + j * 11) % 7 - 3); }
static float c_value(long i, long j) { return (float)(2 * ((i * 3 + j * 13) % 5) - 3); }

/* Every rung the GPU can run on an M x N x K problem, one after another on one stream. */
static void run_shape(int M, int N, int K, int cc, cudaStream_t stream)
{
    const size_t mk = (size_t)M * K, kn = (size_t)K * N, mn = (size_t)M * N;
    float *ha = malloc(mk * sizeof(float)), *hb = malloc(kn * sizeof(float));
    float *c0 = malloc(mn * sizeof(float)), *want = malloc(mn * sizeof(float));
    float *got = malloc(mn * sizeof(float));
    if (!ha || !hb || !c0 || !want || !got) {
        printf("FAIL out of host memory\n");
        exit(1);
    }
    for (long i = 0; i < M; ++i)
        for (long k = 0; k < K; ++k)
            ha[i * K + k] = a_value(i, k);
    for (long k = 0; k < K; ++k)
        for (long j = 0; j < N; ++j)
            hb[k * N + j] = b_value(k, j);
    for (long i = 0; i < M; ++i)
        for (long j = 0; j < N; ++j) {
            double sum = 0.0;
            for (long k = 0; k < K; ++k)
                sum += (double)ha[i * K + k] * hb[k * N + j];
            c0[i * N + j] = c_value(i, j);
            want[i * N + j] = (float)(2.0 * sum - c0[i * N + j]); /* exact: |x| < 2^24 */
        }
    float *a, *b, *c;
    CHECK(cudaMalloc((void **)&a, mk * sizeof(float)));
    CHECK(cudaMalloc((void **)&b, kn * sizeof(float)));
    CHECK(cudaMalloc((void **)&c, mn * sizeof(float)));
    CHECK(cudaMemcpy(a, ha, mk * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, hb, kn * sizeof(float), cudaMemcpyHostToDevice));
    char shape[64];
    snprintf(shape, sizeof shape, "%dx%dx%d", M, N, K);
    for (int i = 0; i < RUNGS; ++i) {
        const struct step *s = rungs[i].step;
        if (s->min_cc > cc)
            continue;
        CHECK(cudaMemcpyAsync(c, c0, mn * sizeof(float), cudaMemcpyHostToDevice, stream));
        cudaError_t err = s->launch(M, N, K, 2.0f, a, K, b, N, -1.0f, c, N, stream);
        if (err == cudaSuccess)
            err = cudaStreamSynchronize(stream);
        size_t bad = 0;
        if (err == cudaSuccess) {
            CHECK(cudaMemcpy(got, c, mn * sizeof(float), cudaMemcpyDeviceToHost));
            for (size_t e = 0; e < mn; ++e)
                bad += got[e] != want[e];
        }
        char what[160];
        snprintf(what, sizeof what, "%s: %s, %zu of %zu wrong", shape,
                 err == cudaSuccess ? "launched" : cudaGetErrorString(err), bad, mn);
        result(err == cudaSuccess && bad == 0, "step_%02d %s", rungs[i].nn, what);
        if (err != cudaSuccess)
            exit(1); /* the context may be lost: later launches would say nothing new */
    }
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    free(ha);
    free(hb);
    free(c0);
    free(want);
    free(got);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    check_table();
    int devices = 0, major = 0, minor = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        (void)cudaGetLastError();
        printf("no CUDA device: the table is checked, no rung launched\n");
    } else {
        CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
        CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
        cudaStream_t stream;
        CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        /* edge tiles everywhere; a long K with few tiles (split-K); more tiles than SMs */
        run_shape(130, 131, 67, 10 * major + minor, stream);
        run_shape(256, 256, 4096, 10 * major + minor, stream);
        run_shape(2049, 1100, 40, 10 * major + minor, stream);
        CHECK(cudaStreamDestroy(stream));
    }
    printf("all rungs: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
