/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Event streams (doc/design.md "Two consumption models"): typed, timestamped
 * records in a BPF_MAP_TYPE_RINGBUF, read by exactly one userspace reader
 * (btfreader/kstats_stream.h).  A record that finds the ring full is not
 * hidden: it is counted in the stream's drops map.
 *
 *	struct my_event {
 *		struct kstats_stream_hdr hdr;	(first member, always)
 *		__u32 pid;
 *		...
 *	};
 *	DEFINE_BPF_STREAM(my_stream, my_event, 256 * 1024, kstats);
 *
 *	struct my_event *e = BPF_STREAM_RESERVE(my_stream);
 *	if (!e)
 *		return 0;	(counted in my_stream_drops)
 *	e->pid = ...;
 *	BPF_STREAM_SUBMIT(my_stream, e);
 *
 * Userspace decodes records from the object's BTF (the struct named in the
 * .kstats.streams entry), so a stream needs no code outside its BPF file.
 */
#ifndef KSTATS_BPF_STREAM_H
#define KSTATS_BPF_STREAM_H

#include "bpf_telemetry.h"

struct kstats_stream_hdr {
	__u64 ts_ns;	/* CLOCK_MONOTONIC, stamped right after the reserve */
};

#ifdef __bpf__

/*
 * The ring is root-only (0600): consuming it is destructive and needs a
 * writable fd (the consumer position is mapped writable), and a writable fd
 * can also BPF_MAP_FREEZE it for everyone.  grp reads the drop counter.
 * The kernel wants a ring of a power-of-two number of pages, and arm64
 * pages are 4, 16 or 64 KiB, known only at run time: a power of two of at
 * least 64 KiB is the same ring on every page size.
 */
#define KSTATS_STREAM_MIN_RING (64 * 1024)
#define DEFINE_BPF_STREAM(sname, rec_tag, ring_bytes, grp)		\
	_Static_assert(__builtin_offsetof(struct rec_tag, hdr) == 0,	\
		       #rec_tag " must begin with struct kstats_stream_hdr hdr"); \
	_Static_assert((ring_bytes) >= KSTATS_STREAM_MIN_RING &&	\
		       ((ring_bytes) & ((ring_bytes) - 1)) == 0,	\
		       #sname ": the ring must be a power of two >= 64 KiB"); \
	struct {							\
		__uint(type, BPF_MAP_TYPE_RINGBUF);			\
		__uint(max_entries, ring_bytes);			\
	} sname##_ringbuf SEC(".maps");					\
	__KSTATS_MAP_META(sname##_ringbuf, #sname "_ringbuf", root, grp, 0600); \
	DEFINE_BPF_MAP_GRO(sname##_drops, PERCPU_ARRAY, __u32, __u64, 1, grp); \
	__KSTATS_META(KSTATS_SEC_STREAMS, struct kstats_stream_meta)	\
	__kstats_stream_##sname = {					\
		.name = #sname, .ringbuf = #sname "_ringbuf",		\
		.drops = #sname "_drops", .record = #rec_tag,		\
		.version = KSTATS_META_VERSION,				\
	};								\
	/* Keeps the record type in the object's BTF; nothing reads it. */ \
	__KSTATS_META(KSTATS_SEC_TYPES, struct rec_tag *const)		\
	__kstats_stream_type_##sname;					\
	static __always_inline struct rec_tag *sname##_stream_reserve(void) \
	{								\
		struct rec_tag *__rec;					\
									\
		__rec = bpf_ringbuf_reserve(&sname##_ringbuf, sizeof(*__rec), 0); \
		if (!__rec) {						\
			__kstats_stream_count_drop(&sname##_drops);	\
			return NULL;					\
		}							\
		__rec->hdr.ts_ns = bpf_ktime_get_ns();			\
		return __rec;						\
	}

/*
 * Per-CPU, yet atomic: a sleepable or preempted program can interleave
 * with another on the same CPU, and a lost increment would hide a drop.
 */
static __always_inline void __kstats_stream_count_drop(void *drops_map)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(drops_map, &zero);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/* A stamped record of stream sname, or NULL (and one drop counted). */
#define BPF_STREAM_RESERVE(sname) sname##_stream_reserve()

/* Adaptive wakeup: the reader is woken only when it has caught up. */
#define BPF_STREAM_SUBMIT(sname, rec) bpf_ringbuf_submit((rec), 0)

#endif /* __bpf__ */
#endif /* KSTATS_BPF_STREAM_H */
