// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "bpf_telemetry.h"
#include "kstats_pins.h"
#include "kstats_reader.h"
#include "ktest.h"

#define TRACEFS "/sys/kernel/tracing"

int ktest_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

ssize_t ktest_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n = 0;

	*buf = 0;
	if (fd < 0)
		return -errno;
	while (got < len - 1 && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	return n < 0 ? -EIO : (ssize_t)got;
}

int ktest_init(struct ktest *t, const char *tag)
{
	const char *build = getenv("KSTATS_BUILD");
	char err[512];
	int ret;

	memset(t, 0, sizeof(*t));
	snprintf(t->build, sizeof(t->build), "%s", build ? build : "build");
	snprintf(t->obj_dir, sizeof(t->obj_dir), "%s/bpf", t->build);
	snprintf(t->pin_dir, sizeof(t->pin_dir), "%s/kernelstats-test-%d-%s",
		 KSTATS_BPFFS, (int)getpid(), tag);
	ret = kstats_ensure_bpffs(t->pin_dir, err, sizeof(err));
	if (ret)
		fprintf(stderr, "%s\n", err);
	return ret;
}

int ktest_tmpdir(char *dir, size_t len, const char *tag)
{
	if ((size_t)snprintf(dir, len, "/tmp/kstats-test-%d-%s-XXXXXX", (int)getpid(),
			     tag) >= len)
		return -ENAMETOOLONG;
	return mkdtemp(dir) ? 0 : -errno;
}

int ktest_init_own_objs(struct ktest *t, const char *tag, char *dir, size_t len)
{
	int ret = ktest_init(t, tag) ?: ktest_tmpdir(dir, len, tag);

	if (ret)
		return ret;
	if ((size_t)snprintf(t->obj_dir, sizeof(t->obj_dir), "%s/obj", dir) >=
	    sizeof(t->obj_dir))
		return -ENAMETOOLONG;
	return mkdir(t->obj_dir, 0755) ? -errno : 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

int ktest_rm_tree(const char *path)
{
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

/* The loader's status file and flag: /tmp/<pin dir name>-run, never /run. */
static void run_dir_of(const struct ktest *t, char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/%s-run", strrchr(t->pin_dir, '/') + 1);
}

void ktest_fini(struct ktest *t)
{
	char run_dir[300];

	if (*t->trace_dir && rmdir(t->trace_dir))
		fprintf(stderr, "cannot remove %s: %s\n", t->trace_dir, strerror(errno));
	ktest_rm_tree(t->pin_dir);
	run_dir_of(t, run_dir, sizeof(run_dir));
	ktest_rm_tree(run_dir);
	*t->trace_dir = 0;
}

int ktest_loader_up(void **state, struct ktest *t, const char *tag)
{
	*state = t;
	if (ktest_init(t, tag))
		return -1;
	return ktest_run_loader(t, NULL);
}

int ktest_teardown(void **state)
{
	if (*state)
		ktest_fini(*state);
	return 0;
}

int ktest_loader_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

pid_t ktest_spawn(const char *const *argv, const char *out_path,
		  const char *err_path)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(out, STDOUT_FILENO);
		dup2(err, STDERR_FILENO);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/*
 * groupadd exits 10 while another process (another test's useradd, say)
 * holds /etc/group's lock: a wait, not a reason to skip.  -f: a group that
 * appeared meanwhile is success too.  ktest_spawn() does not search PATH.
 */
#define GROUPADD_LOCKED 10
#define GROUPADD_TRIES 120
#define GROUPADD_WAIT_US 250000

struct group *ktest_ensure_group(const char *name)
{
	const char *const groupadd[] = { "/usr/sbin/groupadd", "-f", "--system", name, NULL };
	int i, status;
	pid_t pid;

	for (i = 0; i < GROUPADD_TRIES && !getgrnam(name); i++) {
		if (i)
			usleep(GROUPADD_WAIT_US);
		pid = ktest_spawn(groupadd, "/dev/null", "/dev/null");
		if (pid < 0)
			break;
		status = ktest_loader_status(pid);
		if (status && status != GROUPADD_LOCKED)
			break;
	}
	return getgrnam(name);
}

int ktest_run_loader(struct ktest *t, const char *const *extra)
{
	char loader[300], run_dir[300];
	const char *argv[32] = { loader, "--obj-dir", t->obj_dir, "--pin-dir",
				 t->pin_dir, "--run-dir", run_dir };
	int argc = 7;
	pid_t pid;

	snprintf(loader, sizeof(loader), "%s/kstats-loader", t->build);
	run_dir_of(t, run_dir, sizeof(run_dir));
	while (extra && *extra && argc < 31)
		argv[argc++] = *extra++;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execv(loader, (char *const *)argv);
		_exit(127);
	}
	return ktest_loader_status(pid);
}

const char *ktest_missing_feature(void)
{
	if (geteuid())
		return "needs root";
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return "kernel has no BTF (/sys/kernel/btf/vmlinux)";
	return NULL;
}

static int mount_tracefs(void)
{
	if (!access(TRACEFS "/instances", F_OK))
		return 0;
	if (mount("nodev", TRACEFS, "tracefs", 0, NULL))
		return -errno;
	return 0;
}

int ktest_trace_start(struct ktest *t, const char *const *events)
{
	char path[512];
	int ret = mount_tracefs();

	if (ret)
		return ret;
	snprintf(t->trace_dir, sizeof(t->trace_dir), TRACEFS "/instances/kstats-test-%d",
		 (int)getpid());
	if (mkdir(t->trace_dir, 0700) && errno != EEXIST) {
		ret = -errno;
		*t->trace_dir = 0;
		return ret;
	}
	snprintf(path, sizeof(path), "%s/trace_clock", t->trace_dir);
	ret = ktest_write_file(path, "mono");
	snprintf(path, sizeof(path), "%s/buffer_size_kb", t->trace_dir);
	ret = ret ?: ktest_write_file(path, "2048");
	for (; !ret && *events; events++) {
		snprintf(path, sizeof(path), "%s/events/%s/enable", t->trace_dir, *events);
		ret = ktest_write_file(path, "1");
	}
	return ret;
}

long ktest_trace_count(struct ktest *t, const char *event, uint64_t from_ns,
		       uint64_t to_ns)
{
	char path[512], line[1024], needle[128];
	unsigned long sec, usec;
	long count = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", t->trace_dir);
	snprintf(needle, sizeof(needle), " %s:", event);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *hit = strstr(line, needle), *p;

		if (line[0] == '#' || !hit)
			continue;
		/* "... [001] ..... 1234.567890: event: ..." */
		*hit = 0;
		p = strrchr(line, ' ');
		if (!p || sscanf(p + 1, "%lu.%lu", &sec, &usec) != 2)
			continue;
		uint64_t ns = sec * 1000000000ull + usec * 1000ull;

		count += ns >= from_ns && ns <= to_ns;
	}
	fclose(f);
	return count;
}

uint64_t ktest_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int ktest_compact_memory(void)
{
	return ktest_write_file("/proc/sys/vm/compact_memory", "1");
}

int ktest_hist_total(struct ktest *t, const char *obj, const char *map,
		     uint64_t *total)
{
	char obj_path[512], pin[512], err[KSTATS_ERR_LEN] = "";
	struct kstats_map_opts o = { .obj_path = obj_path, .map_name = map,
				     .pin_path = pin };
	struct kstats_map *m = NULL;
	int64_t *rows = NULL;
	size_t nrows, i, c, ncols;
	int ret;

	snprintf(obj_path, sizeof(obj_path), "%s/%s.bpf", t->obj_dir, obj);
	kstats_pin_path(pin, sizeof(pin), t->pin_dir, "map", obj, map);
	ret = kstats_map_open(&o, &m, err, sizeof(err));
	if (ret)
		goto out;
	ncols = kstats_map_ncols(m);
	rows = calloc(kstats_map_max_rows(m), ncols * sizeof(*rows));
	ret = rows ? kstats_map_read(m, rows, kstats_map_max_rows(m), &nrows,
				     err, sizeof(err)) : -ENOMEM;
	if (ret)
		goto out;
	*total = 0;
	for (i = 0; i < nrows; i++)
		for (c = kstats_map_nkey_cols(m); c < ncols; c++)
			*total += (uint64_t)rows[i * ncols + c];
out:
	if (ret)
		fprintf(stderr, "hist %s/%s: %s\n", obj, map, err);
	free(rows);
	kstats_map_close(m);
	return ret;
}
