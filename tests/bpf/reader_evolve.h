/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Two versions of one map, evolve_map, as a newer object would change it:
 * v2 reorders key fields and adds one in the hole, reorders the value,
 * widens count (u32 -> u64) and max (u16 -> u32), and adds min.  Key and
 * value keep their sizes (8 and 24 bytes), so only BTF can tell them apart.
 */
#ifndef READER_EVOLVE_H
#define READER_EVOLVE_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define EVOLVE_ENTRIES 1024

struct evolve_v1_key {
	__u32 id;
	__u16 cpu;
};

struct evolve_v1_value {
	__u32 count;
	__u64 total;
	__u16 max;
};

struct evolve_v2_key {
	__u16 cpu;
	__u8 zone;
	__u32 id;
};

struct evolve_v2_value {
	__u64 total;
	__u64 count;
	__u32 max;
	__u32 min;
};

#endif /* READER_EVOLVE_H */
