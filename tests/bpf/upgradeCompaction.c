// SPDX-License-Identifier: GPL-2.0
/*
 * compaction.bpf as a newer version whose histogram map changed layout
 * (a hash keyed by __u64): installed over the old one while its map is
 * pinned, the loader refuses it until the next boot (test_deb).
 */
#include "vmlinux.h"
#include "bpf_telemetry.h"
#define __u32 __u64
#define ARRAY HASH
#include "../../bpfprogs/compaction.c"
