/* stats.c - replay counts and the statistics reported for a point. */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

int replay_rule(int m, int n, int k)
{
    const long long size = ((long long)m + n + k) / 3;
    const long long r = 800000 / (size > 0 ? size : 1);
    return r < 10 ? 10 : (r > 1000000 ? 1000000 : (int)r);
}

int replays_within_budget(int wanted, double est_ms, double budget_s, int *cut)
{
    *cut = 0;
    if (est_ms <= 0.0)
        return wanted;
    const double fit = budget_s * 1000.0 / est_ms;
    if (fit >= wanted)
        return wanted;
    *cut = 1;
    return fit < 2.0 ? 2 : (int)fit;
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

void stats_second_half(const float *ms, int n, struct stats *out)
{
    const int first = n / 2;
    const int used = n - first;
    float *sorted = malloc(sizeof *sorted * (size_t)used);
    double sum = 0.0;
    memset(out, 0, sizeof *out);
    if (!sorted || used <= 0) {
        free(sorted);
        return;
    }
    for (int i = 0; i < used; i++) {
        sorted[i] = ms[first + i];
        sum += sorted[i];
    }
    qsort(sorted, (size_t)used, sizeof *sorted, cmp_float);
    out->used = used;
    out->mean = sum / used;
    out->min = sorted[0];
    out->max = sorted[used - 1];
    out->median = (used % 2) ? sorted[used / 2] : 0.5 * ((double)sorted[used / 2 - 1] + sorted[used / 2]);
    free(sorted);
}

double gflops(int m, int n, int k, double ms)
{
    return ms > 0.0 ? 2.0 * m * (double)n * k / (ms * 1e6) : 0.0;
}
