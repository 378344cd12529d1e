/* stats.h - how many replays a point gets, and what is reported of them. */
#ifndef HARNESS_STATS_H
#define HARNESS_STATS_H

/* The rule of salykova's 'Advanced Matrix Multiplication Optimization on NVIDIA GPUs': max(10,
 * 800000 / size) replays, size the mean of M, N, K. */
int replay_rule(int m, int n, int k);

/*
 * Replays that fit the time budget: the rule's count (or `requested` when > 0),
 * cut to budget_s / est_ms_per_replay but never below 2, so that the second
 * half is never empty.  *cut is set to 1 when the budget cut the count.
 */
int replays_within_budget(int wanted, double est_ms, double budget_s, int *cut);

struct stats {
    double mean, median, min, max; /* milliseconds, over the second half */
    int used;                      /* replays the figures are taken from */
};

/* Figures over the second half of ms[0..n) (the first half is further warm-up). n >= 1. */
void stats_second_half(const float *ms, int n, struct stats *out);

/* GFLOP/s of one M x N x K product taking `ms` milliseconds. */
double gflops(int m, int n, int k, double ms);

#endif
