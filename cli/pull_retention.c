// SPDX-License-Identifier: GPL-2.0
/*
 * kstats pull: drops the oldest atom files past --max-age/--max-files/--max-bytes.
 *
 * A file's age is the time the system has been up since it was written,
 * taken from its own first atom (boot id, boot-time window end), never
 * from the wall clock or its mtime: setting the clock (NTP after boot,
 * date -s) ages nothing.  A file of this boot is as old as boot time says;
 * one of an earlier boot adds that boot's up time after it (to its newest
 * file's window end) and every later boot's.  Time powered off does not
 * count, so files outlive --max-age rather than go early; --max-files and
 * --max-bytes still bound them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kstats.h"
#include "kstats_fileio.h"
#include "pull_run.h"

/* The first record of a file: an atom is well under this. */
#define HEAD_BYTES 4096

struct atoms_file {
	uint64_t size;
	uint64_t end_boot;
	char boot_id[64];
	bool known;		/* end_boot and boot_id read */
	uint64_t age_ns;
};

/* Size, boot id and boot-time window end of dir/name; unknown if unreadable. */
static void read_head(const char *dir, const char *name, struct atoms_file *f)
{
	uint8_t buf[HEAD_BYTES], *p = buf;
	Kernelstats__Atom *a;
	char path[4096];
	struct stat st;
	uint64_t n = 0;
	unsigned int shift;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = kstats_open_regular(path, O_RDONLY, 0);
	if (fd < 0)
		return;
	if (!fstat(fd, &st))
		f->size = st.st_size;
	got = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	if (got < 2 || *p++ != 0x0a)
		return;
	for (shift = 0; p < buf + got && shift < 35; shift += 7) {
		n |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p++ & 0x80))
			break;
	}
	if (n > (uint64_t)(buf + got - p))
		return;
	a = kernelstats__atom__unpack(NULL, n, p);
	if (a && a->boot_id && a->has_window_end_boottime_ns) {
		snprintf(f->boot_id, sizeof(f->boot_id), "%s", a->boot_id);
		f->end_boot = a->window_end_boottime_ns;
		f->known = true;
	}
	kernelstats__atom__free_unpacked(a, NULL);
}

/* Up time since each file (newest first: ages only grow toward the oldest). */
static void set_ages(struct atoms_file *f, int n, const char *boot_id, uint64_t now_boot)
{
	const char *boot = boot_id;
	uint64_t later = 0, ref = now_boot;	/* up time of later boots; boot's newest */
	int i;

	for (i = n - 1; i >= 0; i--) {
		if (!f[i].known)
			continue;	/* age unknown: 0, only the count and size limits */
		if (strcmp(f[i].boot_id, boot)) {
			later = later > UINT64_MAX - ref ? UINT64_MAX : later + ref;
			boot = f[i].boot_id;
			ref = f[i].end_boot;
		}
		f[i].age_ns = ref > f[i].end_boot ? ref - f[i].end_boot : 0;
		f[i].age_ns = later > UINT64_MAX - f[i].age_ns ? UINT64_MAX : later + f[i].age_ns;
	}
}

int pull_apply_retention(const struct pull_opts *o, const char *boot_id)
{
	struct dirent **ents;
	struct atoms_file *f;
	uint64_t total = 0, removed_bytes = 0, now_boot, now_real;
	char path[4096];
	int n, i, removed = 0, ret = 0;

	n = scandir(o->out_dir, &ents, kstats_atoms_filter, alphasort);
	if (n < 0)
		return -errno;
	f = calloc(n ? n : 1, sizeof(*f));
	if (!f) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		read_head(o->out_dir, ents[i]->d_name, &f[i]);
		total += f[i].size;
	}
	pull_now(&now_boot, &now_real);
	set_ages(f, n, boot_id, now_boot);
	/* Oldest first; the newest file is always kept, one of unknown age ages not. */
	for (i = 0; i < n - 1; i++) {
		bool too_many = o->max_files && (uint64_t)(n - removed) > o->max_files;
		bool too_big = o->max_bytes && total > o->max_bytes;
		bool too_old = o->max_age_s && f[i].age_ns / 1000000000ull > o->max_age_s;

		if (!too_many && !too_big && !too_old)
			continue;
		snprintf(path, sizeof(path), "%s/%s", o->out_dir, ents[i]->d_name);
		if (unlink(path)) {
			ret = -errno;
			break;
		}
		total -= f[i].size;
		removed_bytes += f[i].size;
		removed++;
	}
	if (removed) {
		fprintf(stderr, "kstats pull: retention removed %d atom file(s), %" PRIu64
			" bytes (--max-age/--max-files/--max-bytes)\n", removed, removed_bytes);
		kstats_fsync_dir(o->out_dir);
	}
out:
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	free(f);
	return ret;
}
