// SPDX-License-Identifier: GPL-2.0
/* Opening an object's ELF with libbpf, first in the prober child. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kstats_fileio.h"
#include "loader.h"

struct bpf_object *obj_open_mem(const char *name, const void *elf, size_t len)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = name);

	return bpf_object__open_mem(elf, len, &opts);
}

/*
 * libbpf parses in a child first: a crash (SEGV in libbpf 1.1.2) costs one FAILED_OBJECT.
 * A replacement is this binary run afresh: a child forked from threads may hang on a lock.
 */
struct probe_req {
	__u64 len;
	char name[KSTATS_NAME_LEN];
};

struct probe_reply {
	__s32 ok;
	char why[sizeof(((struct obj_load *)0)->libbpf_err)];
};

/* What an executed prober says first: it got as far as serving. */
#define PROBER_HELLO 0x6b737470u
#define PROBER_HELLO_MS 10000
/* libbpf loops forever on some malformed BTF (a typedef of itself, doc/loader.md). */
#define PROBE_PARSE_MS 5000
/* The whole run's probing, prober starts included: well inside TimeoutStartSec=60s. */
#define PROBE_BUDGET_MS 30000

static struct {
	pthread_mutex_t lock;
	pid_t pid;
	int fd;
	int start_err;		/* no prober could be started: in-process from then on */
	__u64 spent_ns;		/* of PROBE_BUDGET_MS */
	size_t left;		/* objects not probed yet */
} prober = { PTHREAD_MUTEX_INITIALIZER, -1, -1, 0, 0, 0 };

/* An equal share of what is left: however many objects hang, the rest get a turn. */
static int probe_share_ms(void)
{
	__u64 budget = PROBE_BUDGET_MS * 1000000ull, ms;

	if (prober.spent_ns >= budget)
		return 0;
	ms = (budget - prober.spent_ns) / 1000000 / (prober.left ? prober.left : 1);
	return ms < PROBE_PARSE_MS ? (int)ms : PROBE_PARSE_MS;
}

/* A read that ends within ms (< 0: no limit): -ETIMEDOUT, or -EPIPE when the peer is gone. */
static int read_within(int fd, void *buf, size_t len, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	__u64 end = kstats_clock_ns(CLOCK_MONOTONIC) + ms * 1000000ull, now;
	ssize_t n;

	while (len) {
		now = kstats_clock_ns(CLOCK_MONOTONIC);
		if (ms >= 0 && now >= end)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, ms < 0 ? -1 : (int)((end - now + 999999) / 1000000));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -ETIMEDOUT;
		n = read(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		buf = (char *)buf + n;
		len -= n;
	}
	return 0;
}

/* The child: parses, closes, then answers, so a crash is the object's. */
static __attribute__((noreturn)) void probe_serve(int fd)
{
	struct probe_reply rep;
	struct probe_req req;
	struct bpf_object *obj;
	void *elf;

	libbpf_set_print(libbpf_log);
	log_unhold();
	log_verbose = 0;
	while (!read_within(fd, &req, sizeof(req), -1)) {
		req.name[sizeof(req.name) - 1] = 0;
		elf = req.len <= OBJECT_MAX_BYTES ? malloc(req.len ?: 1) : NULL;
		if (!elf || read_within(fd, elf, req.len, -1))
			_exit(2);
		memset(&rep, 0, sizeof(rep));
		log_capture(rep.why, sizeof(rep.why));
		obj = obj_open_mem(req.name, elf, req.len);
		rep.ok = !!obj;
		if (!obj && !*rep.why)
			snprintf(rep.why, sizeof(rep.why), "%s", strerror(errno));
		bpf_object__close(obj);
		free(elf);
		if (kstats_write_full(fd, &rep, sizeof(rep)))
			_exit(2);
	}
	_exit(0);
}

static void prober_stop(void)
{
	if (prober.fd < 0)
		return;
	close(prober.fd);	/* the prober reads EOF and exits */
	prober.fd = -1;
	waitpid(prober.pid, NULL, 0);
}

/* kstats-loader --probe-server: a prober that prober_spawn() started. */
void probe_server_main(void)
{
	__u32 hello = PROBER_HELLO;

	close_range(PROBE_SERVER_FD + 1, ~0U, 0);
	/* Executed as /proc/self/exe, it would be "exe" in ps and crash reports. */
	prctl(PR_SET_NAME, "kstats-loader");
	if (kstats_write_full(PROBE_SERVER_FD, &hello, sizeof(hello)))
		_exit(2);
	probe_serve(PROBE_SERVER_FD);
}

/* Threads running: a new process image, with fd as PROBE_SERVER_FD. */
static int prober_spawn(int fd)
{
	char *argv[] = { "kstats-loader", PROBE_SERVER_ARG, NULL };
	posix_spawn_file_actions_t fa;
	int ret, high = -1;

	if (fd == PROBE_SERVER_FD) {	/* dup2 onto itself would keep CLOEXEC */
		high = fcntl(fd, F_DUPFD_CLOEXEC, PROBE_SERVER_FD + 1);
		if (high < 0)
			return -errno;
		fd = high;
	}
	ret = posix_spawn_file_actions_init(&fa);
	if (!ret) {
		ret = posix_spawn_file_actions_adddup2(&fa, fd, PROBE_SERVER_FD) ?:
		      posix_spawn(&prober.pid, "/proc/self/exe", &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
	}
	if (high >= 0)
		close(high);
	return -ret;
}

static int prober_start(bool threads, int hello_ms)
{
	__u32 hello = 0;
	int sv[2], ret;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	/* No thread yet: the child is this process as it is, holding none of the run's files. */
	if (!threads && !(prober.pid = fork())) {
		close_range(3, sv[1] - 1, 0);
		close_range(sv[1] + 1, ~0U, 0);
		probe_serve(sv[1]);
	}
	ret = threads ? prober_spawn(sv[1]) : prober.pid < 0 ? -EAGAIN : 0;
	close(sv[1]);
	/* An executed prober dying before it serves is not its objects' fault. */
	if (!ret && threads) {
		ret = read_within(sv[0], &hello, sizeof(hello), hello_ms);
		ret = ret ?: hello == PROBER_HELLO ? 0 : -ECHILD;
		if (ret) {
			kill(prober.pid, SIGKILL);
			waitpid(prober.pid, NULL, 0);
		}
	}
	if (ret) {
		close(sv[0]);
		return ret;
	}
	prober.fd = sv[0];
	return 0;
}

/* Before the threads start: a failure leaves it to the first object. */
void probe_start(size_t nobjs)
{
	pthread_mutex_lock(&prober.lock);
	prober.left = nobjs;
	atexit(prober_stop);	/* probe_open() follows only this */
	if (prober.fd < 0)
		prober_start(false, 0);
	pthread_mutex_unlock(&prober.lock);
}

/* The prober died or hung on this object: how, for its outcome. */
static void prober_lost(struct obj_load *l, int err, int ms)
{
	int status = 0;

	close(prober.fd);
	prober.fd = -1;
	if (err == -ETIMEDOUT)
		kill(prober.pid, SIGKILL);
	waitpid(prober.pid, &status, 0);	/* status stays 0 if it fails */
	if (err == -ETIMEDOUT)
		set_outcome(l->res, KSTATS_FAILED_OBJECT, "libbpf did not finish parsing "
			    "it within %d ms (malformed BTF?); rebuild it", ms);
	else if (WIFSIGNALED(status))
		set_outcome(l->res, KSTATS_FAILED_OBJECT, "libbpf crashed parsing it (%s)",
			    strsignal(WTERMSIG(status)));
	else
		set_outcome(l->res, KSTATS_FAILED_OBJECT, "libbpf cannot open it: unknown error");
}

void probe_skip(void)
{
	pthread_mutex_lock(&prober.lock);
	prober.left -= !!prober.left;
	pthread_mutex_unlock(&prober.lock);
}

int probe_open(struct obj_load *l)
{
	struct probe_req req = { .len = l->elf_len };
	struct probe_reply rep = { .ok = 1 };
	__u64 start;
	int ret = 0, ms;

	l->probed = true;
	pthread_mutex_lock(&prober.lock);
	start = kstats_clock_ns(CLOCK_MONOTONIC);	/* not the wait for the lock */
	ms = probe_share_ms();
	if (ms && prober.fd < 0 && !prober.start_err) {
		ret = prober_start(true, ms < PROBER_HELLO_MS ? ms : PROBER_HELLO_MS);
		if (ret == -ETIMEDOUT)
			ms = 0;	/* its share went on the start: never in-process */
		else if ((prober.start_err = ret))
			log_msg(LOG_WARNING, "warning: cannot start a prober (%s); libbpf "
				"parses %s and the objects after it in-process",
				strerror(-ret), l->res->name);
		ret = 0;
	}
	if (!ms) {
		set_outcome(l->res, KSTATS_FAILED_OBJECT, "not parsed: the run has %d s to "
			    "parse objects, and objects that hang took them; remove those "
			    "(FAILED_OBJECT)", PROBE_BUDGET_MS / 1000);
		ret = -ETIME;
	}
	if (ms && !prober.start_err) {	/* else it cannot isolate: open in-process */
		snprintf(req.name, sizeof(req.name), "%s", l->res->name);
		ret = kstats_write_full(prober.fd, &req, sizeof(req)) ?:
		      kstats_write_full(prober.fd, l->elf, l->elf_len) ?:
		      read_within(prober.fd, &rep, sizeof(rep), ms);
		if (ret)
			prober_lost(l, ret, ms);
	}
	prober.left -= !!prober.left;
	prober.spent_ns += kstats_clock_ns(CLOCK_MONOTONIC) - start;
	pthread_mutex_unlock(&prober.lock);
	if (!ret && !rep.ok) {
		rep.why[sizeof(rep.why) - 1] = 0;
		set_outcome(l->res, KSTATS_FAILED_OBJECT, "libbpf cannot open it: %s",
			    *rep.why ? rep.why : "unknown error");
	}
	return ret || !rep.ok ? -ENOEXEC : 0;
}
