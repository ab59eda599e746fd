/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The benchmarks' one output format, read by bench/report.sh into
 * BENCHMARKS.md:  RESULT <key> <unit> <min> <median> <max> <samples>
 * A ratio is computed per interleaved round, then summarised, so it only
 * ever compares figures measured side by side.
 */
#ifndef KSTATS_BENCH_BSTAT_H
#define KSTATS_BENCH_BSTAT_H

double bstat_now_s(void);
/* Sorts v. */
double bstat_median(double *v, int n);
/* Sorts v and prints its RESULT line. */
void bstat_result(const char *key, const char *unit, double *v, int n);
/* out[i] = num[i] / den[i], then bstat_result(). */
void bstat_ratio(const char *key, const double *num, const double *den, int n);
/*
 * order = 0..n-1 in a random order, seeded: cases run in a new order each
 * round, so none always runs after the same other one (its caches, its
 * leftover kernel work) and a slow stretch favours none.
 */
void bstat_shuffle(int *order, int n, unsigned int *seed);

#endif /* KSTATS_BENCH_BSTAT_H */
