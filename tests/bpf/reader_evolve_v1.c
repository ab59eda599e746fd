// SPDX-License-Identifier: GPL-2.0
/* Version 1 of the evolving object (see reader_evolve.h). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "reader_evolve.h"

typedef struct evolve_v1_key evolve_key_t;
typedef struct evolve_v1_value evolve_value_t;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EVOLVE_ENTRIES);
	__type(key, evolve_key_t);
	__type(value, evolve_value_t);
} evolve_map SEC(".maps");

char LICENSE[] SEC("license") = "GPL";
