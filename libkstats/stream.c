// SPDX-License-Identifier: GPL-2.0
/*
 * Opens an event stream: the object's stream metadata, the pinned ring
 * buffer (claimed: one reader per ring), its drop counter and the record
 * layout from the object's BTF.  The threads are stream_queue.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kstats_tool.h"
#include "kstats_objmeta.h"
#include "kstats_pins.h"
#include "map_types.h"
#include "stream_internal.h"

/*
 * Reads are destructive, so a second reader would steal records: claims
 * the ring with flock on a file named by its map id in a directory only
 * root can write or read (a name anyone could take first, such as an
 * abstract socket, would let any user stop root's watch).  The ring's own
 * pin cannot be locked: bpffs refuses to open it (EIO).  The kernel drops
 * the lock when the process dies; the holder removes the file when it
 * closes, so the claim checks it locked the file the name still gives.
 */
static int lock_dir_open(char *err, size_t errlen)
{
	struct stat st = {};
	int fd;

	if (mkdir(KSTATS_STREAM_LOCK_DIR, 0700) && errno != EEXIST)
		return kstats_fail(err, errlen, errno, "cannot create %s: %s%s",
				   KSTATS_STREAM_LOCK_DIR, strerror(errno),
				   errno == EACCES ? " (run kstats watch as root)" : "");
	fd = open(KSTATS_STREAM_LOCK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return kstats_fail(err, errlen, errno, "%s: %s", KSTATS_STREAM_LOCK_DIR,
				   strerror(errno));
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return kstats_fail(err, errlen, EPERM, "%s is not a directory of this user's "
				   "alone (owner uid %u, mode %04o), so others could claim "
				   "streams; run: %s %s", KSTATS_STREAM_LOCK_DIR,
				   (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777),
				   st.st_uid == geteuid() ? "chmod 0700" : "rm -r",
				   KSTATS_STREAM_LOCK_DIR);
	}
	return fd;
}

/*
 * 0 when locked, 1 when the file was removed meanwhile (try again), or
 * -errno; lock_fd stays open only when locked, since close removes the file.
 */
static int lock_once(struct kstats_stream *s, char *err, size_t errlen)
{
	struct stat held, named;
	int fd, ret;

	fd = openat(s->lock_dir_fd, s->lock_name,
		    O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0)
		return kstats_fail(err, errlen, errno, "%s/%s: %s", KSTATS_STREAM_LOCK_DIR,
				   s->lock_name, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB))
		ret = errno == EWOULDBLOCK ?
		      kstats_fail(err, errlen, EBUSY, "stream %s already has a reader (one "
				  "per ring buffer: reads are destructive); stop the other "
				  "kstats watch", s->name) :
		      kstats_fail(err, errlen, errno, "flock: %s", strerror(errno));
	else if (fstat(fd, &held) || !S_ISREG(held.st_mode))
		ret = kstats_fail(err, errlen, EINVAL, "%s/%s: not a regular file",
				  KSTATS_STREAM_LOCK_DIR, s->lock_name);
	else if (fstatat(s->lock_dir_fd, s->lock_name, &named, AT_SYMLINK_NOFOLLOW) ||
		 named.st_ino != held.st_ino || named.st_dev != held.st_dev)
		ret = 1;
	else
		ret = 0;
	if (ret)
		close(fd);
	else
		s->lock_fd = fd;
	return ret;
}

static int claim_ring(struct kstats_stream *s, __u32 ring_id, char *err, size_t errlen)
{
	int ret, tries;

	s->lock_dir_fd = lock_dir_open(err, errlen);
	if (s->lock_dir_fd < 0)
		return s->lock_dir_fd;
	snprintf(s->lock_name, sizeof(s->lock_name), "ring-%u", ring_id);
	for (tries = 0; tries < 100; tries++) {
		ret = lock_once(s, err, errlen);
		if (ret <= 0)
			return ret;
	}
	return kstats_fail(err, errlen, EBUSY, "stream %s: its claim keeps being removed; "
			   "stop the other kstats watch", s->name);
}

static int check_ring(struct kstats_stream *s, const char *pin, char *err, size_t errlen)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(s->ring_fd, &info, &len))
		return kstats_fail(err, errlen, errno, "%s: %s", pin, strerror(errno));
	if (info.type != BPF_MAP_TYPE_RINGBUF)
		return kstats_fail(err, errlen, EINVAL, "%s: not a ring buffer but %s", pin,
				   libbpf_bpf_map_type_str(info.type));
	s->ring_id = info.id;
	snprintf(s->ring_pin, sizeof(s->ring_pin), "%s", pin);
	return claim_ring(s, info.id, err, errlen);
}

static const struct kstats_stream_meta *
pick_stream(const struct kstats_objmeta *meta, const struct kstats_stream_opts *o,
	    char *err, size_t errlen)
{
	const struct kstats_stream_meta *sm = NULL;
	char names[256] = "";
	size_t i, n = 0;

	if (o->stream)
		sm = kstats_objmeta_stream(meta, o->stream);
	else if (meta->nstreams == 1)
		sm = &meta->streams[0];
	if (sm)
		return sm;
	for (i = 0; i < meta->nstreams; i++)
		n += snprintf(names + n, n < sizeof(names) ? sizeof(names) - n : 0, "%s%s",
			      i ? ", " : "", meta->streams[i].name);
	if (o->stream)
		kstats_fail(err, errlen, ENOENT, "%s has no stream %s; it has: %s", o->obj_path,
			    o->stream, meta->nstreams ? names : "none");
	else
		kstats_fail(err, errlen, ENOENT, "%s has %zu streams; name one of: %s",
			    o->obj_path, meta->nstreams, meta->nstreams ? names : "none");
	return NULL;
}

static int read_drops(struct kstats_stream *s, uint64_t *drops, char *err, size_t errlen)
{
	int64_t row[2];
	size_t nrows;
	int ret = kstats_map_read(s->drops, row, 1, &nrows, err, errlen);

	if (!ret)
		*drops = nrows ? (uint64_t)row[1] : 0;
	return ret;
}

static int open_drops(struct kstats_stream *s, const struct kstats_stream_opts *o,
		      const struct kstats_stream_meta *sm, const char *pin,
		      char *err, size_t errlen)
{
	/* pin_once: the drops of the ring held, whatever the pin names later. */
	struct kstats_map_opts mo = { .obj_path = o->obj_path, .map_name = sm->drops,
				      .pin_path = pin, .pin_once = true };
	int ret;

	ret = kstats_map_open(&mo, &s->drops, err, errlen);
	if (ret)
		return ret;
	if (kstats_map_ncols(s->drops) != 2 || kstats_map_max_rows(s->drops) != 1)
		return kstats_fail(err, errlen, EINVAL,
				   "%s: a drops map is one __u32 -> __u64", pin);
	return read_drops(s, &s->drops_at_open, err, errlen);
}

static struct leaf leaf_of(const struct kstats_column *c)
{
	unsigned int bits = 8 * c->size;

	return (struct leaf){ .end8 = c->offset + c->size - 8, .shift = 64 - bits,
			      .mask = c->is_signed || bits == 64 ? UINT64_MAX :
				      (UINT64_C(1) << bits) - 1 };
}

int kstats_stream_plan(struct kstats_stream *s, const char *record, char *err, size_t errlen)
{
	const struct kstats_column *c = s->layout.cols;
	size_t i;

	if (!s->layout.ncols || strcmp(c->name, HDR_PREFIX "ts_ns") || c->offset || c->size != 8)
		return kstats_fail(err, errlen, EINVAL, "struct %s does not begin with "
				   "struct kstats_stream_hdr hdr", record);
	while (s->first_col < s->layout.ncols &&
	       !strncmp(c[s->first_col].name, HDR_PREFIX, strlen(HDR_PREFIX)))
		s->first_col++;
	s->nleaves = s->layout.ncols - s->first_col;
	s->leaves = calloc(s->nleaves + 1, sizeof(*s->leaves));
	s->slot_size = sizeof(uint64_t) + (s->layout.size + 7) / 8 * 8;
	s->stage = malloc(STAGE_RECORDS * s->slot_size);
	if (!s->leaves || !s->stage)
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	s->leaves_flat = true;
	for (c += s->first_col, i = 0; i < s->nleaves; c++, i++) {
		if (c->offset + c->size < 8)
			return kstats_fail(err, errlen, EINVAL, "struct %s: %s overlaps the header",
					   record, c->name);
		s->leaves[i] = leaf_of(c);
		s->leaves_flat &= c->size == 8 && c->offset == c[-i].offset + 8 * i;
	}
	return 0;
}

static int build_layout(struct kstats_stream *s, const struct kstats_stream_meta *sm,
			char *err, size_t errlen)
{
	const struct btf *btf = kstats_map_btf(s->drops);
	int id = btf__find_by_name_kind(btf, sm->record, BTF_KIND_STRUCT);
	int ret;

	if (id < 0)
		return kstats_fail(err, errlen, ENOENT,
				   "stream %s: no struct %s in the object's BTF",
				   sm->name, sm->record);
	ret = kstats_layout_build(btf, id, sm->record, false, &s->layout, err, errlen);
	return ret ? ret : kstats_stream_plan(s, sm->record, err, errlen);
}

static int open_ring(struct kstats_stream *s, const char *pin, char *err, size_t errlen)
{
	struct epoll_event ring_ev = { .events = EPOLLIN, .data.u32 = TAG_RING };
	struct epoll_event stop_ev = { .events = EPOLLIN, .data.u32 = TAG_STOP };
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
	ret = check_ring(s, pin, err, errlen);
	if (ret)
		return ret;
	s->rb = ring_buffer__new(s->ring_fd, kstats_stream_on_record, s, NULL);
	if (!s->rb && errno == EPERM)
		return kstats_fail(err, errlen, errno, "%s: the ring was frozen "
				   "(BPF_MAP_FREEZE) and can no longer be read; "
				   KSTATS_FIX_LOAD " to recreate it", pin);
	if (!s->rb)
		return kstats_fail(err, errlen, errno, "%s: cannot map the ring: %s", pin,
				   strerror(errno));
	/* The ring's epoll set, nested in ours beside the stop eventfd. */
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->epoll_fd < 0 || s->stop_fd < 0 || s->wake_fd < 0 ||
	    epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->rb), &ring_ev) ||
	    epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->stop_fd, &stop_ev))
		return kstats_fail(err, errlen, errno, "epoll: %s", strerror(errno));
	return 0;
}

int kstats_stream_open(const struct kstats_stream_opts *o, struct kstats_stream **out,
		       char *err, size_t errlen)
{
	const struct kstats_stream_meta *sm;
	struct kstats_objmeta meta;
	struct kstats_stream *s;
	char obj[KSTATS_NAME_LEN], pin[PATH_MAX], drops_pin[PATH_MAX];
	int ret;

	ret = kstats_objmeta_read(o->obj_path, &meta, err, errlen);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s) {
		kstats_objmeta_free(&meta);
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	}
	s->ring_fd = s->lock_fd = s->lock_dir_fd = s->epoll_fd = s->stop_fd = s->wake_fd = s->sig_fd = -1;
	sm = pick_stream(&meta, o, err, errlen);
	if (!sm) {
		ret = -ENOENT;
		goto err_out;
	}
	snprintf(s->name, sizeof(s->name), "%s", sm->name);
	ret = kstats_obj_name(o->obj_path, obj, sizeof(obj));
	if (!ret)
		ret = kstats_pin_path(pin, sizeof(pin), o->pin_dir, "map", obj, sm->ringbuf);
	if (!ret)
		ret = kstats_pin_path(drops_pin, sizeof(drops_pin), o->pin_dir, "map", obj,
				      sm->drops);
	if (ret) {
		kstats_fail(err, errlen, -ret, "%s: bad object or pin name", o->obj_path);
		goto err_out;
	}
	ret = open_ring(s, pin, err, errlen);
	if (!ret)
		ret = open_drops(s, o, sm, drops_pin, err, errlen);
	if (!ret)
		ret = build_layout(s, sm, err, errlen);
	if (ret)
		goto err_out;
	kstats_objmeta_free(&meta);
	*out = s;
	return 0;
err_out:
	kstats_objmeta_free(&meta);
	kstats_stream_close(s);
	return ret;
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

void kstats_stream_close(struct kstats_stream *s)
{
	size_t i;

	if (!s)
		return;
	kstats_stream_stop(s, NULL, 0);
	for (i = 0; i < s->nconsumers; i++)
		kstats_consumer_free(s->consumers[i]);
	free(s->consumers);
	ring_buffer__free(s->rb);
	kstats_map_close(s->drops);
	kstats_layout_free(&s->layout);
	free(s->leaves);
	free(s->stage);
	close_fd(s->ring_fd);
	if (s->lock_fd >= 0)	/* while still holding it: see claim_ring */
		unlinkat(s->lock_dir_fd, s->lock_name, 0);
	close_fd(s->lock_fd);
	close_fd(s->lock_dir_fd);
	close_fd(s->epoll_fd);
	close_fd(s->stop_fd);
	close_fd(s->wake_fd);
	close_fd(s->sig_fd);
	free(s);
}

const char *kstats_stream_name(const struct kstats_stream *s) { return s->name; }
uint32_t kstats_stream_record_size(const struct kstats_stream *s) { return s->layout.size; }
const struct btf *kstats_stream_btf(const struct kstats_stream *s)
{
	return kstats_map_btf(s->drops);
}

size_t kstats_stream_ncols(const struct kstats_stream *s)
{
	return s->layout.ncols - s->first_col;
}

const struct kstats_column *kstats_stream_column(const struct kstats_stream *s, size_t i)
{
	return i < kstats_stream_ncols(s) ? &s->layout.cols[s->first_col + i] : NULL;
}

int kstats_stream_column_index(const struct kstats_stream *s, const char *name)
{
	size_t i;

	for (i = 0; i < kstats_stream_ncols(s); i++)
		if (!strcmp(kstats_stream_column(s, i)->name, name))
			return (int)i;
	return -ENOENT;
}

const char *kstats_stream_enum_name(const struct kstats_stream *s,
				    const struct kstats_column *col, int64_t v)
{
	return kstats_column_enum_name(s->drops, col, v);
}

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
	st->delivered = atomic_load_explicit(&s->delivered, memory_order_relaxed);
	st->malformed = atomic_load_explicit(&s->malformed, memory_order_relaxed);
	st->kernel_drops_at_open = s->drops_at_open;
	return read_drops(s, &st->kernel_drops, err, errlen);
}
