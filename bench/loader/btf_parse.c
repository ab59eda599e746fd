// SPDX-License-Identifier: GPL-2.0
/* Median time of one vmlinux BTF parse (btf__load_vmlinux_btf), in us. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <bpf/btf.h>

#define RUNS 21

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(void)
{
	double t[RUNS], start;
	struct btf *btf;
	int i;

	for (i = 0; i < RUNS; i++) {
		start = now_us();
		btf = btf__load_vmlinux_btf();
		t[i] = now_us() - start;
		if (!btf) {
			fprintf(stderr, "btf_parse: no vmlinux BTF\n");
			return 1;
		}
		btf__free(btf);
	}
	qsort(t, RUNS, sizeof(t[0]), cmp_double);
	printf("%.0f\n", t[RUNS / 2]);
	return 0;
}
