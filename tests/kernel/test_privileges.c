// SPDX-License-Identifier: GPL-2.0
/*
 * The privilege model, enforced by the running kernel: the pins have the
 * owner and mode the objects declare; the reader's map fd is read-only; a
 * process with CAP_BPF outside group kstats can neither open the pins nor
 * find the maps by id, while a member reads them.  Children drop to a uid
 * and gid that no account has (the kernel checks numbers, not names).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <linux/capability.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "asuser.h"
#include "kstats_reader.h"
#include "kmain.h"
#include "ktest.h"
#include "ltest.h"

#define GROUP "kstats"
#define CAPS_BPF (1ull << CAP_BPF)
#define MSG_LEN 1024

static struct ktest t;
static gid_t kstats_gid;
static uid_t nobody_uid;		/* no account has it */

/* One map of each kind, found from the metadata of the loaded objects. */
struct pinned_map {
	char obj[600], name[64], pin[512];
	__u32 id;
};
static struct pinned_map shared_map, private_map;	/* _GRO, and private */
static char prog_pin[512];

/* make install creates the group; without it the loader falls back to root. */
static int ensure_group(void)
{
	struct group *gr = ktest_ensure_group(GROUP);

	if (!gr) {
		fprintf(stderr, "cannot create group " GROUP "\n");
		return -1;
	}
	kstats_gid = gr->gr_gid;
	return 0;
}

static uid_t unused_uid(void)
{
	uid_t uid = 3000000000u + (uid_t)getpid() % 100000;

	while (getpwuid(uid) || getgrgid(uid))
		uid++;
	return uid;
}

typedef void (*object_fn)(const char *path, const char *obj,
			  const struct kstats_objmeta *meta, void *arg);

/* Calls fn with the metadata of every object in the object directory. */
static int for_each_object(object_fn fn, void *arg)
{
	char path[600], obj[64], err[256];
	struct kstats_objmeta meta;
	struct dirent *de;
	DIR *d = opendir(t.obj_dir);
	int ret = 0;

	if (!d)
		return -errno;
	while (!ret && (de = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", t.obj_dir, de->d_name);
		if (!strstr(de->d_name, ".bpf") || kstats_obj_name(path, obj, sizeof(obj)))
			continue;
		ret = kstats_objmeta_read(path, &meta, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "%s\n", err);
			break;
		}
		fn(path, obj, &meta, arg);
		kstats_objmeta_free(&meta);
	}
	closedir(d);
	return ret;
}

/* Pinned map of obj, or NULL when its object was skipped on this kernel. */
static const char *map_pin(const char *obj, const char *name)
{
	static char pin[512];

	kstats_pin_path(pin, sizeof(pin), t.pin_dir, "map", obj, name);
	return access(pin, F_OK) ? NULL : pin;
}

/* Calls fn(link pin, program pin, meta) for each attached program of obj. */
static unsigned int for_each_prog_pin(const char *path, const char *obj,
				      const struct kstats_objmeta *meta,
				      void (*fn)(const char *link, const char *pin,
						 const struct kstats_prog_meta *pm))
{
	struct bpf_object *bo = bpf_object__open_file(path, NULL);
	const struct kstats_prog_meta *pm;
	struct bpf_program *prog;
	char link[512], pin[512];
	unsigned int n = 0;

	if (!bo)
		return 0;
	bpf_object__for_each_program(prog, bo) {
		pm = kstats_objmeta_prog(meta, bpf_program__name(prog));
		kstats_pin_path(link, sizeof(link), t.pin_dir, "link", obj,
				bpf_program__name(prog));
		kstats_pin_path(pin, sizeof(pin), t.pin_dir, "prog", obj,
				bpf_program__section_name(prog));
		if (!pm || access(link, F_OK))
			continue;
		fn(link, pin, pm);
		n++;
	}
	bpf_object__close(bo);
	return n;
}

static void remember_prog(const char *link, const char *pin,
			  const struct kstats_prog_meta *pm)
{
	(void)link; (void)pm;
	snprintf(prog_pin, sizeof(prog_pin), "%s", pin);
}

/* The reader checks need a row: a hash map with no event yet has none. */
static bool map_has_entries(const char *pin)
{
	char key[256];	/* >= any key size here */
	int fd = bpf_obj_get(pin);
	bool has;

	if (fd < 0)
		return false;
	has = !bpf_map_get_next_key(fd, NULL, key);
	close(fd);
	return has;
}

/* Remembers the first non-empty _GRO map, private map and program pin. */
static void remember_pins(const char *path, const char *obj,
			  const struct kstats_objmeta *meta, void *arg)
{
	struct pinned_map *m;
	const char *pin;
	size_t i;

	(void)arg;
	for (i = 0; i < meta->nmaps; i++) {
		const struct kstats_map_meta *mm = &meta->maps[i];

		if (mm->mode == 0440 && !strcmp(mm->gid, GROUP))
			m = &shared_map;
		else if (mm->mode == 0600)
			m = &private_map;
		else
			continue;
		pin = map_pin(obj, mm->name);
		if (*m->name || !pin || (m == &shared_map && !map_has_entries(pin)))
			continue;
		snprintf(m->obj, sizeof(m->obj), "%s", path);
		snprintf(m->name, sizeof(m->name), "%s", mm->name);
		snprintf(m->pin, sizeof(m->pin), "%s", pin);
		m->id = kstats_pin_id(pin);
	}
	if (!*prog_pin)
		for_each_prog_pin(path, obj, meta, remember_prog);
}

static int setup(void **state)
{
	nobody_uid = unused_uid();
	if (ensure_group() || ktest_loader_up(state, &t, "privs") ||
	    for_each_object(remember_pins, NULL))
		return -1;
	if (!*shared_map.name || !shared_map.id || !*private_map.name || !*prog_pin) {
		fprintf(stderr, "no _GRO map, private map and program pinned in %s\n",
			t.pin_dir);
		return -1;
	}
	return 0;
}

static void assert_owner(const char *path, const char *uid, const char *gid,
			 unsigned int mode)
{
	struct passwd *pw = getpwnam(uid);
	struct group *gr = getgrnam(gid);
	struct stat st;

	assert_non_null(pw);
	assert_non_null(gr);
	if (stat(path, &st))
		fail_msg("%s: %s", path, strerror(errno));
	if (st.st_uid != pw->pw_uid || st.st_gid != gr->gr_gid ||
	    (st.st_mode & 07777) != mode)
		fail_msg("%s is %u:%u %04o, want %s:%s %04o", path, st.st_uid,
			 st.st_gid, st.st_mode & 07777, uid, gid, mode);
}

static void assert_prog_owner(const char *link, const char *pin,
			      const struct kstats_prog_meta *pm)
{
	assert_owner(link, pm->uid, pm->gid, pm->mode);
	assert_owner(pin, pm->uid, pm->gid, pm->mode);
}

struct pin_count {
	unsigned int maps, progs;
};

static void assert_object_pins(const char *path, const char *obj,
			       const struct kstats_objmeta *meta, void *arg)
{
	struct pin_count *n = arg;
	const char *pin;
	size_t i;

	for (i = 0; i < meta->nmaps; i++) {
		pin = map_pin(obj, meta->maps[i].name);
		if (!pin)
			continue;
		assert_owner(pin, meta->maps[i].uid, meta->maps[i].gid,
			     meta->maps[i].mode);
		n->maps++;
	}
	n->progs += for_each_prog_pin(path, obj, meta, assert_prog_owner);
}

static void test_pins_have_declared_owner_and_mode(void **state)
{
	struct pin_count n = {};

	(void)state;
	assert_owner(t.pin_dir, "root", GROUP, 0750);
	assert_int_equal(for_each_object(assert_object_pins, &n), 0);
	assert_true(n.maps >= 2);
	assert_true(n.progs >= 1);
	/* The macros' modes, resolved to this machine's group. */
	assert_owner(shared_map.pin, "root", GROUP, 0440);
	assert_owner(private_map.pin, "root", "root", 0600);
}

/* A bpf-map fd that was not open when before was taken. */
static int new_bpf_map_fd(const fd_set *before)
{
	char link[64], target[64];
	int fd;

	for (fd = 0; fd < FD_SETSIZE; fd++) {
		ssize_t n;

		if (FD_ISSET(fd, before))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0 && (target[n] = 0, !strcmp(target, "anon_inode:bpf-map")))
			return fd;
	}
	return -1;
}

static void snapshot_fds(fd_set *set)
{
	int fd;

	FD_ZERO(set);
	for (fd = 0; fd < FD_SETSIZE; fd++)
		if (fcntl(fd, F_GETFD) != -1)
			FD_SET(fd, set);
}

static struct kstats_map *reader_open(const char *obj, const char *name,
				      const char *pin, char *err)
{
	struct kstats_map_opts o = { .obj_path = obj, .map_name = name, .pin_path = pin };
	struct kstats_map *m = NULL;

	return kstats_map_open(&o, &m, err, KSTATS_ERR_LEN) ? NULL : m;
}

/* Whatever libkstats opens, the kernel will not let it write. */
static void test_reader_fd_cannot_update_the_map(void **state)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), key = 0;
	char err[KSTATS_ERR_LEN] = "";
	struct kstats_map *m;
	void *value;
	fd_set before;
	int fd, flags;

	(void)state;
	snapshot_fds(&before);
	m = reader_open(shared_map.obj, shared_map.name, shared_map.pin, err);
	if (!m)
		fail_msg("%s", err);
	fd = new_bpf_map_fd(&before);
	assert_true(fd >= 0);
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	assert_int_equal(info.id, shared_map.id);
	flags = fcntl(fd, F_GETFL);
	assert_int_equal(flags & O_ACCMODE, O_RDONLY);
	value = calloc(1, info.value_size);
	assert_non_null(value);
	assert_int_equal(bpf_map_get_next_key(fd, NULL, &key), 0);
	assert_int_equal(bpf_map_lookup_elem(fd, &key, value), 0);
	assert_int_equal(bpf_map_update_elem(fd, &key, value, BPF_ANY), -EPERM);
	assert_int_equal(bpf_map_delete_elem(fd, &key), -EPERM);
	free(value);
	kstats_map_close(m);
}

/* Fails the test with what fn (a check as nobody_uid) found wrong. */
static void run_as(gid_t gid, const gid_t *groups, size_t ngroups, __u64 caps,
		   asuser_fn fn)
{
	struct asuser u = { .uid = nobody_uid, .gid = gid, .groups = groups,
			    .ngroups = ngroups, .caps = caps };
	char msg[MSG_LEN];

	if (asuser_run(&u, fn, NULL, msg, sizeof(msg)))
		fail_msg("as uid %u: %s", nobody_uid, *msg ? msg : "child failed");
}

#define EXPECT(cond, ...) do {						\
	if (!(cond)) {							\
		snprintf(msg, len, __VA_ARGS__);			\
		return -1;						\
	}								\
} while (0)

static int open_pin(const char *pin, __u32 flags)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = flags);
	int fd = bpf_obj_get_opts(pin, &o);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? -errno : 0;
}

/* CAP_BPF is really in effect: with unprivileged BPF off, it creates maps. */
static int have_cap_bpf(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "kstats_probe", 4, 4, 1, NULL);

	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static int outsider_with_cap_bpf(void *arg, char *msg, size_t len)
{
	char err[KSTATS_ERR_LEN] = "";
	__u32 next;
	int ret;

	(void)arg;
	EXPECT(have_cap_bpf(), "CAP_BPF is not effective: map create failed");
	ret = open_pin(shared_map.pin, BPF_F_RDONLY);
	EXPECT(ret == -EACCES, "opening %s read-only gave %d, want -EACCES",
	       shared_map.pin, ret);
	EXPECT(!reader_open(shared_map.obj, shared_map.name, shared_map.pin, err) &&
	       strstr(err, "Permission denied"), "libkstats opened it: %s", err);
	/* Nor around bpffs: map ids need CAP_SYS_ADMIN. */
	ret = bpf_map_get_fd_by_id(shared_map.id);
	EXPECT(ret == -EPERM, "map id %u gave %d, want -EPERM", shared_map.id, ret);
	ret = bpf_map_get_next_id(0, &next);
	EXPECT(ret == -EPERM, "map id walk gave %d, want -EPERM", ret);
	EXPECT(!opendir(t.pin_dir) && errno == EACCES, "pin directory is listable");
	return 0;
}

static void test_outsider_with_cap_bpf_cannot_open_maps(void **state)
{
	(void)state;
	run_as(nobody_uid, NULL, 0, CAPS_BPF, outsider_with_cap_bpf);
}

/* Reads every row through libkstats, as kstats dump and pull do. */
static int read_shared_map(char *msg, size_t len)
{
	char err[KSTATS_ERR_LEN] = "";
	struct kstats_map *m = reader_open(shared_map.obj, shared_map.name,
					   shared_map.pin, err);
	int64_t *rows;
	size_t nrows = 0;
	int ret;

	EXPECT(m, "libkstats cannot open %s: %s", shared_map.pin, err);
	rows = calloc(kstats_map_max_rows(m), kstats_map_ncols(m) * sizeof(*rows));
	ret = rows ? kstats_map_read(m, rows, kstats_map_max_rows(m), &nrows,
				     err, sizeof(err)) : -ENOMEM;
	free(rows);
	kstats_map_close(m);
	EXPECT(!ret && nrows >= 1, "read %s: %d rows, %s", shared_map.pin,
	       (int)nrows, err);
	return 0;
}

static int member_with_cap_bpf(void *arg, char *msg, size_t len)
{
	char err[KSTATS_ERR_LEN] = "";
	struct kstats_map_opts no_obj = { .pin_path = shared_map.pin };
	struct kstats_map *m = NULL;
	int ret;

	(void)arg;
	EXPECT(have_cap_bpf(), "CAP_BPF is not effective: map create failed");
	if (read_shared_map(msg, len))
		return -1;
	ret = open_pin(shared_map.pin, 0);
	EXPECT(ret == -EACCES, "read-write open gave %d, want -EACCES", ret);
	ret = open_pin(private_map.pin, BPF_F_RDONLY);
	EXPECT(ret == -EACCES, "private map %s gave %d, want -EACCES",
	       private_map.pin, ret);
	/* Programs open only read-write: 0440 keeps them root's. */
	ret = open_pin(prog_pin, 0);
	EXPECT(ret == -EACCES, "program pin %s gave %d, want -EACCES", prog_pin, ret);
	/* The map's own BTF comes by id (CAP_SYS_ADMIN): readers pass --obj. */
	ret = kstats_map_open(&no_obj, &m, err, sizeof(err));
	kstats_map_close(m);
	EXPECT(ret == -EPERM, "map BTF by id gave %d (%s), want -EPERM", ret, err);
	return 0;
}

static void test_member_with_cap_bpf_reads_maps(void **state)
{
	(void)state;
	run_as(nobody_uid, &kstats_gid, 1, CAPS_BPF, member_with_cap_bpf);
}

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	return !uname(&u) && sscanf(u.release, "%d.%d", &ma, &mi) == 2 &&
	       (ma > major || (ma == major && mi >= minor));
}

/*
 * Since Linux 5.19, kernel.unprivileged_bpf_disabled gates only map and
 * program creation: opening a pin and reading the map need no capability,
 * only the pin's file permissions.  Before, every bpf() call needed CAP_BPF.
 */
static int member_without_caps(void *arg, char *msg, size_t len)
{
	int ret = open_pin(shared_map.pin, BPF_F_RDONLY);

	(void)arg;
	EXPECT(!have_cap_bpf(), "map create worked without CAP_BPF");
	if (kernel_at_least(5, 19))
		return read_shared_map(msg, len);
	EXPECT(ret == -EPERM, "before 5.19 want -EPERM, got %d", ret);
	return 0;
}

static void test_member_without_caps(void **state)
{
	FILE *f = fopen("/proc/sys/kernel/unprivileged_bpf_disabled", "r");
	int disabled = 0;

	(void)state;
	if (!f || fscanf(f, "%d", &disabled) != 1 || !disabled) {
		if (f)
			fclose(f);
		skip();	/* unprivileged BPF allowed: nothing to show */
	}
	fclose(f);
	run_as(nobody_uid, &kstats_gid, 1, 0, member_without_caps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pins_have_declared_owner_and_mode),
		cmocka_unit_test(test_reader_fd_cannot_update_the_map),
		cmocka_unit_test(test_outsider_with_cap_bpf_cannot_open_maps),
		cmocka_unit_test(test_member_with_cap_bpf_reads_maps),
		cmocka_unit_test(test_member_without_caps),
	};

	return KTEST_MAIN("privileges", tests, setup, ktest_teardown);
}
