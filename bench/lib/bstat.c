// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bstat.h"

#define MAX_SAMPLES 256

double bstat_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bstat_median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bstat_result(const char *key, const char *unit, double *v, int n)
{
	double med = bstat_median(v, n);

	printf("RESULT\t%s\t%s\t%.6g\t%.6g\t%.6g\t%d\n", key, unit, v[0], med, v[n - 1], n);
}

void bstat_ratio(const char *key, const double *num, const double *den, int n)
{
	double r[MAX_SAMPLES];
	int i;

	for (i = 0; i < n && i < MAX_SAMPLES; i++)
		r[i] = num[i] / den[i];
	bstat_result(key, "x", r, i);
}

void bstat_shuffle(int *order, int n, unsigned int *seed)
{
	int i, j, t;

	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) {	/* Fisher-Yates */
		j = rand_r(seed) % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
}
