/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Key and value layouts of tests/bpf/reader_layouts.c.  The kernel tests
 * write entries with these structs; the reader must find every field from
 * BTF alone.  Holes are deliberate.
 */
#ifndef READER_LAYOUTS_H
#define READER_LAYOUTS_H

#ifndef __bpf__
#include <stdbool.h>
#include <linux/types.h>
#endif

#define RD_BIG_ENTRIES 65536
#define RD_FULL_ENTRIES 64
#define RD_ARRAY_ENTRIES 16
#define RD_NAME_LEN 16

enum rd_color {
	RD_COLOR_NEG = -3,
	RD_COLOR_RED = 1,
	RD_COLOR_GREEN = 2,
	RD_COLOR_BLUE = 7,
};

/* u8 and u16, one byte of padding between. */
struct rd_small_key {
	__u8 a;
	__u16 b;
};

/* s32 then u64: four bytes of padding between. */
struct rd_small_value {
	__s32 s;
	__u64 u;
};

struct rd_flags_value {
	bool on;
	char tag;
	enum rd_color last;
	__s8 delta;
};

struct rd_name_value {
	char name[RD_NAME_LEN];
	__u32 len;
};

struct rd_where {
	__u16 cpu;
	__u16 node;
};

struct rd_nested_key {
	struct rd_where where;
	__u32 id;
};

struct rd_pair {
	__u8 kind;
	__u32 count;
};

struct rd_nested_value {
	struct rd_pair pairs[3];
	struct {
		__u64 sum;
		__u32 n;
	} total;
	__u16 grid[2][3];
};

/* Holes: 7 bytes after a, 2 after c, 7 after e. */
struct rd_holes_value {
	__u8 a;
	__u64 b;
	__u16 c;
	__u32 d;
	__u8 e;
};

struct rd_count_value {
	__u64 count;
	__u64 sum;
};

struct rd_percpu_value {
	__u64 n;
	__s32 s;
	bool seen;
	enum rd_color color;
};

/* 4 bytes: the kernel pads each CPU's copy to 8. */
struct rd_odd_value {
	__u16 a;
	__u8 b;
};

/* Written whole by one update: check and key_copy derive from seq and key. */
struct rd_churn_value {
	__u64 seq;
	__u64 check;
	__u32 key_copy;
	__u32 pad_free;
};

/* Key and value both have an id. */
struct rd_id_key {
	__u32 id;
};

struct rd_id_value {
	__u32 id;
	__u32 n;
};

union rd_either {
	__u32 as_u32;
	float as_float;
};

struct rd_union_value {
	__u32 id;
	union rd_either v;
};

struct rd_bits_value {
	__u32 lo : 4;
	__u32 hi : 28;
};

#endif /* READER_LAYOUTS_H */
