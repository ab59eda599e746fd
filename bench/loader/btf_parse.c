// SPDX-License-Identifier: GPL-2.0
/* The time of one vmlinux BTF parse (btf__load_vmlinux_btf), as a RESULT line. */
#include <stdio.h>
#include <bpf/btf.h>

#include "bstat.h"

#define RUNS 21

int main(void)
{
	double t[RUNS], start;
	struct btf *btf;
	int i;

	for (i = 0; i < RUNS; i++) {
		start = bstat_now_s();
		btf = btf__load_vmlinux_btf();
		t[i] = (bstat_now_s() - start) * 1e3;
		if (!btf) {
			fprintf(stderr, "btf_parse: no vmlinux BTF\n");
			return 1;
		}
		btf__free(btf);
	}
	bstat_result("loader.vmlinux_btf_parse", "ms", t, RUNS);
	return 0;
}
