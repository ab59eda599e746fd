// SPDX-License-Identifier: GPL-2.0
/*
 * test_selinux's prober for "only the loader loads programs": one
 * BPF_PROG_LOAD of the smallest socket filter (r0 = 0; exit).  Run in a
 * confined domain other than the loader's, SELinux refuses it (EACCES,
 * and an AVC for bpf { prog_load }).  Exit 0 loaded, 1 refused.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (unsigned long)insns;
	attr.insn_cnt = 2;
	attr.license = (unsigned long)"GPL";
	fd = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	printf("prog_load: %s\n", fd < 0 ? strerror(errno) : "loaded");
	return fd < 0;
}
