// SPDX-License-Identifier: GPL-2.0
/* kstats pull: options, catalog, lock, the state at start, commit, and the run (pull.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kstats.h"
#include "kstats_fileio.h"
#include "kstats_hooks.h"
#include "kstats_pins.h"
#include "pull.h"

#define PULL_PENDING_FILE "state.pending"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kstats pull [OPTIONS]\n"
		"Turn the counts each histogram gained since the last pull into atoms\n"
		"(proto/kernelstats_atoms.proto) in atoms-<pull id>.pb, and update the\n"
		"state.  Crash-safe; one pull at a time (doc/pull.md).\n\n"
		"  --obj-dir DIR       objects (BTF) (default: " KSTATS_OBJ_DIR_HELP ")\n"
		"  --pin-dir DIR       pinned maps (default: " KSTATS_DEFAULT_PIN_DIR ")\n"
		"  --state-dir DIR     state and lock (default: " PULL_DEFAULT_STATE_DIR ")\n"
		"  --out-dir DIR       atoms (default: " KSTATS_DEFAULT_ATOMS_DIR ")\n"
		"  --status-file FILE  loader status, for map creation times\n"
		"                      (default: " KSTATS_DEFAULT_STATUS_FILE ")\n"
		"  --max-age DUR       drop atom files older than DUR (30s, 12h, 7d; 0: "
		"never) (default 7d)\n"
		"  --max-files N       keep at most N atom files (0: no limit) (default 1000)\n"
		"  --max-bytes SIZE    keep at most SIZE bytes of atoms (50M, 1G; 0: no limit)\n"
		"                      (default 50M); the newest file is always kept\n"
		"  --lock-timeout SEC  wait this long for another pull (default 60)\n"
		"  -v, --verbose       notes on skipped maps and window starts\n"
		"  -h, --help          this text\n\n"
		"Exit status: 0 ok, 1 runtime error (a map unreadable, I/O), 2 bad usage\n"
		"or no histogram in --obj-dir, 3 nothing pinned (" KSTATS_FIX_LOAD "),\n"
		"4 another pull holds the lock, 5 every unreadable map was denied\n"
		"(" KSTATS_FIX_PERM ").  A histogram and an atom message that do not\n"
		"match are a warning line each (doc/writing-a-metric.md).\n");
}

static const uint64_t secs_scale[] = { 1, 60, 3600, 86400 },
		      size_scale[] = { 1024, 1ull << 20, 1ull << 30 };

static int parse_scaled(const char *s, const char *units, const uint64_t *scale,
			uint64_t *out)
{
	const char *end, *u;
	uint64_t v;

	if (kstats_strtou64(s, &v, &end))
		return -EINVAL;
	if (*end) {
		u = strchr(units, *end);
		if (!u || end[1])
			return -EINVAL;
		if (v > UINT64_MAX / scale[u - units])
			return -ERANGE;
		v *= scale[u - units];
	}
	*out = v;
	return 0;
}

static int bad_arg(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "kstats pull: %s '%s': expected %s\n", opt, val, want);
	return KSTATS_EXIT_USAGE;
}

static int take_lock(struct pull_run *r)
{
	char path[4096], pid[32] = "";
	int fd, n;

	snprintf(path, sizeof(path), "%s/lock", r->o->state_dir);
	/* Closed by cmd_pull(), after everything else. */
	fd = r->lock_fd = kstats_open_regular(path, O_RDWR | O_CREAT, 0640);
	if (fd < 0) {
		fprintf(stderr, "kstats pull: cannot open %s: %s\n", path,
			fd == -ELOOP || fd == -EINVAL ?
			"a symlink or not a regular file; remove it" : strerror(-fd));
		return fd;
	}
	n = kstats_flock_wait(fd, r->o->lock_timeout_s * 1000000000ull);
	if (n == -EWOULDBLOCK) {
		n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = 0;
		pid[strcspn(pid, "\n")] = 0;
		fprintf(stderr, "kstats pull: another pull (pid %s) holds %s; gave up "
			"after %us (raise --lock-timeout)\n", *pid ? pid : "?", path,
			r->o->lock_timeout_s);
		return -EBUSY;
	}
	if (n) {
		fprintf(stderr, "kstats pull: lock %s: %s\n", path, strerror(-n));
		return n;
	}
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, n, 0) != n)
		fprintf(stderr, "kstats pull: warning: cannot record pid in %s\n", path);
	return 0;
}

static int load_state(struct pull_run *r)
{
	struct pull_state pend;
	uint64_t last, id;
	char path[4096];
	int ret;

	kstats_remove_temps(r->o->state_dir);
	kstats_remove_temps(r->o->out_dir);
	ret = state_load(r->o->state_dir, PULL_STATE_FILE, &r->old);
	if (ret == -EBADMSG) {
		r->lost = true;
		fprintf(stderr, "kstats pull: re-baselining every map from its creation "
			"(atoms flagged reset)\n");
	} else if (ret && ret != -ENOENT) {
		return ret;
	}
	/* The pull a crash interrupted: promoted if its atoms were written, else dropped. */
	ret = state_load(r->o->state_dir, PULL_PENDING_FILE, &pend);
	if (ret && ret != -ENOENT && ret != -EBADMSG)
		return ret;
	snprintf(path, sizeof(path), "%s/" ATOMS_NAME, r->o->out_dir, pend.pull_id);
	if (!ret && pend.pull_id > r->old.pull_id && !access(path, F_OK)) {
		ret = kstats_rename_in(r->o->state_dir, PULL_PENDING_FILE, PULL_STATE_FILE, false);
		if (ret) {
			state_free(&pend);
			return ret;
		}
		if (r->o->verbose)
			fprintf(stderr, "kstats pull: completed interrupted pull %" PRIu64 "\n",
				pend.pull_id);
		kstats_hook_point("promoted");
		state_free(&r->old);
		r->old = pend;
		r->lost = false;
	} else if (!ret) {
		state_free(&pend);
		ret = kstats_unlink_in(r->o->state_dir, PULL_PENDING_FILE);
		if (ret)
			return ret;
		kstats_hook_point("discarded");
	}
	r->boot_changed = *r->old.boot_id && strcmp(r->old.boot_id, r->boot_id);
	/* Above the atoms shipped too: with the state and atoms gone, ship would skip ours. */
	last = pull_max_atoms_id(r->o->out_dir);
	id = ship_acked(r->o->state_dir);
	last = r->old.pull_id > last ? r->old.pull_id : last;
	last = id > last ? id : last;
	/* Pull ids stop at the last one: wrapping would overwrite atoms-0000000000.pb. */
	if (last == UINT64_MAX) {
		fprintf(stderr, "kstats pull: pull ids are used up (the state, the ship record "
			"or an atoms file in %s has id %" PRIu64 "); move the atoms away and "
			"remove %s/" PULL_STATE_FILE " and shipped\n", r->o->out_dir, UINT64_MAX,
			r->o->state_dir);
		return -EOVERFLOW;
	}
	r->pull_id = last + 1;
	return 0;
}

static void warn_line(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "kstats pull: warning: %s\n", line);
}

static int run(struct pull_run *r)
{
	struct atom_check c = { .atom = &kernelstats__atom__descriptor, .warn = warn_line };
	char atoms_file[64] = "", err[KSTATS_ERR_LEN] = "", serr[1024];
	struct kstats_hist *h;
	uint64_t now_boot, now_real;
	size_t i;
	int ret = kstats_boot_id(r->boot_id, sizeof(r->boot_id));

	if (ret) {
		fprintf(stderr, "kstats pull: cannot read the boot id: %s\n", strerror(-ret));
		return KSTATS_EXIT_ERROR;
	}
	ret = kstats_snapshot_init(&r->cat, r->o->obj_dir, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "kstats pull: %s\n", err);
		return KSTATS_EXIT_USAGE;
	}
	/* Map creation times and loaded objects only: a missing status is no error. */
	ret = kstats_status_read(r->o->status_file, &r->status, serr, sizeof(serr));
	if (ret && ret != -ENOENT)
		fprintf(stderr, "kstats pull: warning: %s; using program load times\n", serr);
	kstats_snapshot_unique(&r->cat, &r->status, "pull");
	kstats_snapshot_as_loaded(&r->cat, &r->status, r->o->status_file, r->o->pin_dir);
	r->shapes = calloc(r->cat.nhists ?: 1, sizeof(*r->shapes));
	if (!r->shapes)
		return KSTATS_EXIT_USAGE;
	atom_check_catalog(&c, &r->cat, r->shapes);
	ret = take_lock(r);
	if (ret)
		return ret == -EBUSY ? KSTATS_EXIT_BUSY : KSTATS_EXIT_ERROR;
	kstats_hook_point("locked");
	if (load_state(r))
		return KSTATS_EXIT_ERROR;
	/* Histograms without an atom, and maps of objects gone, keep their baselines. */
	for (i = 0; !ret && i < r->cat.nhists; i++) {
		h = &r->cat.hists[i];
		ret = r->shapes[i].oneof ? pull_map(r, h, &r->shapes[i]) :
		      pull_carry_over(r, h->obj, h->map);
	}
	for (i = 0; !ret && i < r->old.nmaps; i++)
		ret = pull_carry_over(r, r->old.maps[i].obj, r->old.maps[i].map);
	if (ret) {
		fprintf(stderr, "kstats pull: %s\n", strerror(-ret));
		return KSTATS_EXIT_ERROR;
	}
	kstats_hook_point("read");
	if (!r->maps_read && !r->maps_failed) {
		fprintf(stderr, "kstats pull: no histogram map is pinned under %s; "
			KSTATS_FIX_LOAD "\n", r->o->pin_dir);
		return KSTATS_EXIT_NOT_LOADED;
	}
	/* state.pending, atoms-N.pb, then the rename, each durable: see load_state(). */
	r->new.pull_id = r->pull_id;
	snprintf(r->new.boot_id, sizeof(r->new.boot_id), "%s", r->boot_id);
	ret = state_save(r->o->state_dir, r->natoms ? PULL_PENDING_FILE : PULL_STATE_FILE,
			 &r->new);
	if (!ret && r->natoms) {
		kstats_hook_point("pending");
		ret = pull_write_atoms(r, atoms_file, sizeof(atoms_file));
		/* Someone else's atoms-N: else the next pull would take it as ours. */
		if (ret == -EEXIST)
			kstats_unlink_in(r->o->state_dir, PULL_PENDING_FILE);
		if (!ret) {
			kstats_hook_point("atoms");
			ret = kstats_rename_in(r->o->state_dir, PULL_PENDING_FILE,
					       PULL_STATE_FILE, false);
		}
	}
	if (ret) {
		fprintf(stderr, "kstats pull: cannot write %s: %s\n",
			r->natoms ? "the atoms or the state" : "the state", strerror(-ret));
		return KSTATS_EXIT_ERROR;
	}
	kstats_hook_point("committed");
	if (r->natoms)
		printf("kstats pull: pull %" PRIu64 ": %zu atoms from %u maps -> %s/%s\n",
		       r->pull_id, r->natoms, r->maps_read, r->o->out_dir, atoms_file);
	else
		printf("kstats pull: pull %" PRIu64 ": no new counts in %u maps\n",
		       r->pull_id, r->maps_read);
	pull_now(&now_boot, &now_real);
	pull_apply_retention(r, now_boot);
	if (!r->maps_failed)
		return KSTATS_EXIT_OK;
	return r->maps_denied == r->maps_failed ? KSTATS_EXIT_PERM : KSTATS_EXIT_ERROR;
}

int cmd_pull(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "obj-dir", required_argument, NULL, 'o' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "out-dir", required_argument, NULL, 'O' },
		{ "status-file", required_argument, NULL, 'S' },
		{ "max-age", required_argument, NULL, 'a' },
		{ "max-files", required_argument, NULL, 'n' },
		{ "max-bytes", required_argument, NULL, 'b' },
		{ "lock-timeout", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct pull_opts o = {
		.obj_dir = kstats_default_obj_dir(), .pin_dir = KSTATS_DEFAULT_PIN_DIR,
		.state_dir = PULL_DEFAULT_STATE_DIR, .out_dir = KSTATS_DEFAULT_ATOMS_DIR,
		.status_file = KSTATS_DEFAULT_STATUS_FILE, .max_age_s = 7 * 86400,
		.max_files = 1000, .max_bytes = 50ull << 20, .lock_timeout_s = 60,
	};
	struct pull_run r = { .o = &o, .lock_fd = -1 };
	char msg[1024];
	uint64_t v;
	size_t i;
	int c;

	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': o.obj_dir = optarg; break;
		case 'p': o.pin_dir = optarg; break;
		case 's': o.state_dir = optarg; break;
		case 'O': o.out_dir = optarg; break;
		case 'S': o.status_file = optarg; break;
		case 'a':
			if (parse_scaled(optarg, "smhd", secs_scale, &o.max_age_s))
				return bad_arg("--max-age", optarg, "a duration like 7d");
			break;
		case 'n':
			if (parse_scaled(optarg, "", NULL, &o.max_files))
				return bad_arg("--max-files", optarg, "a file count");
			break;
		case 'b':
			if (parse_scaled(optarg, "KMG", size_scale, &o.max_bytes))
				return bad_arg("--max-bytes", optarg, "a size like 50M");
			break;
		case 't':
			if (parse_scaled(optarg, "smhd", secs_scale, &v) || v > 86400)
				return bad_arg("--lock-timeout", optarg, "seconds, at most 1d");
			o.lock_timeout_s = (unsigned int)v;
			break;
		case 'v': o.verbose = true; break;
		case 'h': usage(stdout); return KSTATS_EXIT_OK;
		default: usage(stderr); return KSTATS_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return bad_arg("argument", argv[optind], "no arguments; see --help");
	/* Both checked before either is made: a refusal leaves nothing behind. */
	if (kstats_mkdir_private(o.state_dir, 0750, false, msg, sizeof(msg)) ||
	    kstats_mkdir_private(o.out_dir, 0750, false, msg, sizeof(msg)) ||
	    kstats_mkdir_private(o.state_dir, 0750, true, msg, sizeof(msg)) ||
	    kstats_mkdir_private(o.out_dir, 0750, true, msg, sizeof(msg))) {
		/* Root on the packaged layout (a kstats-owned /var/lib/kernelstats). */
		fprintf(stderr, "kstats pull: refusing %s%s\n", msg,
			!geteuid() && strstr(msg, " is owned by uid ") ? ", or run the pull "
			"as that user, as the packaged timer does (doc/pull.md)" : "");
		return KSTATS_EXIT_ERROR;
	}
	c = run(&r);
	for (i = 0; i < r.natoms; i++)
		atom_slot_free((struct atom_slot *)r.atoms[i]);
	free(r.atoms);
	state_free(&r.old);
	state_free(&r.new);
	kstats_status_free(&r.status);
	free(r.shapes);
	kstats_snapshot_free(&r.cat);
	if (r.lock_fd >= 0)
		close(r.lock_fd);
	return c;
}
