// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kstats_pins.h"
#include "reader.h"

void rtest_obj_path(const struct ktest *t, const char *obj, char *buf, size_t len)
{
	snprintf(buf, len, "%s/tests/bpf/%s.bpf", t->build, obj);
}

void rtest_pin_path(const struct ktest *t, const char *obj, const char *map,
		    char *buf, size_t len)
{
	kstats_pin_path(buf, len, t->pin_dir, "map", obj, map);
}

int rtest_load(const struct ktest *t, const char *file, const char *obj,
	       struct bpf_object **out)
{
	char path[512], pin[512];
	struct bpf_object *o;
	struct bpf_map *map;
	int ret;

	rtest_obj_path(t, file, path, sizeof(path));
	o = bpf_object__open_file(path, NULL);
	if (!o)
		return -errno;
	bpf_object__for_each_map(map, o) {
		rtest_pin_path(t, obj, bpf_map__name(map), pin, sizeof(pin));
		ret = bpf_map__set_pin_path(map, pin);
		if (ret)
			goto err;
	}
	ret = bpf_object__load(o);
	if (ret)
		goto err;
	*out = o;
	return 0;
err:
	bpf_object__close(o);
	return ret;
}

int rtest_fixture_setup(struct rtest_fixture *f, const char *tag)
{
	memset(f, 0, sizeof(*f));
	f->ncpus = libbpf_num_possible_cpus();
	if (f->ncpus <= 0)
		return -1;
	f->no_kernel = ktest_missing_feature();
	if (f->no_kernel)
		return 0;
	if (ktest_init(&f->t, tag))
		return -1;
	rtest_obj_path(&f->t, "reader_layouts", f->obj_path, sizeof(f->obj_path));
	return rtest_load(&f->t, "reader_layouts", "reader_layouts", &f->obj);
}

void rtest_fixture_teardown(struct rtest_fixture *f)
{
	if (f->no_kernel)
		return;
	bpf_object__close(f->obj);
	ktest_fini(&f->t);
}

static struct rtest_fixture *group_fx;
static const char *group_tag;

static int group_setup(void **state)
{
	(void)state;
	return rtest_fixture_setup(group_fx, group_tag);
}

static int group_teardown(void **state)
{
	(void)state;
	rtest_fixture_teardown(group_fx);
	return 0;
}

int rtest_main(const char *name, const struct CMUnitTest *tests, size_t n,
	       struct rtest_fixture *f, const char *tag)
{
	group_fx = f;
	group_tag = tag;
	return _cmocka_run_group_tests(name, tests, n, group_setup, group_teardown);
}

int rtest_map_fd(const struct rtest_fixture *f, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(f->obj, name);

	if (!m)
		fail_msg("reader_layouts.bpf has no map %s", name);
	return bpf_map__fd(m);
}

struct kstats_map_opts rtest_opts(const struct rtest_fixture *f, const char *name,
				  char *pin, size_t len)
{
	struct kstats_map_opts o = { .obj_path = f->obj_path, .map_name = name,
				     .pin_path = pin };

	rtest_pin_path(&f->t, "reader_layouts", name, pin, len);
	return o;
}

void rtest_expect_open_error(const struct kstats_map_opts *o, int errnum,
			     const char *why)
{
	char err[KSTATS_ERR_LEN] = "";
	struct kstats_map *m = NULL;
	int ret = kstats_map_open(o, &m, err, sizeof(err));

	kstats_map_close(m);
	if (ret != -errnum || m || !strstr(err, why))
		fail_msg("open %s gave %d \"%s\", want %d with \"%s\"",
			 o->pin_path, ret, err, -errnum, why);
}

int rtest_reread(struct rtest_read *r)
{
	return kstats_map_read(r->m, r->rows, kstats_map_max_rows(r->m), &r->nrows,
			       r->err, sizeof(r->err));
}

int rtest_read(const struct kstats_map_opts *o, struct rtest_read *r)
{
	int ret;

	memset(r, 0, sizeof(*r));
	ret = kstats_map_open(o, &r->m, r->err, sizeof(r->err));
	if (ret)
		return ret;
	r->ncols = kstats_map_ncols(r->m);
	r->rows = calloc(kstats_map_max_rows(r->m), (r->ncols ?: 1) * sizeof(*r->rows));
	if (!r->rows)
		return -ENOMEM;
	return rtest_reread(r);
}

void rtest_read_free(struct rtest_read *r)
{
	kstats_map_close(r->m);
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

int rtest_col(const struct kstats_map *m, const char *name)
{
	size_t i;

	for (i = 0; i < kstats_map_ncols(m); i++)
		if (!strcmp(kstats_map_column(m, i)->name, name))
			return (int)i;
	return -1;
}

int64_t rtest_get(const struct rtest_read *r, const int64_t *row, const char *name)
{
	int c = rtest_col(r->m, name);

	if (c < 0)
		fail_msg("no column named %s", name);
	return row[c];
}

const int64_t *rtest_find_row(const struct rtest_read *r, const int64_t *key,
			      size_t nkey)
{
	const int64_t *found = NULL;
	size_t i;

	for (i = 0; i < r->nrows; i++) {
		const int64_t *row = r->rows + i * r->ncols;

		if (memcmp(row, key, nkey * sizeof(*key)))
			continue;
		if (found)
			fail_msg("key seen twice in one read (row %zu)", i);
		found = row;
	}
	return found;
}

int rtest_fail_batch_in_this_thread(int errnum)
{
#ifdef __x86_64__
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 3),
		/* Low half of the bpf(2) command argument (little endian). */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, BPF_MAP_LOOKUP_BATCH, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (errnum & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	/* Without SECCOMP_FILTER_FLAG_TSYNC the filter binds this thread only. */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -errno;
	return 0;
#else
	(void)errnum;
	return -EOPNOTSUPP;
#endif
}
