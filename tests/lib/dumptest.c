// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/bpf.h>

#include "bpf_telemetry.h"
#include "dumptest.h"
#include "kstats_pins.h"

#define GOLDEN_DIR "tests/golden/dump"

const char *dt_path(struct dumptest *d, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", d->tmp, name);
	return buf;
}

int dt_add_object(struct dumptest *d, const char *rel)
{
	char target[512], link[512];
	const char *base = strrchr(rel, '/');

	snprintf(target, sizeof(target), "%s/%s", d->kt.build, rel);
	if (*target != '/') {
		char cwd[256];

		if (!getcwd(cwd, sizeof(cwd)))
			return -errno;
		snprintf(target, sizeof(target), "%s/%s/%s", cwd, d->kt.build, rel);
	}
	snprintf(link, sizeof(link), "%s/%s", d->kt.obj_dir, base ? base + 1 : rel);
	return symlink(target, link) ? -errno : 0;
}

int dt_init(struct dumptest *d, const char *tag, const char *const *objs)
{
	int ret;

	memset(d, 0, sizeof(*d));
	ret = ktest_init_own_objs(&d->kt, tag, d->tmp, sizeof(d->tmp));
	if (ret)
		return ret;
	if (chmod(d->tmp, 0755))
		return -errno;
	snprintf(d->kstats, sizeof(d->kstats), "%s/kstats", d->kt.build);
	for (; objs && *objs; objs++) {
		ret = dt_add_object(d, *objs);
		if (ret)
			return ret;
	}
	return ktest_run_loader(&d->kt, NULL) ? -EIO : 0;
}

void dt_fini(struct dumptest *d)
{
	ktest_fini(&d->kt);
	if (*d->tmp)
		ktest_rm_tree(d->tmp);
}

static int map_fd(struct dumptest *d, const char *obj, const char *map)
{
	char pin[512];

	kstats_pin_path(pin, sizeof(pin), d->kt.pin_dir, "map", obj, map);
	return bpf_obj_get(pin);
}

int dt_map_update(struct dumptest *d, const char *obj, const char *map,
		  const void *key, const void *value)
{
	int fd = map_fd(d, obj, map), ret;

	if (fd < 0)
		return -errno;
	ret = bpf_map_update_elem(fd, key, value, BPF_ANY) ? -errno : 0;
	close(fd);
	return ret;
}

int dt_map_lookup(struct dumptest *d, const char *obj, const char *map,
		  const void *key, void *value)
{
	int fd = map_fd(d, obj, map), ret;

	if (fd < 0)
		return -errno;
	ret = bpf_map_lookup_elem(fd, key, value) ? -errno : 0;
	close(fd);
	return ret;
}

int dt_map_delete(struct dumptest *d, const char *obj, const char *map,
		  const void *key)
{
	int fd = map_fd(d, obj, map), ret;

	if (fd < 0)
		return -errno;
	ret = bpf_map_delete_elem(fd, key) ? -errno : 0;
	close(fd);
	return ret;
}

void dt_buckets(uint64_t *b, const int64_t *pairs)
{
	memset(b, 0, BPF_TELEMETRY_NR_BUCKETS * sizeof(*b));
	for (; pairs[0] >= 0; pairs += 2)
		b[pairs[0]] = (uint64_t)pairs[1];
}

char *dt_read_all(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	if (!buf)
		return NULL;
	lseek(fd, 0, SEEK_SET);	/* a file rewound; fails harmlessly on a pipe */
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			char *b = realloc(buf, cap *= 2);

			if (!b)
				break;
			buf = b;
		}
	}
	buf[len] = 0;
	return buf;
}

static int run_argv(const char *const *argv, const char *input, struct dt_result *r)
{
	FILE *in = tmpfile(), *out = tmpfile(), *err = tmpfile();
	int status = -1;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (!in || !out || !err)
		goto done;
	if (input)
		fputs(input, in);
	fflush(in);
	rewind(in);
	pid = fork();
	if (!pid) {
		dup2(fileno(in), STDIN_FILENO);
		dup2(fileno(out), STDOUT_FILENO);
		dup2(fileno(err), STDERR_FILENO);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid)
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r->out = dt_read_all(fileno(out));
	r->err = dt_read_all(fileno(err));
done:
	r->status = status;
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	if (err)
		fclose(err);
	return r->out && r->err ? 0 : -ENOMEM;
}

static int build_argv(struct dumptest *d, bool as_nobody, const char *const *args,
		      const char **argv, int max)
{
	int n = 0;

	if (as_nobody) {
		argv[n++] = "setpriv";
		argv[n++] = "--reuid=65534";
		argv[n++] = "--regid=65534";
		argv[n++] = "--clear-groups";
		argv[n++] = "--";
	}
	argv[n++] = d->kstats;
	while (*args && n < max - 1)
		argv[n++] = *args++;
	argv[n] = NULL;
	return n;
}

int dt_run(struct dumptest *d, struct dt_result *r, bool as_nobody,
	   const char *const *args)
{
	const char *argv[64];

	build_argv(d, as_nobody, args, argv, 64);
	return run_argv(argv, NULL, r);
}

int dt_sh(const char *cmd, const char *input, struct dt_result *r)
{
	const char *argv[] = { "sh", "-c", cmd, NULL };

	return run_argv(argv, input, r);
}

void dt_result_free(struct dt_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

pid_t dt_spawn(struct dumptest *d, const char *const *args, int *out_fd, int *err_fd)
{
	const char *argv[64];
	int o[2], e[2];
	pid_t pid;

	build_argv(d, false, args, argv, 64);
	if (pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (!pid) {
		dup2(o[1], STDOUT_FILENO);
		dup2(e[1], STDERR_FILENO);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	*out_fd = o[0];
	*err_fd = e[0];
	return pid;
}

int dt_read_line(int fd, char *buf, size_t len, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t n = 0;

	while (n + 1 < len) {
		if (poll(&p, 1, timeout_ms) <= 0)
			return -ETIMEDOUT;
		if (read(fd, buf + n, 1) != 1)
			return -EIO;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = 0;
	return 0;
}

int dt_jq_all(const char *filter, const char *json)
{
	char cmd[4096];
	struct dt_result r;
	int status;

	if (!json || !*json) {	/* jq -e passes on empty input */
		fprintf(stderr, "jq '%s': no input\n", filter);
		return -ENODATA;
	}
	snprintf(cmd, sizeof(cmd), "jq -s -e '[.[] | %s] | length > 0 and all' >/dev/null",
		 filter);
	if (dt_sh(cmd, json, &r))
		return -ENOMEM;
	status = r.status;
	if (status)
		fprintf(stderr, "jq -e '%s' failed (%d): %s\n", filter, status, r.err);
	dt_result_free(&r);
	return status;
}

bool dt_have(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

int dt_golden(const char *name, const char *text)
{
	char path[512], cmd[1200], *want;
	struct dt_result r;
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), GOLDEN_DIR "/%s", name);
	if (getenv("KSTATS_UPDATE_GOLDEN"))
		return ktest_write_file(path, text);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "no golden file %s; make it with KSTATS_UPDATE_GOLDEN=1\n", path);
		return -ENOENT;
	}
	want = dt_read_all(fileno(f));
	fclose(f);
	ret = want && !strcmp(want, text) ? 0 : -EINVAL;
	free(want);
	if (ret) {
		snprintf(cmd, sizeof(cmd), "diff -u %s - | head -60 >&2", path);
		dt_sh(cmd, text, &r);
		fprintf(stderr, "%s", r.err);
		dt_result_free(&r);
	}
	return ret;
}
