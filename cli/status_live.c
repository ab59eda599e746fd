// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel holds now for what the loader status names: per program
 * its run count and cost, per map its fill, memlock and stream drops.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "hist.h"
#include "kstats_pins.h"
#include "kstats_reader.h"
#include "status.h"

/*
 * The program by id (needs CAP_SYS_ADMIN), else by its prog_ pin: the one
 * the status names, or the one next to its link pin.
 */
static int prog_fd(const struct kstats_status_prog *p, const char *obj)
{
	char dir[PATH_MAX], pin[PATH_MAX];
	int fd = bpf_prog_get_fd_by_id(p->prog_id), err = -errno;

	if (fd >= 0)
		return fd;
	snprintf(pin, sizeof(pin), "%s", p->prog_pin);
	if (!*pin && *p->link_pin && *p->section) {
		snprintf(dir, sizeof(dir), "%s", p->link_pin);
		if (kstats_pin_path(pin, sizeof(pin), dirname(dir), "prog", obj, p->section))
			return err;
	}
	fd = *pin ? bpf_obj_get(pin) : -1;
	return fd >= 0 ? fd : err;
}

static void prog_probe(const struct kstats_status_prog *p, const char *obj,
		       struct prog_live *pl)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd;

	memset(pl, 0, sizeof(*pl));
	if (!p->prog_id)
		return;		/* not loaded: nothing to ask the kernel */
	pl->detached = *p->link_pin && access(p->link_pin, F_OK) && errno == ENOENT;
	fd = prog_fd(p, obj);
	if (fd < 0) {
		pl->err = fd;
		return;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		pl->err = -errno;
	} else {
		pl->have = true;
		pl->run_cnt = info.run_cnt;
		pl->run_time_ns = info.run_time_ns;
		pl->misses = info.recursion_misses;
	}
	close(fd);
}

struct prog_live *status_probe_progs(const struct kstats_status *st, size_t *n)
{
	struct prog_live *pl = NULL, *grown;
	size_t i, j;

	*n = 0;
	for (i = 0; i < st->nobjs; i++) {
		const struct kstats_status_obj *o = &st->objs[i];

		for (j = 0; j < o->nprogs; j++) {
			grown = realloc(pl, (*n + 1) * sizeof(*pl));
			if (!grown)
				return pl;
			pl = grown;
			prog_probe(&o->progs[j], o->name, &pl[(*n)++]);
		}
	}
	return pl;
}

static uint64_t fdinfo_memlock(int fd)
{
	char path[64], line[256];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static bool hash_like(__u32 type)
{
	return type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_LRU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

static uint64_t count_entries(int fd, __u32 key_size, __u32 max)
{
	char *a = calloc(2, key_size ?: 1), *prev = NULL, *next = a;
	uint64_t n = 0;

	if (!a)
		return 0;
	while (n <= max && !bpf_map_get_next_key(fd, prev, next)) {
		n++;
		prev = next;
		next = next == a ? a + key_size : a;
	}
	free(a);
	return n;
}

/* Sum of every value leaf of every entry, read generically. */
static int sum_values(const char *obj_path, const char *map, const char *pin,
		      uint64_t *sum)
{
	struct kstats_map_opts mo = { .obj_path = obj_path, .map_name = map, .pin_path = pin };
	char err[KSTATS_ERR_LEN];
	struct kstats_map *m = NULL;
	int64_t *rows = NULL;
	size_t nrows, r, c;
	int ret = kstats_map_open(&mo, &m, err, sizeof(err));

	if (!ret)
		ret = kstats_read_rows(m, &rows, &nrows, err, sizeof(err));
	for (*sum = 0, r = 0; !ret && r < nrows; r++)
		for (c = kstats_map_nkey_cols(m); c < kstats_map_ncols(m); c++)
			*sum = kstats_add_sat(*sum, (uint64_t)rows[r * kstats_map_ncols(m) + c]);
	free(rows);
	kstats_map_close(m);
	return ret;
}

static void map_probe(const struct kstats_status_map *mp, struct map_live *ml)
{
	LIBBPF_OPTS(bpf_obj_get_opts, opts, .file_flags = BPF_F_RDONLY);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_obj_get_opts(mp->pin, &opts);

	memset(ml, 0, sizeof(*ml));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		ml->err = -errno;
		if (fd >= 0)
			close(fd);
		return;
	}
	ml->have = true;
	ml->type = info.type;
	ml->id = info.id;
	ml->max_entries = info.max_entries;
	ml->memlock = fdinfo_memlock(fd);
	ml->counted = hash_like(info.type);
	if (ml->counted)
		ml->entries = count_entries(fd, info.key_size, info.max_entries);
	close(fd);
}

static const char *map_pin(const struct kstats_status_obj *o, const char *name)
{
	size_t i;

	for (i = 0; i < o->nmaps; i++)
		if (!strcmp(o->maps[i].name, name))
			return o->maps[i].pin;
	return "";
}

/*
 * Drops are counted for event streams (.kstats.streams): the records their
 * ring buffer had no room for, shown on the ring buffer and on the counter.
 */
static void stream_drops(const struct kstats_status_obj *o,
			 const struct kstats_objmeta *meta, const char *map,
			 struct map_live *ml)
{
	const char *pin;
	size_t i;

	for (i = 0; i < meta->nstreams; i++) {
		const struct kstats_stream_meta *st = &meta->streams[i];

		if (strcmp(map, st->ringbuf) && strcmp(map, st->drops))
			continue;
		pin = map_pin(o, st->drops);
		ml->has_drops = *pin && !sum_values(o->path, st->drops, pin, &ml->drops);
		return;
	}
}

void status_map_live(struct status_view *v, const struct kstats_status_obj *o,
		     const struct kstats_objmeta *meta,
		     const struct kstats_status_map *mp, struct map_live *ml)
{
	const struct kstats_map_meta *mm = kstats_objmeta_map(meta, mp->name);
	bool denied;

	map_probe(mp, ml);
	if (ml->have)
		stream_drops(o, meta, mp->name, ml);
	denied = ml->err == -EPERM || ml->err == -EACCES;
	/* A root-only map (a start map) is not for readers: skipped, no failure. */
	ml->root_only = denied && mm && !(mm->mode & 0044) && geteuid();
	v->perm_denied |= denied && !ml->root_only;
	/* A loaded object's map must be there: its pin gone is a broken pipeline. */
	if (ml->err == -ENOENT && !strcmp(o->outcome, "LOADED")) {
		v->maps_gone++;
		v->gone_example = mp->pin;
	}
}

void status_object_meta(const struct kstats_status_obj *o, struct kstats_objmeta *meta)
{
	char err[512];

	if (kstats_objmeta_read(o->path, meta, err, sizeof(err)))
		memset(meta, 0, sizeof(*meta));
}

const char *status_map_error(const struct map_live *ml)
{
	return ml->root_only ? "root-only" : status_probe_error(ml->err);
}

const char *status_probe_error(int err)
{
	return err == -EPERM || err == -EACCES ? "permission denied" :
	       err == -ENOENT ? "gone" : strerror(-err);
}
