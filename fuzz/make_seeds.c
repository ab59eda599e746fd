// SPDX-License-Identifier: GPL-2.0
/*
 * Writes seed BTF blobs for fuzz_layout into DIR: one with every kind the
 * layout walker meets (and rejects), built with libbpf's btf__add_*.  The
 * .BTF sections of the compiled objects are added by mk/fuzz.mk.
 */
#include <stdio.h>
#include <bpf/btf.h>

static int add_kinds(struct btf *b)
{
	int u8 = btf__add_int(b, "u8", 1, 0);
	int s32 = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	int u64 = btf__add_int(b, "u64", 8, 0);
	int ch = btf__add_int(b, "char", 1, BTF_INT_SIGNED);
	int bo = btf__add_int(b, "_Bool", 1, BTF_INT_BOOL);
	int e = btf__add_enum(b, "e", 4), e64, arr, grid, inner, un, fl, ptr, td, s;

	btf__add_enum_value(b, "E_A", -1);
	e64 = btf__add_enum64(b, "e64", 8, false);
	btf__add_enum64_value(b, "E64_A", 1ull << 40);
	arr = btf__add_array(b, s32, ch, 16);
	grid = btf__add_array(b, s32, arr, 2);
	inner = btf__add_struct(b, "inner", 8);
	btf__add_field(b, "x", u8, 0, 0);
	btf__add_field(b, "y", s32, 32, 0);
	un = btf__add_union(b, "u", 8);
	btf__add_field(b, "a", u64, 0, 0);
	fl = btf__add_float(b, "double", 8);
	ptr = btf__add_ptr(b, inner);
	td = btf__add_type_tag(b, "tag", btf__add_const(b, btf__add_volatile(b,
				btf__add_typedef(b, "u64_t", u64))));
	s = btf__add_struct(b, "all", 96);
	btf__add_field(b, "b", bo, 0, 0);
	btf__add_field(b, "e", e, 32, 0);
	btf__add_field(b, "e64", e64, 64, 0);
	btf__add_field(b, "name", grid, 128, 0);
	btf__add_field(b, "in", inner, 384, 0);
	btf__add_field(b, "t", td, 448, 0);
	btf__add_field(b, "lo", s32, 512, 4);
	btf__add_field(b, NULL, un, 576, 0);
	btf__add_field(b, "f", fl, 640, 0);
	btf__add_field(b, "p", ptr, 704, 0);
	return s < 0 ? s : 0;
}

int main(int argc, char **argv)
{
	struct btf *b = btf__new_empty();
	char path[4096];
	const void *raw;
	__u32 size;
	FILE *f;

	if (argc != 2 || !b || add_kinds(b)) {
		fprintf(stderr, "usage: make_seeds DIR\n");
		return 2;
	}
	raw = btf__raw_data(b, &size);
	snprintf(path, sizeof(path), "%s/all_kinds.btf", argv[1]);
	f = fopen(path, "w");
	if (!f || fwrite(raw, 1, size, f) != size || fclose(f)) {
		perror(path);
		return 1;
	}
	btf__free(b);
	return 0;
}
