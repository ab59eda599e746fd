// SPDX-License-Identifier: GPL-2.0
/* kstats-loader: options, the run dir lock, objects loaded on a pool, --unload. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <libgen.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/btf.h>

#include "kstats_fileio.h"
#include "kstats_pins.h"
#include "loader.h"

#define DEFAULT_RUN_DIR "/run/kernelstats"
#define DEFAULT_CONFIG "/etc/kernelstats/loader.conf"
#define STATUS_NAME "loader-status.json"
#define FLAG_NAME "progs_loaded"
#define LOCK_NAME "loader.lock"
#define DEFAULT_LOCK_TIMEOUT 30

struct options {
	const char *config;
	const char *kver;
	const char *run_dir;
	const char *status_file;
	int unload;
	int boot;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: kstats-loader [OPTIONS]\n"
"Load every *.bpf object of the object directory that this kernel can run,\n"
"pin its maps and links, print \"<obj> <OUTCOME>: <reason>\" per object, and\n"
"write the outcome of every object and program to the status file, then the\n"
"completion flag <run-dir>/" FLAG_NAME ".\n\n"
"  --obj-dir DIR           objects to load (default: " KSTATS_OBJ_DIR_HELP ")\n"
"  --pin-dir DIR           where to pin (default: " KSTATS_DEFAULT_PIN_DIR ")\n"
"  --run-dir DIR           status file and flag (default: " DEFAULT_RUN_DIR ")\n"
"  --status-file PATH      status file (default: <run-dir>/" STATUS_NAME ";\n"
"                          alone, it also sets the run dir to its directory)\n"
"  --config PATH           config file (default: " DEFAULT_CONFIG ", if present)\n"
"  --disable OBJ[,OBJ]     skip these objects; \"all\" skips every object\n"
"  --kver X.Y.Z            gate programs as if the kernel were X.Y.Z\n"
"                          (default: $KSTATS_KVER, else uname -r)\n"
"  --lock-timeout SEC      wait at most SEC seconds (default %d; in (0, 86400])\n"
"                          for another loader to release <run-dir>/" LOCK_NAME "\n"
"  --replace-incompatible  move a pinned map of the wrong shape aside\n"
"                          (aside_<ns>_<pin>) instead of refusing the object\n"
"  --unload                remove everything the loader pinned, and nothing else\n"
"  --boot                  also log to /dev/kmsg\n"
"  -v, --verbose           show libbpf's log\n"
"  -h, --help              this text\n\n"
"Config file: lines \"disable = all\" or \"disable = OBJ[, OBJ...]\"; # comments;\n"
"a regular file (not a symlink) of text, at most 64 KiB.\n\n"
"Exit status:\n"
"  0  every object loaded, or was skipped or failed without being critical\n"
"  1  a critical object (DEFINE_BPF_OBJECT(KSTATS_OBJ_CRITICAL)) failed;\n"
"     with --unload: some pin could not be removed\n"
"  2  bad usage: unknown option, bad --kver or KSTATS_KVER, bad config file\n"
"  3  unusable environment: no BPF, no bpffs, unusable directory\n"
"  4  another kstats-loader held the lock for --lock-timeout seconds;\n"
"     the status file is left to it\n", DEFAULT_LOCK_TIMEOUT);
}

/* Through log_msg: an argument or a config line may hold control bytes. */
static int bad_usage(const char *fmt, const char *arg)
{
	log_msg(LOG_ERR, fmt, arg);
	return EXIT_USAGE;
}

static int parse_args(int argc, char **argv, struct loader_ctx *ctx,
		      struct options *o)
{
	/* The first ones set the path of the same index in path[]. */
	const struct option opts[] = {
		{ "obj-dir", required_argument, NULL, 'P' },
		{ "pin-dir", required_argument, NULL, 'P' },
		{ "run-dir", required_argument, NULL, 'P' },
		{ "status-file", required_argument, NULL, 'P' },
		{ "config", required_argument, NULL, 'P' },
		{ "kver", required_argument, NULL, 'P' },
		{ "disable", required_argument, NULL, 'd' },
		{ "replace-incompatible", no_argument, &ctx->replace_incompatible, 1 },
		{ "lock-timeout", required_argument, NULL, 'L' },
		{ "unload", no_argument, &o->unload, 1 },
		{ "boot", no_argument, &o->boot, 1 },
		{ "verbose", no_argument, &log_verbose, 1 },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char **path[] = { &ctx->obj_dir, &ctx->pin_dir, &o->run_dir, &o->status_file,
				&o->config, &o->kver };
	char err[256];
	int c, i;

	while ((c = getopt_long(argc, argv, "vh", opts, &i)) != -1) {
		switch (c) {
		case 'P': *path[i] = optarg; break;
		case 'L':
			if (kstats_parse_seconds("--lock-timeout", optarg, 86400,
						 &ctx->lock_timeout_s, err, sizeof(err)))
				return bad_usage("%s", err);
			break;
		case 'v': log_verbose = 1; break;
		case 0: break;
		case 'd':
			if (add_disabled(ctx, optarg, err, sizeof(err)))
				return bad_usage("--disable: %s", err);
			break;
		case 'h': usage(stdout); exit(EXIT_OK);
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'; see --help", argv[optind]);
	return EXIT_OK;
}

static int set_paths(struct loader_ctx *ctx, const struct options *o)
{
	size_t rlen = sizeof(ctx->run_dir), slen = sizeof(ctx->status_path);
	char *copy;
	int n;

	copy = o->status_file && !o->run_dir ? strdup(o->status_file) : NULL;
	if (o->status_file && !o->run_dir && !copy)
		return EXIT_ENV;
	n = snprintf(ctx->run_dir, rlen, "%s",
		     copy ? dirname(copy) : o->run_dir ?: DEFAULT_RUN_DIR);
	free(copy);
	if (n < 0 || (size_t)n >= rlen)
		return bad_usage("run dir '%s' is too long", ctx->run_dir);
	n = snprintf(ctx->status_path, slen, "%s%s", o->status_file ?: ctx->run_dir,
		     o->status_file ? "" : "/" STATUS_NAME);
	if (n < 0 || (size_t)n >= slen)
		return bad_usage("status file path '%s' is too long", ctx->status_path);
	if (strlen(ctx->pin_dir) > LOADER_PATH_LEN - 2 * KSTATS_NAME_LEN - 32)
		return bad_usage("--pin-dir '%s' is too long", ctx->pin_dir);
	return EXIT_OK;
}

/* --kver, else $KSTATS_KVER, else uname. */
static int set_kver(struct loader_ctx *ctx, const struct options *o)
{
	const char *env = getenv("KSTATS_KVER"), *v = o->kver ?: (env && *env ? env : NULL);
	struct utsname u;

	snprintf(ctx->release, sizeof(ctx->release), "%s", uname(&u) ? "" : u.release);
	if (v && parse_kver(v, &ctx->kver))
		return bad_usage(o->kver ? "--kver '%s' is not a kernel version like 6.1.0" :
				 "KSTATS_KVER='%s' is not a kernel version like 6.1.0", v);
	if (!v && parse_kver(ctx->release, &ctx->kver))
		return bad_usage("cannot tell the kernel version from uname -r '%s'; "
				 "pass --kver", ctx->release);
	return EXIT_OK;
}

/* Not a lock on the pin dir: group kstats can open that, so could hold it. */
static int lock_run_dir(const struct loader_ctx *ctx, char *err, size_t len)
{
	char path[LOADER_PATH_LEN + 16];
	struct stat st;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/" LOCK_NAME, ctx->run_dir);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		ret = fd < 0 ? -errno : -EPERM;
		snprintf(err, len, "cannot use lock file %s: %s; remove it", path,
			 fd < 0 ? strerror(errno) : "not a regular file of ours, mode 0600");
		goto fail;
	}
	ret = kstats_flock_wait(fd, (__u64)(ctx->lock_timeout_s * 1e9));
	if (!ret)
		return fd;
	if (ret == -EWOULDBLOCK)
		snprintf(err, len, "another kstats-loader has held %s for %g s; wait "
			 "for it to finish, or stop it, then run again (or pass "
			 "--lock-timeout)", path, ctx->lock_timeout_s);
	else
		snprintf(err, len, "cannot lock %s: %s", path, strerror(-ret));
fail:
	if (fd >= 0)
		close(fd);
	return ret;
}

static int prepare_pin_dir(const char *pin_dir, char *err, size_t len)
{
	int ret = kstats_ensure_bpffs(pin_dir, err, len);

	if (ret)
		return ret;
	if (mkdir(pin_dir, 0750) && errno != EEXIST)
		return kstats_fail(err, len, errno, "cannot create %s: %s", pin_dir,
				   strerror(errno));
	if (!kstats_is_bpffs(pin_dir))
		return kstats_fail(err, len, ENOTSUP, "%s is not on a bpffs; pass --pin-dir "
				   "under %s", pin_dir, KSTATS_BPFFS);
	ret = apply_owner(pin_dir, "root", "kstats", 0750);
	if (ret)
		snprintf(err, len, "%s: %s", pin_dir, strerror(-ret));
	return ret;
}

/* Recorded in the status file with nothing touched. */
static int fail_env(struct loader_ctx *ctx, __u64 started, const char *fmt, ...)
{
	char err[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, sizeof(err), fmt, ap);
	va_end(ap);
	log_msg(LOG_ERR, "%s", err);
	if (!ctx->prev)
		status_parse_prev(ctx, NULL, 0);
	if (status_write(ctx, NULL, 0, started, err))
		log_msg(LOG_ERR, "cannot write %s either", ctx->status_path);
	return EXIT_ENV;
}

static void report(const struct kstats_status_obj *r)
{
	unsigned int progs = 0, kept = 0, reused = 0;
	char why[KSTATS_WHY_LEN];
	size_t i;

	for (i = 0; i < r->nprogs; i++) {
		progs += r->progs[i].outcome == KSTATS_LOADED;
		kept += r->progs[i].kept;
	}
	for (i = 0; i < r->nmaps; i++)
		reused += r->maps[i].reused;
	kstats_why(r, why, sizeof(why));
	if (r->outcome == KSTATS_LOADED)
		log_result(LOG_INFO, "%-16s LOADED: %u programs attached (%u kept), %zu "
			   "maps pinned (%u reused)", r->name, progs, kept, r->nmaps, reused);
	else
		log_result(!outcome_failed(r->outcome) ? LOG_INFO :
			   r->critical ? LOG_ERR : LOG_WARNING, "%-16s %s", r->name, why);
	for (i = 0; r->outcome == KSTATS_LOADED && i < r->nprogs; i++)
		if (outcome_failed(r->progs[i].outcome))
			log_msg(LOG_WARNING, "%s: %s %s: %s", r->name, r->progs[i].name,
				kstats_outcome_name(r->progs[i].outcome), r->progs[i].reason);
}

/* Objects load on up to one thread per CPU, and are reported in sorted order. */
#define LOADER_MAX_THREADS 4

struct pool {
	struct loader_ctx *ctx;
	struct dirent **ents;
	struct kstats_status_obj *res;
	struct log_held **held;		/* each object's lines until reported */
	bool *done;
	size_t n;
	atomic_size_t next;		/* the next object to take */
	size_t reported;
	bool critical;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static bool load_next(struct pool *p)
{
	size_t i = atomic_fetch_add(&p->next, 1);
	char path[LOADER_PATH_LEN];

	if (i >= p->n)
		return false;
	p->held[i] = log_hold();
	snprintf(path, sizeof(path), "%s/%s", p->ctx->obj_dir, p->ents[i]->d_name);
	load_object(p->ctx, i, path, &p->res[i]);
	log_unhold();
	pthread_mutex_lock(&p->lock);
	p->done[i] = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return true;
}

static void *load_thread(void *arg)
{
	while (load_next(arg))
		;
	return NULL;
}

/* Reports the finished objects next in order; with wait, all of them. */
static void report_done(struct pool *p, bool wait)
{
	struct kstats_status_obj *r;

	pthread_mutex_lock(&p->lock);
	while (p->reported < p->n) {
		if (!p->done[p->reported]) {
			if (!wait)
				break;
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		r = &p->res[p->reported];
		log_release(p->held[p->reported++]);
		report(r);
		p->critical |= r->critical && outcome_failed(r->outcome);
	}
	pthread_mutex_unlock(&p->lock);
}

static void load_pool(struct pool *p)
{
	pthread_t tid[LOADER_MAX_THREADS];
	size_t t, started = 0, want;
	cpu_set_t set;

	want = sched_getaffinity(0, sizeof(set), &set) ? 1 : (size_t)CPU_COUNT(&set);
	want = want < LOADER_MAX_THREADS ? want : LOADER_MAX_THREADS;
	want = want < p->n ? want : p->n;
	if (!p->ctx->disable_all && p->n)
		probe_start(p->n);	/* forked before any thread exists */
	/* Only reporting here: a run stopped at boot has named every object it finished. */
	for (t = 0; t < want; t++)
		started += !pthread_create(&tid[started], NULL, load_thread, p);
	while (!started && load_next(p))
		report_done(p, false);
	report_done(p, true);
	for (t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
}

/* -errno when no object could be tried. */
static int load_all(struct loader_ctx *ctx, struct kstats_status_obj **out, size_t *nout)
{
	struct pool p = { .ctx = ctx, .lock = PTHREAD_MUTEX_INITIALIZER,
			  .cond = PTHREAD_COND_INITIALIZER };
	int n, i, ret = 0;

	n = kstats_scan_objects(ctx->obj_dir, &p.ents);
	if (n < 0)
		return n;
	p.n = n;
	p.res = calloc(n ? n : 1, sizeof(*p.res));
	p.held = calloc(n ? n : 1, sizeof(*p.held));
	p.done = calloc(n ? n : 1, sizeof(*p.done));
	for (i = 0; p.res && i < n && !ret; i++)
		ret = obj_init(&p.res[i]);
	ctx->turns = calloc(n ? n : 1, sizeof(*ctx->turns));
	if (!ret && (!p.res || !p.held || !p.done || !ctx->turns))
		ret = -ENOMEM;
	if (!ret)
		load_pool(&p);
	for (i = 0; i < n; i++)
		free(p.ents[i]);
	free(p.ents);
	free(p.held);
	free(p.done);
	*out = p.res;	/* the caller frees it, also after an error */
	*nout = p.res ? n : 0;
	if (!ret && !n)
		log_msg(LOG_WARNING, "warning: no *.bpf objects in %s", ctx->obj_dir);
	return ret ?: p.critical ? EXIT_CRITICAL : EXIT_OK;
}

/* A disabled name no object has is a typo: the object it meant stays loaded. */
static void warn_unknown_disabled(const struct loader_ctx *ctx,
				  const struct kstats_status_obj *res, size_t n)
{
	char known[1024];
	size_t i, j, len;

	for (j = 0, len = 0, *known = 0; j < n && len < sizeof(known); j++)
		len += snprintf(known + len, sizeof(known) - len, "%s%s", j ? ", " : "",
				res[j].name);
	for (i = 0; i < ctx->ndisabled; i++) {
		for (j = 0; j < n && strcmp(res[j].name, ctx->disabled[i]); j++)
			;
		if (j == n)
			log_msg(LOG_WARNING, "warning: disable = %s names no object in %s; "
				"the objects are: %s", ctx->disabled[i], ctx->obj_dir,
				n ? known : "none");
	}
}

static int run(struct loader_ctx *ctx, const struct options *o)
{
	struct kstats_status_obj *res = NULL;
	__u64 started = kstats_clock_ns(CLOCK_BOOTTIME);
	char flag[LOADER_PATH_LEN + 16], err[2 * LOADER_PATH_LEN];
	struct stat sr, so;
	size_t n = 0, i;
	int lock, ret, code;

	snprintf(flag, sizeof(flag), "%s/" FLAG_NAME, ctx->run_dir);
	/* Checked as the object dir is: its owner could forge the status, unlink the lock. */
	if (kstats_mkdir_private(ctx->run_dir, 0755, true, err, sizeof(err))) {
		log_msg(LOG_ERR, "unusable run dir: %s; pass --run-dir", err);
		return EXIT_ENV;
	}
	/* By identity, not by spelling: "dir/", "./dir" or a symlink name the same one. */
	if (!stat(ctx->run_dir, &sr) && !stat(ctx->obj_dir, &so) && sr.st_dev == so.st_dev &&
	    sr.st_ino == so.st_ino)
		return bad_usage("run dir %s is the object directory: its copies would "
				 "replace, and --unload delete, the objects; pass another "
				 "--run-dir", ctx->run_dir);
	if (unlink(flag) && errno != ENOENT) {
		log_msg(LOG_ERR, "cannot remove %s: %m; pass --run-dir", flag);
		return EXIT_ENV;
	}
	ret = o->unload ? 1 : libbpf_probe_bpf_map_type(BPF_MAP_TYPE_ARRAY, NULL);
	if (ret != 1)
		return fail_env(ctx, started, "BPF is unusable here (%s): run as root on a "
				"kernel with CONFIG_BPF_SYSCALL",
				ret < 0 ? strerror(-ret) : "no array maps");
	lock = lock_run_dir(ctx, err, sizeof(err));
	if (lock < 0) {
		/* The status file is the lock holder's to write, or unwritable. */
		log_msg(LOG_ERR, "%s", err);
		return lock == -EWOULDBLOCK ? EXIT_LOCKED : EXIT_ENV;
	}
	if (prepare_pin_dir(ctx->pin_dir, err, sizeof(err))) {
		ret = fail_env(ctx, started, "%s", err);
		goto out;
	}
	status_parse_prev(ctx, NULL, 0);	/* under the lock: the last run's, complete */
	txn_remove_stale(ctx->pin_dir);
	if (o->unload) {
		ret = unload_all(ctx, flag);
		goto out;
	}
	if (check_trusted(ctx->obj_dir, err, sizeof(err)) == -EPERM) {
		ret = fail_env(ctx, started, "untrusted object directory: %s", err);
		goto out;
	}
	ret = load_all(ctx, &res, &n);
	if (ret < 0) {
		ret = fail_env(ctx, started, "cannot read object directory %s: %s; "
			       "pass --obj-dir", ctx->obj_dir, strerror(-ret));
		goto out;
	}
	warn_unknown_disabled(ctx, res, n);
	code = ret;
	ret = status_write(ctx, res, n, started, NULL);
	if (ret)
		log_msg(LOG_ERR, "cannot write %s: %s; pass --run-dir; no completion "
			"flag written", ctx->status_path, strerror(-ret));
	else if ((ret = kstats_file_replace(flag, "1\n", 2, 0644)))
		log_msg(LOG_ERR, "cannot write completion flag %s: %s; pass --run-dir",
			flag, strerror(-ret));
	ret = ret ? EXIT_ENV : code;
out:
	for (i = 0; i < n; i++)
		kstats_status_obj_free(&res[i]);
	free(res);
	btf__free(ctx->vmlinux_btf);
	free(ctx->claims);
	free(ctx->turns);
	close(lock);
	return ret;
}

/* A closed stdio fd goes to the next open or socket, and log lines would too. */
static void fill_stdio(void)
{
	int fd;

	do
		fd = open("/dev/null", O_RDWR);
	while (fd >= 0 && fd <= STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
}

int main(int argc, char **argv)
{
	struct loader_ctx ctx = { .obj_dir = kstats_default_obj_dir(),
				  .pin_dir = KSTATS_DEFAULT_PIN_DIR,
				  .lock_timeout_s = DEFAULT_LOCK_TIMEOUT,
				  .lock = PTHREAD_MUTEX_INITIALIZER,
				  .turn_done = PTHREAD_COND_INITIALIZER };
	struct options o = {};
	char err[512];
	int ret;

	fill_stdio();
	if (argc == 2 && !strcmp(argv[1], PROBE_SERVER_ARG))
		probe_server_main();
	/* A closed stdout must not kill us before the status file is written. */
	signal(SIGPIPE, SIG_IGN);
	ret = parse_args(argc, argv, &ctx, &o) ?: set_kver(&ctx, &o);
	if (!ret && read_config(&ctx, o.config ?: DEFAULT_CONFIG, o.config, err,
				sizeof(err)))
		ret = bad_usage("%s", err);
	ret = ret ?: set_paths(&ctx, &o);
	if (!ret) {
		libbpf_set_print(libbpf_log);
		if (o.boot)
			log_to_kmsg();
		ret = run(&ctx, &o);
	}
	status_free_prev(&ctx);
	free_config(&ctx);
	return ret;
}
