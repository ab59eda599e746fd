// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "kmain.h"
#include "metrics.h"

const char *mt_build(void)
{
	const char *build = getenv("KSTATS_BUILD");

	return build ? build : "build";
}

static int libbpf_warnings(enum libbpf_print_level level, const char *fmt,
			   va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static int open_load(struct bpf_object **objp, const char *path,
		     const char *sec_prefix)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	int ret;

	libbpf_set_print(libbpf_warnings);
	obj = bpf_object__open_file(path, NULL);
	if (!obj)
		return -errno;
	bpf_object__for_each_program(prog, obj)
		bpf_program__set_autoload(prog, !strncmp(bpf_program__section_name(prog),
							 sec_prefix, strlen(sec_prefix)));
	ret = bpf_object__load(obj);
	if (ret) {
		fprintf(stderr, "%s: load: %s\n", path, strerror(-ret));
		bpf_object__close(obj);
		return ret;
	}
	*objp = obj;
	return 0;
}

int mt_obj_open(struct mt_obj *o, const char *name, const char *sec_prefix)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/bpf/%s.bpf", mt_build(), name);
	o->obj = NULL;
	return open_load(&o->obj, path, sec_prefix);
}

int mt_test_obj_open(struct mt_obj *o, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/tests/bpf/%s.bpf", mt_build(), name);
	o->obj = NULL;
	return open_load(&o->obj, path, "raw_tp/");
}

int mt_clock_set(const struct mt_obj *o, enum mt_clock clk, __u64 ns)
{
	int fd = mt_map_fd(o, "test_clock_map");
	__u32 key = clk;

	if (fd < 0)
		return fd;
	return bpf_map_update_elem(fd, &key, &ns, BPF_ANY) ? -errno : 0;
}

void mt_obj_close(struct mt_obj *o)
{
	bpf_object__close(o->obj);
	o->obj = NULL;
}

int mt_map_fd(const struct mt_obj *o, const char *map)
{
	struct bpf_map *m = bpf_object__find_map_by_name(o->obj, map);

	return m ? bpf_map__fd(m) : -ENOENT;
}

int mt_run(const struct mt_obj *o, const char *prog, const __u64 *args,
	   size_t nargs)
{
	struct bpf_program *p = bpf_object__find_program_by_name(o->obj, prog);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args,
		    .ctx_size_in = nargs * sizeof(*args));

	if (!p)
		return -ENOENT;
	if (bpf_prog_test_run_opts(bpf_program__fd(p), &opts))
		return -errno;
	return opts.retval ? -EPROTO : 0;
}

int mt_hist(const struct mt_obj *o, const char *map, __u32 key,
	    struct bpf_telemetry_accumulator *acc)
{
	int fd = mt_map_fd(o, map);

	if (fd < 0)
		return fd;
	if (!bpf_map_lookup_elem(fd, &key, acc))
		return 0;
	if (errno != ENOENT)
		return -errno;
	memset(acc, 0, sizeof(*acc));
	return 0;
}

static uint64_t acc_total(const struct bpf_telemetry_accumulator *acc)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
		total += acc->buckets[i];
	return total;
}

int mt_key_total(const struct mt_obj *o, const char *map, __u32 key,
		 uint64_t *total)
{
	struct bpf_telemetry_accumulator acc;
	int ret = mt_hist(o, map, key, &acc);

	*total = ret ? 0 : acc_total(&acc);
	return ret;
}

int mt_hist_sum(const struct mt_obj *o, const char *map,
		struct bpf_telemetry_accumulator *sum)
{
	struct bpf_telemetry_accumulator acc;
	int fd = mt_map_fd(o, map), ret;
	__u32 key, next, *prev = NULL;
	size_t i;

	if (fd < 0)
		return fd;
	memset(sum, 0, sizeof(*sum));
	while (!(ret = bpf_map_get_next_key(fd, prev, &next))) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &acc))
			return -errno;
		for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
			sum->buckets[i] += acc.buckets[i];
	}
	return ret == -ENOENT ? 0 : ret;
}

void mt_expect_total(const struct mt_obj *o, const char *map, uint64_t want)
{
	struct bpf_telemetry_accumulator sum;

	assert_int_equal(mt_hist_sum(o, map, &sum), 0);
	assert_int_equal(acc_total(&sum), want);
}

int mt_bucket_between(const struct bpf_telemetry_accumulator *acc,
		      uint64_t lo_us, uint64_t hi_us)
{
	int got = mt_single_bucket(acc);
	int lo = (int)bpf_telemetry_bucket(lo_us) - 1;
	int hi = (int)bpf_telemetry_bucket(hi_us) + 1;

	if (got >= lo && got <= hi)
		return 0;
	fprintf(stderr, "interval %llu..%llu us: want one event in buckets %d..%d, got %d\n",
		(unsigned long long)lo_us, (unsigned long long)hi_us, lo, hi, got);
	return -1;
}

int mt_single_bucket(const struct bpf_telemetry_accumulator *acc)
{
	int i, found = -1;

	for (i = 0; i < BPF_TELEMETRY_NR_BUCKETS; i++)
		if (acc->buckets[i])
			found = i;
	return acc_total(acc) == 1 ? found : -1;
}

int mt_dict_name(const struct mt_obj *o, const char *dict, __u32 id,
		 struct kstats_name *name)
{
	int fd = mt_map_fd(o, dict);

	if (fd < 0)
		return fd;
	return bpf_map_lookup_elem(fd, &id, name) ? -errno : 0;
}

uint64_t mt_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t mt_sleep_us(clockid_t clk, unsigned int us)
{
	uint64_t t0 = mt_clock_ns(clk);

	usleep(us);
	return (mt_clock_ns(clk) - t0) / 1000;
}

uint64_t mt_us_since(clockid_t clk, uint64_t t0_ns)
{
	return (mt_clock_ns(clk) - t0_ns) / 1000;
}

int mt_kmem_open(struct mt_kmem *k)
{
	char path[512];
	__u32 key = 0;
	int ret;

	memset(k, 0, sizeof(*k));
	snprintf(path, sizeof(path), "%s/tests/bpf/kmem.bpf", mt_build());
	ret = open_load(&k->obj.obj, path, "raw_tp/");
	if (ret)
		return ret;
	k->fd = mt_map_fd(&k->obj, "kmem_map");
	ret = mt_run(&k->obj, "kmem_addr", NULL, 0);
	if (!ret && bpf_map_lookup_elem(mt_map_fd(&k->obj, "kmem_addr_map"), &key,
					&k->kaddr))
		ret = -errno;
	if (!ret && !k->kaddr)
		ret = -EFAULT;
	if (ret)
		mt_kmem_close(k);
	return ret;
}

void mt_kmem_close(struct mt_kmem *k)
{
	mt_obj_close(&k->obj);
}

/* An array value is updated in place, so its address stays valid. */
__u64 mt_kmem_put(struct mt_kmem *k, const void *data, size_t len)
{
	size_t off = (k->used + 7) & ~(size_t)7;
	__u32 key = 0;

	if (off + len > sizeof(k->page))
		return 0;
	memcpy(k->page + off, data, len);
	if (bpf_map_update_elem(k->fd, &key, k->page, BPF_ANY))
		return 0;
	k->used = off + len;
	return k->kaddr + off;
}

__u64 mt_kmem_str(struct mt_kmem *k, const char *s)
{
	return mt_kmem_put(k, s, strlen(s) + 1);
}

static const struct btf *vmlinux_btf(void)
{
	static struct btf *btf;

	if (!btf)
		btf = btf__load_vmlinux_btf();
	return btf;
}

static const struct btf_type *kernel_struct(const char *type)
{
	const struct btf *btf = vmlinux_btf();
	int id = btf ? btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT) : -ENOENT;

	return id > 0 ? btf__type_by_id(btf, id) : NULL;
}

int mt_btf_member_offset(const char *type, const char *member)
{
	const struct btf_type *t = kernel_struct(type);
	const struct btf_member *m;
	int i;

	if (!t)
		return -ENOENT;
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(vmlinux_btf(), m->name_off), member))
			return btf_member_bit_offset(t, i) / 8;
	return -ENOENT;
}

int mt_btf_struct_size(const char *type)
{
	const struct btf_type *t = kernel_struct(type);

	return t ? (int)t->size : -ENOENT;
}

#define OOM_ADJ_PATH "/proc/self/oom_score_adj"

int mt_get_oom_score_adj(int *adj)
{
	FILE *f = fopen(OOM_ADJ_PATH, "r");
	int ret = 0;

	if (!f)
		return -errno;
	if (fscanf(f, "%d", adj) != 1)
		ret = -EIO;
	fclose(f);
	return ret;
}

int mt_set_oom_score_adj(int adj)
{
	char buf[16];
	int fd = open(OOM_ADJ_PATH, O_WRONLY | O_CLOEXEC), len, ret = 0;

	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%d", adj);
	if (write(fd, buf, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

const struct mt_adj_case mt_adj_band_edges[] = {
	{ -1000, KSTATS_PROCESS_STATE_NATIVE },
	{ -999, KSTATS_PROCESS_STATE_SYSTEM },
	{ -801, KSTATS_PROCESS_STATE_SYSTEM },
	{ -800, KSTATS_PROCESS_STATE_PERSISTENT },
	{ -1, KSTATS_PROCESS_STATE_PERSISTENT },
	{ 0, KSTATS_PROCESS_STATE_FOREGROUND },
	{ 99, KSTATS_PROCESS_STATE_FOREGROUND },
	{ 100, KSTATS_PROCESS_STATE_VISIBLE },
	{ 199, KSTATS_PROCESS_STATE_VISIBLE },
	{ 200, KSTATS_PROCESS_STATE_PERCEPTIBLE },
	{ 499, KSTATS_PROCESS_STATE_PERCEPTIBLE },
	{ 500, KSTATS_PROCESS_STATE_SERVICE_BACKGROUND },
	{ 899, KSTATS_PROCESS_STATE_SERVICE_BACKGROUND },
	{ 900, KSTATS_PROCESS_STATE_CACHED },
	{ 1000, KSTATS_PROCESS_STATE_CACHED },
};
const size_t mt_adj_band_edges_len =
	sizeof(mt_adj_band_edges) / sizeof(mt_adj_band_edges[0]);

int mt_env_open(struct mt_env *e, const char *name)
{
	int ret = mt_kmem_open(&e->kmem);

	e->obj.obj = NULL;
	if (!ret)
		ret = mt_obj_open(&e->obj, name, "raw_tp/");
	if (ret)
		mt_env_close(e);
	return ret;
}

void mt_env_close(struct mt_env *e)
{
	mt_obj_close(&e->obj);
	mt_kmem_close(&e->kmem);
}

int mt_env_setup(void **state)
{
	struct mt_env *e = *state;

	return mt_env_open(e, e->name);
}

int mt_env_teardown(void **state)
{
	mt_env_close(*state);
	return 0;
}

int mt_main(const char *name, struct CMUnitTest *tests, size_t n,
	    int (*setup)(void **state), int (*teardown)(void **state), void *state)
{
	size_t i;

	for (i = 0; i < n; i++) {
		tests[i].setup_func = setup;
		tests[i].teardown_func = teardown;
		tests[i].initial_state = state;
	}
	return ktest_main(name, tests, n, NULL, NULL);
}
