// SPDX-License-Identifier: GPL-2.0
/*
 * Where the reader's types come from: the object, or the pinned map's own
 * BTF when the object is missing or describes another version of the map;
 * maps created with bpf_map_create (with BTF loaded by btf__load_into_kernel,
 * or none); reopens; and two versions of one object whose structs
 * differ (field added, reordered, widened) read by this same binary.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "asuser.h"
#include "ktest.h"
#include "reader.h"
#include "../bpf/reader_evolve.h"

#define OBJ "reader_evolve"
#define MAP "evolve_map"
#define NKEYS 50

static struct ktest t1, t2;		/* v1 and v2 pinned side by side */
static struct bpf_object *obj1, *obj2;
static char v1_path[512], v2_path[512], pin1[512], pin2[512], tmp_dir[256];
static const char *no_kernel;

static int setup(void **state)
{
	(void)state;
	no_kernel = ktest_missing_feature();
	if (no_kernel)
		return 0;
	if (ktest_init(&t1, "btf1") || ktest_init(&t2, "btf2"))
		return -1;
	if (ktest_tmpdir(tmp_dir, sizeof(tmp_dir), "btf"))
		return -1;
	rtest_obj_path(&t1, "reader_evolve_v1", v1_path, sizeof(v1_path));
	rtest_obj_path(&t2, "reader_evolve_v2", v2_path, sizeof(v2_path));
	rtest_pin_path(&t1, OBJ, MAP, pin1, sizeof(pin1));
	rtest_pin_path(&t2, OBJ, MAP, pin2, sizeof(pin2));
	if (mkdir(t1.pin_dir, 0700) || mkdir(t2.pin_dir, 0700))
		return -1;
	return rtest_load(&t1, "reader_evolve_v1", OBJ, &obj1) ?:
	       rtest_load(&t2, "reader_evolve_v2", OBJ, &obj2);
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	if (no_kernel)
		return 0;
	bpf_object__close(obj1);
	bpf_object__close(obj2);
	ktest_fini(&t1);
	ktest_fini(&t2);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
	return system(cmd);
}

#define NEED_KERNEL() do { if (no_kernel) skip(); } while (0)

/* Entry k of a version of evolve_map: its key and value, and their row. */
typedef void (*entry_fn)(int k, void *key, void *value, int64_t *row);

struct version {
	const char *cols;	/* the columns' names, in order */
	size_t ncols, nkey;
	entry_fn entry;
};

static void v1_entry(int k, void *kp, void *vp, int64_t *row)
{
	struct evolve_v1_key *key = kp;
	struct evolve_v1_value *v = vp;

	memset(key, 0, sizeof(*key));
	memset(v, 0, sizeof(*v));
	key->id = k * 13;
	key->cpu = k % 4;
	v->count = 0x80000000u + k;
	v->total = (1ull << 50) + k;
	v->max = 65535 - k;
	memcpy(row, (int64_t[]){ key->id, key->cpu, v->count, v->total, v->max },
	       5 * sizeof(*row));
}

static void v2_entry(int k, void *kp, void *vp, int64_t *row)
{
	struct evolve_v2_key *key = kp;
	struct evolve_v2_value *v = vp;

	memset(key, 0, sizeof(*key));
	memset(v, 0, sizeof(*v));
	key->cpu = k % 4;
	key->zone = 200 + k % 3;
	key->id = k * 13;
	v->total = (1ull << 51) + k;
	v->count = (1ull << 33) + k;	/* needs the widened u64 */
	v->max = 70000 + k;		/* needs the widened u32 */
	v->min = k;
	memcpy(row, (int64_t[]){ key->cpu, key->zone, key->id, v->total, v->count,
				 v->max, v->min }, 7 * sizeof(*row));
}

static const struct version ver1 = { "id cpu count total max", 5, 2, v1_entry };
static const struct version ver2 = { "cpu zone id total count max min", 7, 3, v2_entry };

/* Room for either version's key, value and row. */
struct entry {
	__u64 key[2], value[4];
	int64_t row[8];
};

static void fill(int fd, const struct version *ver)
{
	struct entry e;
	int k;

	for (k = 0; k < NKEYS; k++) {
		ver->entry(k, e.key, e.value, e.row);
		assert_int_equal(bpf_map_update_elem(fd, e.key, e.value, BPF_ANY), 0);
	}
}

/* r holds exactly the NKEYS entries of ver, with its columns. */
static void expect_version(const struct rtest_read *r, const struct version *ver)
{
	char names[256] = "";
	const int64_t *row;
	struct entry e;
	size_t i, n = 0;
	int k;

	for (i = 0; i < r->ncols; i++)
		n += snprintf(names + n, sizeof(names) - n, "%s%s", i ? " " : "",
			      kstats_map_column(r->m, i)->name);
	assert_string_equal(names, ver->cols);
	assert_int_equal(r->nrows, NKEYS);
	for (k = 0; k < NKEYS; k++) {
		ver->entry(k, e.key, e.value, e.row);
		row = rtest_find_row(r, e.row, ver->nkey);
		assert_non_null(row);
		for (i = ver->nkey; i < ver->ncols; i++)
			if (row[i] != e.row[i])
				fail_msg("entry %d: %s is %lld, want %lld", k,
					 kstats_map_column(r->m, i)->name,
					 (long long)row[i], (long long)e.row[i]);
	}
}

static void read_ok(const char *obj_path, const char *pin, struct rtest_read *r,
		    enum kstats_btf_source source, const char *note)
{
	struct kstats_map_opts o = { .obj_path = obj_path, .map_name = MAP, .pin_path = pin };

	if (rtest_read(&o, r))
		fail_msg("%s: %s", pin, r->err);
	assert_int_equal(r->m->source, source);
	if (!note)
		assert_string_equal(kstats_map_source_note(r->m), "");
	else if (!strstr(kstats_map_source_note(r->m), note))
		fail_msg("note \"%s\" lacks \"%s\"", kstats_map_source_note(r->m), note);
}

/* Each version read with its own object; then each with the other's. */
static void test_two_versions_one_binary(void **state)
{
	struct rtest_read r;

	(void)state;
	NEED_KERNEL();
	fill(bpf_map__fd(bpf_object__find_map_by_name(obj1, MAP)), &ver1);
	fill(bpf_map__fd(bpf_object__find_map_by_name(obj2, MAP)), &ver2);
	read_ok(v1_path, pin1, &r, KSTATS_BTF_OBJECT, NULL);
	expect_version(&r, &ver1);
	rtest_read_free(&r);
	read_ok(v2_path, pin2, &r, KSTATS_BTF_OBJECT, NULL);
	expect_version(&r, &ver2);
	rtest_read_free(&r);
	/* Same sizes, other fields: only the map's own BTF reads it right. */
	read_ok(v2_path, pin1, &r, KSTATS_BTF_MAP, "differ from the pinned map's");
	expect_version(&r, &ver1);
	rtest_read_free(&r);
	read_ok(v1_path, pin2, &r, KSTATS_BTF_MAP, "differ from the pinned map's");
	expect_version(&r, &ver2);
	rtest_read_free(&r);
}

static void test_object_missing_uses_map_btf(void **state)
{
	char missing[300];
	struct rtest_read r;

	(void)state;
	NEED_KERNEL();
	snprintf(missing, sizeof(missing), "%s/gone.bpf", tmp_dir);
	read_ok(missing, pin1, &r, KSTATS_BTF_MAP, "gone.bpf: no such object");
	expect_version(&r, &ver1);
	rtest_read_free(&r);
	read_ok(NULL, pin2, &r, KSTATS_BTF_MAP, NULL);
	expect_version(&r, &ver2);
	rtest_read_free(&r);
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n = 0;

	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			n = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return in < 0 || out < 0 || n < 0 ? -1 : 0;
}

/* An update replaces the object on disk: a reopen must not read v1's types. */
static void test_object_replaced_on_disk(void **state)
{
	char path[300], next[310];
	struct rtest_read r;

	(void)state;
	NEED_KERNEL();
	snprintf(path, sizeof(path), "%s/" OBJ ".bpf", tmp_dir);
	snprintf(next, sizeof(next), "%s.new", path);
	assert_int_equal(copy_file(v1_path, path), 0);
	read_ok(path, pin1, &r, KSTATS_BTF_OBJECT, NULL);
	expect_version(&r, &ver1);
	rtest_read_free(&r);
	assert_int_equal(copy_file(v2_path, next), 0);
	assert_int_equal(rename(next, path), 0);
	read_ok(path, pin2, &r, KSTATS_BTF_OBJECT, NULL);
	expect_version(&r, &ver2);
	rtest_read_free(&r);
	read_ok(path, pin1, &r, KSTATS_BTF_MAP, "differ");
	expect_version(&r, &ver1);
	rtest_read_free(&r);
}

struct member_case {
	const char *obj, *pin;
	const char *want;	/* in the note; NULL: no note */
};

/*
 * As a member (no CAP_SYS_ADMIN: the map's own BTF is out of reach): 0 when
 * the note of the pin read with the object is as wanted.
 */
static int member_note(void *arg, char *msg, size_t len)
{
	const struct member_case *c = arg;
	struct kstats_map_opts o = { .obj_path = c->obj, .map_name = MAP,
				     .pin_path = c->pin };
	char err[KSTATS_ERR_LEN] = "";
	struct kstats_map *m;
	const char *note;
	int ok;

	if (kstats_map_open(&o, &m, err, sizeof(err))) {
		snprintf(msg, len, "member: %s", err);
		return -1;
	}
	note = kstats_map_source_note(m);
	ok = m->source == KSTATS_BTF_OBJECT &&
	     (c->want ? strstr(note, c->want) != NULL : !*note);
	if (!ok)
		snprintf(msg, len, "member: %s with %s: note \"%s\", want %s", c->pin,
			 c->obj, note, c->want ?: "none");
	kstats_map_close(m);
	return !ok;
}

static void as_member(const char *obj, const char *pin, const char *want)
{
	struct member_case c = { obj, pin, want };
	char msg[KSTATS_ERR_LEN * 2];

	if (asuser_run(&(struct asuser){ .uid = 65534, .gid = 65534 }, member_note, &c,
		       msg, sizeof(msg)))
		fail_msg("%s", msg);
}

/*
 * A kstats member reads with the object's types, unchecked against the
 * map's BTF (CAP_SYS_ADMIN), but the map's key/value type ids are in its
 * info: an object whose ids differ gets a note, as root gets one when the
 * types differ (members got none, with v2's columns on v1's map).
 */
static void test_member_notes_other_type_ids(void **state)
{
	(void)state;
	NEED_KERNEL();
	assert_int_equal(chmod(t1.pin_dir, 0755), 0);
	assert_int_equal(chmod(pin1, 0444), 0);
	as_member(v1_path, pin1, NULL);
	as_member(v2_path, pin1, "may not be the map's (BTF type ids 8/17, the map's 8/15");
	assert_int_equal(chmod(pin1, 0600), 0);
	assert_int_equal(chmod(t1.pin_dir, 0700), 0);
}

/* IN_OPEN events of path since the watch was added. */
static int count_opens(int ifd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t n;
	int opens = 0;
	char *p;

	while ((n = read(ifd, buf, sizeof(buf))) > 0)
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			opens += !!(ev->mask & IN_OPEN);
		}
	return opens;
}

/*
 * The object is opened once and parsed from that fd: a check by one open
 * and a parse by a second open of the name let the name meanwhile give a
 * FIFO, on whose open the parse hung.
 */
static void test_object_opened_once(void **state)
{
	char path[300];
	struct rtest_read r;
	int ifd;

	(void)state;
	NEED_KERNEL();
	snprintf(path, sizeof(path), "%s/once.bpf", tmp_dir);
	assert_int_equal(copy_file(v1_path, path), 0);
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(ifd >= 0);
	/* With reads and closes between, so two opens are not merged into one event. */
	assert_true(inotify_add_watch(ifd, path, IN_OPEN | IN_ACCESS | IN_CLOSE) >= 0);
	read_ok(path, pin1, &r, KSTATS_BTF_OBJECT, NULL);
	expect_version(&r, &ver1);
	rtest_read_free(&r);
	assert_int_equal(count_opens(ifd), 1);
	close(ifd);
}

/* Opening again resolves the same layouts; an open map keeps its own. */
static void test_layouts_reopened(void **state)
{
	struct rtest_read r;

	(void)state;
	NEED_KERNEL();
	read_ok(v1_path, pin1, &r, KSTATS_BTF_OBJECT, NULL);
	rtest_read_free(&r);
	read_ok(v1_path, pin1, &r, KSTATS_BTF_OBJECT, NULL);
	expect_version(&r, &ver1);
	assert_int_equal(rtest_reread(&r), 0);
	expect_version(&r, &ver1);
	rtest_read_free(&r);
}

/*
 * A hash map of u32 -> { count or total: u64, max: u32 }, created by hand
 * with BTF loaded into the kernel by libbpf, pinned at pin.
 */
static int create_btf_map(const char *name, bool total, const char *pin)
{
	struct btf *btf = btf__new_empty();
	int u32 = btf__add_int(btf, "unsigned int", 4, 0);
	int u64 = btf__add_int(btf, "long long unsigned int", 8, 0);
	int s = btf__add_struct(btf, "stat", 16), fd;

	btf__add_field(btf, total ? "total" : "count", u64, 0, 0);
	btf__add_field(btf, "max", u32, 64, 0);
	assert_int_equal(btf__load_into_kernel(btf), 0);
	LIBBPF_OPTS(bpf_map_create_opts, mo, .btf_fd = btf__fd(btf),
		    .btf_key_type_id = u32, .btf_value_type_id = s);
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, name, 4, 16, 32, &mo);
	assert_true(fd >= 0);
	btf__free(btf);
	assert_int_equal(bpf_obj_pin(fd, pin), 0);
	return fd;
}

/* The padding after max is not a column: it gets garbage. */
static void put_stat(int fd, __u32 key, __u64 count, __u32 max)
{
	struct { __u64 count; __u32 max, pad; } v = { count, max, 0xdeadbeef };

	assert_int_equal(bpf_map_update_elem(fd, &key, &v, BPF_ANY), 0);
}

static void test_map_with_loaded_btf(void **state)
{
	char pin[512];
	struct rtest_read r;
	int fd, k;

	(void)state;
	NEED_KERNEL();
	snprintf(pin, sizeof(pin), "%s/map_handmade_btf_only", t1.pin_dir);
	fd = create_btf_map("btf_only", false, pin);
	for (k = 0; k < 20; k++)
		put_stat(fd, k, 1000ull * k, 7u * k);
	close(fd);
	read_ok(NULL, pin, &r, KSTATS_BTF_MAP, NULL);
	assert_int_equal(r.ncols, 3);
	assert_string_equal(kstats_map_column(r.m, 0)->name, "key");
	assert_int_equal(r.nrows, 20);
	for (k = 0; k < 20; k++) {
		int64_t key = k;
		const int64_t *row = rtest_find_row(&r, &key, 1);

		assert_non_null(row);
		assert_int_equal(rtest_get(&r, row, "count"), 1000 * k);
		assert_int_equal(rtest_get(&r, row, "max"), 7 * k);
	}
	rtest_read_free(&r);
}

static __u32 map_id_of(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	assert_int_equal(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	return info.id;
}

static void expect_count(struct rtest_read *r, int fd, int64_t count)
{
	if (rtest_reread(r))
		fail_msg("%s", r->err);
	assert_int_equal(r->nrows, 1);
	assert_int_equal(rtest_get(r, r->rows, "count"), count);
	assert_int_equal(kstats_map_id(r->m), map_id_of(fd));
}

/*
 * A long-lived reader across unload and load: each read is of the map the
 * pin names now (it read the replaced map, 63 against the new one's 15),
 * nothing pinned is an error until something is, and a map of other
 * columns is -ESTALE.
 */
static void test_read_follows_replaced_pin(void **state)
{
	struct kstats_map_opts o = { .pin_path = NULL };
	char pin[512];
	struct rtest_read r;
	int a, b, c;

	(void)state;
	NEED_KERNEL();
	snprintf(pin, sizeof(pin), "%s/map_handmade_reload", t1.pin_dir);
	o.pin_path = pin;
	a = create_btf_map("reload", false, pin);
	put_stat(a, 0, 63, 1);
	if (rtest_read(&o, &r))
		fail_msg("%s", r.err);
	expect_count(&r, a, 63);
	assert_int_equal(unlink(pin), 0);
	b = create_btf_map("reload", false, pin);
	put_stat(b, 0, 15, 1);
	expect_count(&r, b, 15);
	assert_int_equal(unlink(pin), 0);
	assert_int_equal(rtest_reread(&r), -ENOENT);
	assert_non_null(strstr(r.err, "no map is pinned there any more"));
	assert_int_equal(bpf_obj_pin(b, pin), 0);	/* the same map again */
	expect_count(&r, b, 15);
	assert_int_equal(unlink(pin), 0);
	c = create_btf_map("reload", true, pin);
	put_stat(c, 0, 7, 1);
	assert_int_equal(rtest_reread(&r), -ESTALE);
	assert_non_null(strstr(r.err, "other columns; open it again"));
	rtest_read_free(&r);
	assert_int_equal(unlink(pin), 0);
	close(a);
	close(b);
	close(c);
}

static int create_plain_map(const char *name, __u32 ks, __u32 vs, char *pin, size_t len)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, name, ks, vs, 64, NULL);

	assert_true(fd >= 0);
	snprintf(pin, len, "%s/map_handmade_%s", t1.pin_dir, name);
	assert_int_equal(bpf_obj_pin(fd, pin), 0);
	return fd;
}

static void expect_open_error(const char *obj_path, const char *pin, int errnum,
			      const char *why)
{
	struct kstats_map_opts o = { .obj_path = obj_path, .map_name = MAP, .pin_path = pin };

	rtest_expect_open_error(&o, errnum, why);
}

/* No BTF in the map: the object's types, if the sizes agree. */
static void test_map_without_btf(void **state)
{
	char pin[512], small[512], missing[300];
	struct rtest_read r;
	int fd, small_fd;

	(void)state;
	NEED_KERNEL();
	fd = create_plain_map("plain", sizeof(struct evolve_v1_key),
			      sizeof(struct evolve_v1_value), pin, sizeof(pin));
	fill(fd, &ver1);
	read_ok(v1_path, pin, &r, KSTATS_BTF_OBJECT, NULL);
	expect_version(&r, &ver1);
	rtest_read_free(&r);
	snprintf(missing, sizeof(missing), "%s/gone.bpf", tmp_dir);
	expect_open_error(NULL, pin, ENODATA, "the map has no BTF");
	expect_open_error(missing, pin, ENODATA, "gone.bpf: no such object");
	small_fd = create_plain_map("small", 4, 16, small, sizeof(small));
	expect_open_error(v1_path, small, EINVAL,
			  "BTF says key 8/value 24 bytes but the map has 4/16");
	close(fd);
	close(small_fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_versions_one_binary),
		cmocka_unit_test(test_object_missing_uses_map_btf),
		cmocka_unit_test(test_object_replaced_on_disk),
		cmocka_unit_test(test_layouts_reopened),
		cmocka_unit_test(test_object_opened_once),
		cmocka_unit_test(test_map_with_loaded_btf),
		cmocka_unit_test(test_read_follows_replaced_pin),
		cmocka_unit_test(test_member_notes_other_type_ids),
		cmocka_unit_test(test_map_without_btf),
	};

	return cmocka_run_group_tests_name("reader_btf", tests, setup, teardown);
}
