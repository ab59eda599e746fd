// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/bpf.h>

#include "kstats_pins.h"
#include "ltest.h"

#define MAX_ARGS 24
/* Far beyond any run here: a blocked loader fails its test, never hangs it. */
#define LTEST_TIMEOUT_S 600

int ltest_init(struct ltest *t, const char *tag)
{
	int ret;

	memset(t, 0, sizeof(*t));
	ret = ktest_init_own_objs(&t->kt, tag, t->dir, sizeof(t->dir));
	if (ret)
		return ret;
	snprintf(t->run_dir, sizeof(t->run_dir), "%s/run", t->dir);
	snprintf(t->status_path, sizeof(t->status_path), "%s/loader-status.json", t->run_dir);
	snprintf(t->out_path, sizeof(t->out_path), "%s/output", t->dir);
	return 0;
}

int ltest_setup(void **state, char prefix, bool with_compaction)
{
	static int seq;
	struct ltest *t = calloc(1, sizeof(*t));
	char tag[16];

	snprintf(tag, sizeof(tag), "%c%d", prefix, seq++);
	*state = t;
	if (!t || ltest_init(t, tag))
		return -1;
	return with_compaction ? ltest_add(t, "bpf/compaction.bpf", "compaction") : 0;
}

int ltest_teardown(void **state)
{
	if (*state)
		ltest_fini(*state);
	free(*state);
	return 0;
}

void ltest_fini(struct ltest *t)
{
	ktest_fini(&t->kt);
	if (*t->dir)
		ktest_rm_tree(t->dir);
	json_object_put(t->status);
	t->status = NULL;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY | O_CLOEXEC), out, ret = 0;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		ret = -errno;
		close(in);
		return ret;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			ret = -EIO;
			break;
		}
	if (n < 0)
		ret = -errno;
	close(in);
	close(out);
	return ret;
}

int ltest_add(struct ltest *t, const char *rel, const char *as)
{
	char from[512], to[512];

	snprintf(from, sizeof(from), "%s/%s", t->kt.build, rel);
	snprintf(to, sizeof(to), "%s/%s.bpf", t->kt.obj_dir, as);
	return copy_file(from, to);
}

int ltest_add_bytes(struct ltest *t, const char *as, const void *data, size_t len)
{
	char to[512];
	int fd, ret = 0;

	snprintf(to, sizeof(to), "%s/%s.bpf", t->kt.obj_dir, as);
	fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (len && write(fd, data, len) != (ssize_t)len)
		ret = -EIO;
	close(fd);
	return ret;
}

void ltest_remove(struct ltest *t, const char *as)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s.bpf", t->kt.obj_dir, as);
	unlink(path);
}

/*
 * The loader unit's CapabilityBoundingSet (doc/privileges.md): root then
 * execs with CAP_BPF, CAP_PERFMON and CAP_CHOWN, and no CAP_SYS_ADMIN.
 */
static int drop_to_unit_caps(void)
{
	int cap;

	for (cap = 0; prctl(PR_CAPBSET_READ, cap) >= 0; cap++)
		if (cap != CAP_BPF && cap != CAP_PERFMON && cap != CAP_CHOWN &&
		    prctl(PR_CAPBSET_DROP, cap))
			return -errno;
	return 0;
}

/* Waits for pid at most timeout_s: its exit code, 128 + signal, or -ETIMEDOUT. */
static int wait_bounded(pid_t pid, int timeout_s)
{
	const struct timespec pause = { 0, 20 * 1000 * 1000 };
	int status, waited = 0;

	while (!waitpid(pid, &status, WNOHANG)) {
		if (waited++ >= timeout_s * 50) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "kstats-loader still running after %d s: killed\n",
				timeout_s);
			return -ETIMEDOUT;
		}
		nanosleep(&pause, NULL);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * The loader (--obj-dir, --pin-dir, --run-dir and extra), its stdout on
 * out_fd (-1: the output file) and stderr on the output file, which is
 * echoed afterwards for run.sh's failure log; then its status file is read.
 */
static int run_loader(struct ltest *t, int out_fd, int timeout_s, const char *const *extra)
{
	const char *argv[MAX_ARGS + 8] = { NULL, "--obj-dir", t->kt.obj_dir,
					   "--pin-dir", t->kt.pin_dir, "--run-dir", t->run_dir };
	char loader[300], buf[4096];
	int argc = 7, fd, ret;
	ssize_t n;
	pid_t pid;

	snprintf(loader, sizeof(loader), "%s/kstats-loader", t->kt.build);
	argv[0] = loader;
	while (*extra && argc < MAX_ARGS + 7)
		argv[argc++] = *extra++;
	fd = open(t->out_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (!pid) {
		dup2(out_fd >= 0 ? out_fd : fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		signal(SIGPIPE, SIG_DFL);	/* as a shell would start it */
		if (t->capped && drop_to_unit_caps())
			_exit(126);
		execv(loader, (char *const *)argv);
		_exit(127);
	}
	ret = pid < 0 ? -errno : wait_bounded(pid, timeout_s);
	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(STDERR_FILENO, buf, n) < 0)
			break;
	close(fd);
	json_object_put(t->status);
	t->status = access(t->status_path, F_OK) ? NULL :
		    json_object_from_file(t->status_path);
	return ret;
}

static int run_va(struct ltest *t, int out_fd, int timeout_s, va_list ap)
{
	const char *extra[MAX_ARGS + 1];
	int n = 0;

	while (n < MAX_ARGS && (extra[n] = va_arg(ap, const char *)))
		n++;
	extra[n] = NULL;
	return run_loader(t, out_fd, timeout_s, extra);
}

int ltest_run(struct ltest *t, ...)
{
	va_list ap;
	int ret;

	va_start(ap, t);
	ret = run_va(t, -1, LTEST_TIMEOUT_S, ap);
	va_end(ap);
	return ret;
}

int ltest_run_bounded(struct ltest *t, int out_fd, int timeout_s, ...)
{
	va_list ap;
	int ret;

	va_start(ap, timeout_s);
	ret = run_va(t, out_fd, timeout_s, ap);
	va_end(ap);
	return ret;
}

bool ltest_output_has(const struct ltest *t, const char *s)
{
	char buf[65536];
	ssize_t n;
	int fd = open(t->out_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return strstr(buf, s);
}

bool ltest_kmsg_has(int fd, const char *text)
{
	char rec[2048];
	ssize_t n;

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;	/* overwritten records: read on */
		rec[n] = 0;
		if (strstr(rec, "kstats-loader[") && strstr(rec, text))
			return true;
	}
	return false;
}

struct json_object *ltest_named(struct json_object *obj, const char *array,
				const char *name)
{
	struct json_object *arr, *e, *n;
	size_t i;

	if (!obj || !json_object_object_get_ex(obj, array, &arr))
		return NULL;
	for (i = 0; i < json_object_array_length(arr); i++) {
		e = json_object_array_get_idx(arr, i);
		if (json_object_object_get_ex(e, "name", &n) &&
		    !strcmp(json_object_get_string(n), name))
			return e;
	}
	return NULL;
}

struct json_object *ltest_obj(const struct ltest *t, const char *name)
{
	return ltest_named(t->status, "objects", name);
}

const char *ltest_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return "(missing)";
	return json_object_get_string(v);
}

uint64_t ltest_u64(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return 0;
	return json_object_get_uint64(v);
}

const char *ltest_outcome(const struct ltest *t, const char *obj, const char *prog)
{
	struct json_object *o = ltest_obj(t, obj);

	return ltest_str(prog ? ltest_named(o, "programs", prog) : o, "outcome");
}

/* The last of the n renames puts the original name back. */
int ltest_renames(int n)
{
	char old[16], name[16];
	int i;

	if (n <= 0)
		return 0;
	if (prctl(PR_GET_NAME, old))
		return -errno;
	for (i = 0; i < n - 1; i++) {
		snprintf(name, sizeof(name), "kstats-lt-%d", i % 10);
		if (prctl(PR_SET_NAME, name))
			return -errno;
	}
	return prctl(PR_SET_NAME, old) ? -errno : 0;
}

int ltest_rename_count(const struct ltest *t, const char *obj, uint64_t *count)
{
	char pin[512];
	__u32 tgid = getpid();
	int fd, ret = 0;

	kstats_pin_path(pin, sizeof(pin), t->kt.pin_dir, "map", obj, "rename_count_map");
	fd = bpf_obj_get(pin);
	if (fd < 0)
		return -errno;
	*count = 0;
	if (bpf_map_lookup_elem(fd, &tgid, count) && errno != ENOENT)
		ret = -errno;
	close(fd);
	return ret;
}

uint32_t ltest_link_prog(const char *pin)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(pin);

	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.prog_id = 0;
	close(fd);
	return info.prog_id;
}

static bool prog_uses_map(__u32 prog_id, __u32 map_id)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[64], i;
	int fd = bpf_prog_get_fd_by_id(prog_id);
	bool found = false;

	if (fd < 0)
		return false;
	info.nr_map_ids = 64;
	info.map_ids = (__u64)(unsigned long)ids;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		for (i = 0; i < info.nr_map_ids && i < 64; i++)
			found |= ids[i] == map_id;
	close(fd);
	return found;
}

int ltest_links_using_map(uint32_t map_id)
{
	__u32 id = 0;
	int n = 0, fd;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);

		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0)
			continue;	/* went away meanwhile */
		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			n += prog_uses_map(info.prog_id, map_id);
		close(fd);
	}
	return n;
}

bool ltest_prog_gone(uint32_t prog_id)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	int i, fd;

	for (i = 0; i < 200; i++) {
		fd = bpf_prog_get_fd_by_id(prog_id);
		if (fd < 0 && errno == ENOENT)
			return true;
		if (fd >= 0)
			close(fd);
		nanosleep(&pause, NULL);
	}
	return false;
}
