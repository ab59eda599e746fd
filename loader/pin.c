// SPDX-License-Identifier: GPL-2.0
/* Re-run safety: pinned maps reused, pins published at once, links swapped. */
#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "kstats_pins.h"
#include "loader.h"

#define MAX_PROG_MAPS 64

/* A 0440 pin needs CAP_DAC_OVERRIDE (not granted): its owner lifts its write bit to open. */
int pin_open(const char *path)
{
	struct stat st;
	int fd = bpf_obj_get(path), err;

	if (fd >= 0 || errno != EACCES || stat(path, &st) || st.st_uid != geteuid())
		return fd < 0 ? -1 : fd;
	if (chmod(path, (st.st_mode & 07777) | S_IRUSR | S_IWUSR))
		return -1;
	fd = bpf_obj_get(path);
	err = errno;
	if (chmod(path, st.st_mode & 07777))
		log_msg(LOG_WARNING, "warning: cannot restore the mode of %s: %m", path);
	errno = err;
	return fd < 0 ? -1 : fd;
}

static void type_name(const struct btf *btf, __u32 id, char *buf, size_t len)
{
	const struct btf_type *t = btf ? btf__type_by_id(btf, id) : NULL;
	const char *name = t ? btf__name_by_offset(btf, t->name_off) : NULL;

	if (!btf || !id)
		snprintf(buf, len, "(no BTF)");
	else if (name && *name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "(anonymous kind %u)", t ? btf_kind(t) : 0);
}

void map_type_names(const struct btf *obj_btf, struct bpf_map *map, char *key, char *value)
{
	type_name(obj_btf, bpf_map__btf_key_type_id(map), key, KSTATS_NAME_LEN);
	type_name(obj_btf, bpf_map__btf_value_type_id(map), value, KSTATS_NAME_LEN);
}

/* 0 when the map pinned as pinned_fd has the shape the object declares. */
int map_shape_check(const struct btf *obj_btf, struct bpf_map *map, int pinned_fd,
		    const struct map_types *known, char *why, size_t len)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	struct map_types want, have;
	struct btf *btf = NULL;

	if (bpf_obj_get_info_by_fd(pinned_fd, &info, &info_len) || !info.id)
		return kstats_fail(why, len, EINVAL, "the pinned object is not a map");
#define SAME(what, pinned, declared) do {					\
		if ((pinned) != (declared))					\
			return kstats_fail(why, len, EINVAL, what " is %u, the object "	\
					   "wants %u", (unsigned int)(pinned),		\
					   (unsigned int)(declared));			\
	} while (0)
	SAME("map type", info.type, bpf_map__type(map));
	SAME("key size", info.key_size, bpf_map__key_size(map));
	SAME("value size", info.value_size, bpf_map__value_size(map));
	SAME("max_entries", info.max_entries, bpf_map__max_entries(map));
	SAME("map flags", info.map_flags, bpf_map__map_flags(map));
#undef SAME
	/* BTF by id needs CAP_SYS_ADMIN, not granted: else the names the last run saw. */
	if (info.btf_id && !(btf = btf__load_from_kernel_by_id(info.btf_id)) && !known)
		return kstats_fail(why, len, EINVAL, "its BTF cannot be read (%s) and no "
				   "status file names its types", strerror(errno));
	if (!btf && known) {
		have = *known;
	} else {
		type_name(btf, info.btf_key_type_id, have.key, sizeof(have.key));
		type_name(btf, info.btf_value_type_id, have.value, sizeof(have.value));
		btf__free(btf);
	}
	map_type_names(obj_btf, map, want.key, want.value);
	if (strcmp(want.key, have.key) || strcmp(want.value, have.value))
		return kstats_fail(why, len, EINVAL, "types are %s -> %s, the object wants "
				   "%s -> %s", have.key, have.value, want.key, want.value);
	return 0;
}

/* A ring whose consumer page cannot map writable (BPF_MAP_FREEZE) is never read. */
bool ring_consumable(struct bpf_map *map, int fd, char *why, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	if (bpf_map__type(map) != BPF_MAP_TYPE_RINGBUF)
		return true;
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED) {
		munmap(p, page);
		return true;
	}
	snprintf(why, len, "its consumer position cannot be mapped writable (%s)%s",
		 strerror(errno), errno == EPERM ? ": the ring was frozen" : "");
	return false;
}

struct pin_entry {
	char tmp[LOADER_PATH_LEN];
	char final[LOADER_PATH_LEN];
	char aside[LOADER_PATH_LEN];	/* "" or where the old final goes */
	bool pinned;
};

static atomic_uint tmp_seq;

/* Pins fd under a temporary name now; txn_commit() renames it to final. */
int txn_pin(struct pin_txn *txn, int fd, const char *final, const char *aside,
	    const char *uid, const char *gid, unsigned int mode)
{
	struct pin_entry *grown, *e;

	grown = realloc(txn->e, (txn->n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	txn->e = grown;
	e = memset(&txn->e[txn->n++], 0, sizeof(*e));
	snprintf(e->final, sizeof(e->final), "%s", final);
	snprintf(e->aside, sizeof(e->aside), "%s", aside ? aside : "");
	/* bpffs refuses names with a dot, so no ".tmp"; unique across threads. */
	snprintf(e->tmp, sizeof(e->tmp), "%s/tmp_%d_%u", txn->pin_dir, (int)getpid(),
		 atomic_fetch_add(&tmp_seq, 1));
	e->pinned = !bpf_obj_pin(fd, e->tmp);
	return e->pinned ? apply_owner(e->tmp, uid, gid, mode) : -errno;
}

/* All or nothing: a link left published would stay attached beside the old one. */
int txn_commit(struct pin_txn *txn, char *why, size_t len)
{
	struct pin_entry *e;
	size_t i;
	int ret;

	for (i = 0; i < txn->n; i++) {
		e = &txn->e[i];
		if ((*e->aside && rename(e->final, e->aside) && errno != ENOENT) ||
		    rename(e->tmp, e->final))
			goto fail;
		e->pinned = false;
	}
	return 0;
fail:
	ret = -errno;
	snprintf(why, len, "cannot publish %s: %s", e->final, strerror(-ret));
	if (*e->aside)
		rename(e->aside, e->final);	/* the old one back, if it went aside */
	while (i--) {
		e = &txn->e[i];
		if (!rename(e->final, e->tmp))
			e->pinned = true;
		if (*e->aside)
			rename(e->aside, e->final);
	}
	return ret;
}

/* Temporary pins of a loader that died; with the pin dir locked, none is live. */
void txn_remove_stale(const char *pin_dir)
{
	char path[LOADER_PATH_LEN];
	struct dirent *d;
	int pid, seq, end;
	DIR *dp = opendir(pin_dir);

	while (dp && (d = readdir(dp))) {
		if (sscanf(d->d_name, "tmp_%d_%d%n", &pid, &seq, &end) != 2 || d->d_name[end])
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, d->d_name);
		if (!unlink(path))
			log_msg(LOG_INFO, "removed %s, left by a loader that died", path);
	}
	if (dp)
		closedir(dp);
}

void txn_abort(struct pin_txn *txn)
{
	size_t i;

	for (i = 0; i < txn->n; i++)
		if (txn->e[i].pinned && !unlink(txn->e[i].tmp))
			txn->e[i].pinned = false;
}

struct prog_fp {
	__u32 id;
	__u32 type;			/* from here on: what makes two programs the same */
	__u8 tag[BPF_TAG_SIZE];
	__u32 nmaps;
	__u32 maps[MAX_PROG_MAPS];	/* sorted */
};

struct old_link {
	char pin[LOADER_PATH_LEN];
	int link_fd;
	int prog_fd;
	__u32 link_type;
	char tp_name[128];		/* raw tracepoint links */
	struct prog_fp fp;
	bool kept;
	bool detached;
};

struct link_swap {
	size_t n;
	struct old_link l[];
};

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static int prog_fingerprint(int prog_fd, struct prog_fp *fp)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	memset(fp, 0, sizeof(*fp));
	info.nr_map_ids = MAX_PROG_MAPS;
	info.map_ids = (__u64)(unsigned long)fp->maps;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	fp->id = info.id;
	fp->type = info.type;
	memcpy(fp->tag, info.tag, sizeof(fp->tag));
	fp->nmaps = info.nr_map_ids < MAX_PROG_MAPS ? info.nr_map_ids : MAX_PROG_MAPS;
	qsort(fp->maps, fp->nmaps, sizeof(fp->maps[0]), cmp_u32);
	return 0;
}

/* The i-th pin of kind res may have left: one per program, then owned ones; or "". */
static const char *old_pin(const struct kstats_status_obj *res, const char *kind, size_t i)
{
	if (i < res->nprogs)
		return !strcmp(kind, "link_") ? res->progs[i].link_pin : res->progs[i].prog_pin;
	i -= res->nprogs;
	return is_pin_kind(res->pins[i], kind) ? res->pins[i] : "";
}

/* Through the prog pins: by id needs CAP_SYS_ADMIN, not granted.  -1 if neither. */
static int prog_fd_of(__u32 prog_id, const struct kstats_status_obj *res)
{
	const char *pin;
	size_t i;
	int fd;

	for (i = 0; i < res->nprogs + res->npins; i++) {
		pin = old_pin(res, "prog_", i);
		fd = *pin ? pin_open(pin) : -1;
		if (fd >= 0 && kstats_fd_obj_id(fd) == prog_id)
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return bpf_prog_get_fd_by_id(prog_id);
}

static int read_old_link(struct old_link *ol, const struct kstats_status_obj *res)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);

	info.raw_tracepoint.tp_name = (__u64)(unsigned long)ol->tp_name;
	info.raw_tracepoint.tp_name_len = sizeof(ol->tp_name);
	ol->link_fd = pin_open(ol->pin);
	if (ol->link_fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(ol->link_fd, &info, &len) || !info.prog_id)
		return -EINVAL;
	ol->link_type = info.type;
	if (info.type != BPF_LINK_TYPE_RAW_TRACEPOINT)
		ol->tp_name[0] = 0;
	ol->fp.id = info.prog_id;
	ol->prog_fd = prog_fd_of(info.prog_id, res);
	/* Without the program: never kept, not restorable, still detached. */
	if (ol->prog_fd >= 0)
		prog_fingerprint(ol->prog_fd, &ol->fp);
	return 0;
}

/* Every link res may have left; one unreadable fails all (blind, we could attach twice). */
struct link_swap *swap_begin(const struct kstats_status_obj *res, char *why, size_t len)
{
	size_t i, j, n = res->nprogs + res->npins;
	struct link_swap *sw = calloc(1, sizeof(*sw) + n * sizeof(sw->l[0]));
	struct old_link *ol;
	const char *pin;
	int ret;

	if (!sw) {
		snprintf(why, len, "out of memory");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		pin = old_pin(res, "link_", i);
		for (j = 0; j < sw->n && strcmp(sw->l[j].pin, pin); j++)
			;
		if (!*pin || access(pin, F_OK) || j < sw->n)
			continue;
		ol = &sw->l[sw->n++];
		snprintf(ol->pin, sizeof(ol->pin), "%s", pin);
		ol->link_fd = ol->prog_fd = -1;
		ret = read_old_link(ol, res);
		if (ret) {
			snprintf(why, len, "cannot read %s as a BPF link: %s", ol->pin,
				 strerror(-ret));
			swap_free(sw);
			return NULL;
		}
	}
	return sw;
}

/* A link to an identical program (code, maps) is kept: its fd and id, or -ENOENT. */
int swap_keep(struct link_swap *sw, const char *link_pin, int new_prog_fd,
	      __u32 *prog_id)
{
	struct prog_fp fp;
	size_t i;

	if (prog_fingerprint(new_prog_fd, &fp))
		return -ENOENT;
	for (i = 0; i < sw->n; i++) {
		if (sw->l[i].prog_fd < 0 || strcmp(sw->l[i].pin, link_pin) ||
		    memcmp(&sw->l[i].fp.type, &fp.type,
			   sizeof(fp) - offsetof(struct prog_fp, type)))
			continue;
		*prog_id = sw->l[i].fp.id;
		sw->l[i].kept = true;
		return sw->l[i].prog_fd;
	}
	return -ENOENT;
}

/* Synchronously; fails, and the caller must not attach, if a link stays attached. */
int swap_detach(struct link_swap *sw, char *why, size_t len)
{
	struct old_link *ol;
	size_t i;

	for (i = 0; i < sw->n; i++) {
		ol = &sw->l[i];
		if (ol->kept)
			continue;
		/* Unpin first: the last close then frees the link now, not from a workqueue. */
		if (unlink(ol->pin))
			return kstats_fail(why, len, errno, "cannot detach %s: %s", ol->pin,
					   strerror(errno));
		close(ol->link_fd);
		ol->link_fd = -1;
		ol->detached = true;
	}
	return 0;
}

/* Re-attaches what swap_detach() detached, at the same pins. */
void swap_rollback(struct link_swap *sw)
{
	struct old_link *ol;
	const char *tp;
	size_t i;
	int fd;

	for (i = 0; i < sw->n; i++) {
		ol = &sw->l[i];
		if (!ol->detached)
			continue;
		if (ol->link_type != BPF_LINK_TYPE_RAW_TRACEPOINT || ol->prog_fd < 0) {
			log_msg(LOG_ERR, "cannot re-attach program %u of %s (link type %u); "
				"run kstats-loader again", ol->fp.id, ol->pin, ol->link_type);
			continue;
		}
		/* tp_btf programs carry their tracepoint in the program itself. */
		tp = ol->fp.type == BPF_PROG_TYPE_TRACING ? NULL : ol->tp_name;
		fd = bpf_raw_tracepoint_open(tp, ol->prog_fd);
		if (fd < 0 || bpf_obj_pin(fd, ol->pin)) {
			log_msg(LOG_ERR, "cannot re-attach program %u at %s: %m", ol->fp.id, ol->pin);
		} else {
			ol->detached = false;
			log_msg(LOG_INFO, "re-attached previous program %u at %s", ol->fp.id, ol->pin);
		}
		if (fd >= 0)
			close(fd);
	}
}

void swap_free(struct link_swap *sw)
{
	size_t i;

	for (i = 0; sw && i < sw->n; i++) {
		if (sw->l[i].link_fd >= 0)
			close(sw->l[i].link_fd);
		if (sw->l[i].prog_fd >= 0)
			close(sw->l[i].prog_fd);
	}
	free(sw);
}
