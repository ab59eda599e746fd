// SPDX-License-Identifier: GPL-2.0
/* Event streams: the ring's claim, its record's column plan, the stats (streams.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kstats_tool.h"
#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "stream_int.h"

/* Reads are destructive: the ring is claimed with flock on a file named by its map id in
 * a root-only directory (a name anyone could take first, such as an abstract socket, would
 * let any user stop root's watch); bpffs refuses to open the pin itself (EIO).  The lock
 * goes when its holder dies, the file when it closes: check the name still gives the file. */
static int claim_ring(struct kstats_stream *s, const char *pin, char *err, size_t errlen)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct stat held = {}, named;
	int fd, ret, tries;

	if (bpf_obj_get_info_by_fd(s->ring_fd, &info, &len))
		return kstats_fail(err, errlen, errno, "%s: %s", pin, strerror(errno));
	if (info.type != BPF_MAP_TYPE_RINGBUF)
		return kstats_fail(err, errlen, EINVAL, "%s: not a ring buffer but %s", pin,
				   libbpf_bpf_map_type_str(info.type));
	if (info.max_entries & (info.max_entries - 1))
		return kstats_fail(err, errlen, EINVAL, "%s: a ring of %u bytes, not a power of "
				   "two", pin, info.max_entries);
	s->ring_id = info.id;
	s->ring_mask = info.max_entries - 1;
	snprintf(s->ring_pin, sizeof(s->ring_pin), "%s", pin);
	if (mkdir(KSTATS_STREAM_LOCK_DIR, 0700) && errno != EEXIST)
		return kstats_fail(err, errlen, errno, "cannot create %s: %s%s",
				   KSTATS_STREAM_LOCK_DIR, strerror(errno),
				   errno == EACCES ? " (run kstats watch as root)" : "");
	s->lock_dir_fd = open(KSTATS_STREAM_LOCK_DIR,
			      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->lock_dir_fd < 0)
		return kstats_fail(err, errlen, errno, "%s: %s", KSTATS_STREAM_LOCK_DIR,
				   strerror(errno));
	if (fstat(s->lock_dir_fd, &held) || held.st_uid != geteuid() || (held.st_mode & 077))
		return kstats_fail(err, errlen, EPERM, "%s is not a directory of this user's "
				   "alone (owner uid %u, mode %04o), so others could claim "
				   "streams; run: %s %s", KSTATS_STREAM_LOCK_DIR,
				   (unsigned int)held.st_uid, (unsigned int)(held.st_mode & 07777),
				   held.st_uid == geteuid() ? "chmod 0700" : "rm -r",
				   KSTATS_STREAM_LOCK_DIR);
	snprintf(s->lock_name, sizeof(s->lock_name), "ring-%u", info.id);
	for (tries = 0; tries < 100; tries++) {
		fd = openat(s->lock_dir_fd, s->lock_name,
			    O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
		if (fd < 0)
			return kstats_fail(err, errlen, errno, "%s/%s: %s", KSTATS_STREAM_LOCK_DIR,
					   s->lock_name, strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB))
			ret = errno == EWOULDBLOCK ?
			      kstats_fail(err, errlen, EBUSY, "stream %s already has a reader "
					  "(one per ring buffer: reads are destructive); stop the "
					  "other kstats watch", s->name) :
			      kstats_fail(err, errlen, errno, "flock: %s", strerror(errno));
		else if (fstat(fd, &held) || !S_ISREG(held.st_mode))
			ret = kstats_fail(err, errlen, EINVAL, "%s/%s: not a regular file",
					  KSTATS_STREAM_LOCK_DIR, s->lock_name);
		else if (fstatat(s->lock_dir_fd, s->lock_name, &named, AT_SYMLINK_NOFOLLOW) ||
			 named.st_ino != held.st_ino || named.st_dev != held.st_dev)
			ret = 1;	/* removed by its holder meanwhile: again */
		else
			break;
		close(fd);
		if (ret < 0)
			return ret;
	}
	if (tries == 100)
		return kstats_fail(err, errlen, EBUSY, "stream %s: its claim keeps being removed; "
				   "stop the other kstats watch", s->name);
	s->lock_fd = fd;	/* open only while locked: its close removes the file */
	return 0;
}

static int kstats_stream_plan(struct kstats_stream *s, const char *record,
			      char *err, size_t errlen)
{
	const struct kstats_column *c = s->layout.cols;
	size_t first = 0, i;

	if (!s->layout.ncols || strcmp(c->name, "hdr.ts_ns") || c->offset || c->size != 8)
		return kstats_fail(err, errlen, EINVAL, "struct %s does not begin with "
				   "struct kstats_stream_hdr hdr", record);
	while (first < s->layout.ncols && !strncmp(c[first].name, "hdr.", 4))
		first++;
	s->stride = (s->layout.size + BPF_RINGBUF_HDR_SZ + 7) & ~7u;
	s->cols.cols = s->layout.cols + first;
	s->cols.ncols = s->layout.ncols - first;
	s->leaves = calloc(s->cols.ncols + 1, sizeof(*s->leaves));
	if (!s->leaves)
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	for (c = s->cols.cols, i = 0; i < s->cols.ncols; c++, i++) {
		unsigned int bits = 8 * c->size;

		if (c->offset + c->size < 8)
			return kstats_fail(err, errlen, EINVAL, "struct %s: %s overlaps the header",
					   record, c->name);
		s->leaves[i] = (struct leaf){ .end8 = c->offset + c->size - 8, .shift = 64 - bits,
					      .mask = c->is_signed || bits == 64 ? UINT64_MAX :
						      (UINT64_C(1) << bits) - 1 };
	}
	return 0;
}

/* cols borrows the drop counter's types (the object's BTF). */
static int open_columns(struct kstats_stream *s, const struct kstats_stream_opts *o,
			const struct kstats_stream_meta *sm, const char *pin,
			char *err, size_t errlen)
{
	/* pin_once: the drops of the ring held, whatever the pin names later. */
	struct kstats_map_opts mo = { .obj_path = o->obj_path, .map_name = sm->drops,
				      .pin_path = pin, .pin_once = true };
	struct kstats_stream_stats st;
	int id, ret;

	ret = kstats_map_open(&mo, &s->drops, err, errlen);
	if (ret)
		return ret;
	if (kstats_map_ncols(s->drops) != 2 || kstats_map_max_rows(s->drops) != 1)
		return kstats_fail(err, errlen, EINVAL,
				   "%s: a drops map is one __u32 -> __u64", pin);
	ret = kstats_stream_get_stats(s, &st, err, errlen);
	if (ret)
		return ret;
	s->drops_at_open = st.kernel_drops;
	s->cols.types = s->drops->types;
	id = btf__find_by_name_kind(kstats_map_btf(&s->cols), sm->record, BTF_KIND_STRUCT);
	if (id < 0)
		return kstats_fail(err, errlen, ENOENT,
				   "stream %s: no struct %s in the object's BTF",
				   sm->name, sm->record);
	ret = kstats_layout_build(kstats_map_btf(&s->cols), id, sm->record, false, &s->layout,
				  err, errlen);
	return ret ? ret : kstats_stream_plan(s, sm->record, err, errlen);
}

static int open_ring(struct kstats_stream *s, const char *pin, char *err, size_t errlen)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *prod = MAP_FAILED;
	int ret;

	s->ring_fd = kstats_pin_get(pin, 0, &s->ring_st);
	if (s->ring_fd < 0) {
		ret = -s->ring_fd;
		if (ret == ENOENT)
			return kstats_fail(err, errlen, ret,
					   "%s is not pinned; " KSTATS_FIX_LOAD, pin);
		return kstats_fail(err, errlen, ret, "%s: %s%s", pin, strerror(ret),
				   ret == EACCES ? " (stream rings are root-only: run kstats "
				   "watch as root)" : "");
	}
	ret = claim_ring(s, pin, err, errlen);
	if (ret)
		return ret;
	/* libbpf's layout: consumer_pos's page at 0, then producer_pos's and the data. */
	s->cons_pos = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, s->ring_fd, 0);
	if (s->cons_pos != MAP_FAILED)
		prod = mmap(NULL, page + 2 * (s->ring_mask + 1), PROT_READ, MAP_SHARED,
			    s->ring_fd, (off_t)page);
	ret = errno;
	if (prod == MAP_FAILED)
		return kstats_fail(err, errlen, ret, "%s: %s", pin, ret == EPERM ?
				   "the ring was frozen (BPF_MAP_FREEZE) and can no longer be "
				   "read; " KSTATS_FIX_LOAD " to recreate it" : strerror(ret));
	s->prod_pos = prod;
	s->prod_len = page + 2 * (s->ring_mask + 1);
	s->data = (const unsigned char *)prod + page;
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stop_fd < 0 || s->wake_fd < 0)
		return kstats_fail(err, errlen, errno, "eventfd: %s", strerror(errno));
	return 0;
}

int kstats_stream_open(const struct kstats_stream_opts *o, struct kstats_stream **out,
		       char *err, size_t errlen)
{
	const struct kstats_stream_meta *sm = NULL;
	struct kstats_objmeta meta;
	struct kstats_stream *s;
	char obj[KSTATS_NAME_LEN], pin[PATH_MAX], drops_pin[PATH_MAX], names[256] = "";
	size_t i, n = 0;
	int ret;

	ret = kstats_objmeta_read(o->obj_path, &meta, err, errlen);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s) {
		kstats_objmeta_free(&meta);
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	}
	s->ring_fd = s->lock_fd = s->lock_dir_fd = s->stop_fd = s->sig_fd = s->wake_fd = -1;
	if (o->stream)
		sm = kstats_objmeta_stream(&meta, o->stream);
	else if (meta.nstreams == 1)
		sm = &meta.streams[0];
	for (i = 0; !sm && i < meta.nstreams; i++)
		n += snprintf(names + n, n < sizeof(names) ? sizeof(names) - n : 0, "%s%s",
			      i ? ", " : "", meta.streams[i].name);
	if (sm) {
		snprintf(s->name, sizeof(s->name), "%s", sm->name);
		ret = kstats_obj_name(o->obj_path, obj, sizeof(obj)) ?:
		      kstats_pin_path(pin, sizeof(pin), o->pin_dir, "map", obj, sm->ringbuf) ?:
		      kstats_pin_path(drops_pin, sizeof(drops_pin), o->pin_dir, "map", obj,
				      sm->drops);
		if (ret)
			kstats_fail(err, errlen, -ret, "%s: bad object or pin name", o->obj_path);
		else
			ret = open_ring(s, pin, err, errlen) ?:
			      open_columns(s, o, sm, drops_pin, err, errlen);
	} else if (o->stream) {
		ret = kstats_fail(err, errlen, ENOENT, "%s has no stream %s; it has: %s",
				  o->obj_path, o->stream, meta.nstreams ? names : "none");
	} else {
		ret = kstats_fail(err, errlen, ENOENT, "%s has %zu streams; name one of: %s",
				  o->obj_path, meta.nstreams, meta.nstreams ? names : "none");
	}
	kstats_objmeta_free(&meta);
	if (ret) {
		kstats_stream_close(s);
		return ret;
	}
	*out = s;
	return 0;
}

void kstats_stream_close(struct kstats_stream *s)
{
	size_t i;

	if (!s)
		return;
	kstats_stream_stop(s, NULL, 0);
	for (i = 0; i < s->nconsumers; i++)
		free(s->consumers[i]);
	free(s->consumers);
	/* Never mapped: NULL or MAP_FAILED, and munmap fails harmlessly. */
	munmap(s->cons_pos, (size_t)sysconf(_SC_PAGESIZE));
	munmap((void *)s->prod_pos, s->prod_len);
	kstats_map_close(s->drops);
	kstats_layout_free(&s->layout);
	free(s->leaves);
	if (s->lock_fd >= 0)	/* while still holding it: see claim_ring */
		unlinkat(s->lock_dir_fd, s->lock_name, 0);
	/* Those never opened are -1: close fails with EBADF, harmlessly. */
	close(s->ring_fd);
	close(s->lock_fd);
	close(s->lock_dir_fd);
	close(s->stop_fd);
	close(s->sig_fd);
	close(s->wake_fd);
	free(s);
}

const char *kstats_stream_name(const struct kstats_stream *s) { return s->name; }
uint32_t kstats_stream_record_size(const struct kstats_stream *s) { return s->layout.size; }
const struct kstats_map *kstats_stream_columns(const struct kstats_stream *s) { return &s->cols; }

int kstats_stream_check_pin(struct kstats_stream *s, char *err, size_t errlen)
{
	struct stat st;
	int ret = kstats_pin_changed(s->ring_pin, &s->ring_st);

	if (ret == -ENOENT)
		return kstats_fail(err, errlen, ENOENT, "stream %s: its ring is no longer "
				   "pinned (unloaded); run kstats watch again once it is loaded",
				   s->name);
	if (ret <= 0)
		return ret < 0 ? kstats_fail(err, errlen, -ret, "%s: %s", s->ring_pin,
					     strerror(-ret)) : 0;
	/* Pinned anew: the same ring again, or a reload's new one. */
	if (!stat(s->ring_pin, &st) && kstats_pin_id(s->ring_pin) == s->ring_id) {
		s->ring_st = st;
		return 0;
	}
	return kstats_fail(err, errlen, ESTALE, "stream %s was reloaded: %s is another "
			   "ring now; run kstats watch again to read it", s->name, s->ring_pin);
}

int kstats_stream_get_stats(struct kstats_stream *s, struct kstats_stream_stats *st,
			    char *err, size_t errlen)
{
	int64_t row[2];
	size_t nrows, i;
	int ret = kstats_map_read(s->drops, row, 1, &nrows, err, errlen);

	/* The furthest consumer's: every consumer walks every record it does not lose. */
	st->delivered = st->malformed = 0;
	for (i = 0; i < s->nconsumers; i++) {
		st->delivered = MAX(st->delivered, atomic_load(&s->consumers[i]->next_seq));
		st->malformed = MAX(st->malformed, atomic_load(&s->consumers[i]->malformed));
	}
	st->kernel_drops = !ret && nrows ? (uint64_t)row[1] : 0;
	st->kernel_drops_at_open = s->drops_at_open;
	return ret;
}

int kstats_stream_consumer_stats(const struct kstats_stream *s, int id,
				 struct kstats_consumer_stats *st)
{
	if (id < 0 || (size_t)id >= s->nconsumers)
		return -ENOENT;
	st->dropped = atomic_load(&s->consumers[id]->dropped);
	st->handled = atomic_load(&s->consumers[id]->next_seq) - st->dropped;
	return 0;
}

