// SPDX-License-Identifier: GPL-2.0
/*
 * Resolves a map's key and value layouts on first use and caches them.  An
 * object is known by its file identity (device, inode, size, mtime), so a
 * newer object on disk is resolved afresh; a map's own BTF by its id.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/btf.h>

#include "map_types.h"

#define CACHE_MAX 64	/* entries kept, unused ones evicted oldest first */
#define BTF_MAX_BYTES (16u << 20)

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kstats_types *cache;
static unsigned int cache_len;
static unsigned long long cache_clock;
static struct kstats_cache_stats cache_stats;

int kstats_fail(char *err, size_t errlen, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -errnum;
}

static bool same_id(const struct kstats_types_id *a, const struct kstats_types_id *b)
{
	if (a->from_map != b->from_map)
		return false;
	if (a->from_map)
		return a->btf_id == b->btf_id && a->btf_size == b->btf_size &&
		       a->key_type_id == b->key_type_id &&
		       a->value_type_id == b->value_type_id;
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       !strcmp(a->map_name, b->map_name);
}

static void types_free(struct kstats_types *t)
{
	btf__free(t->btf);
	kstats_layout_free(&t->key);
	kstats_layout_free(&t->value);
	free(t->id.map_name);
	free(t);
}

static struct kstats_types *cache_get(const struct kstats_types_id *id)
{
	struct kstats_types *t;

	pthread_mutex_lock(&cache_lock);
	for (t = cache; t && !same_id(&t->id, id); t = t->next)
		;
	if (t) {
		t->refs++;
		t->last_use = ++cache_clock;
		cache_stats.hits++;
	} else {
		cache_stats.misses++;
	}
	pthread_mutex_unlock(&cache_lock);
	return t;
}

/* Hands t out once; listed, when remember, dropping the oldest unused entry if full. */
static struct kstats_types *cache_add(struct kstats_types *t, bool remember)
{
	struct kstats_types **p, **oldest = NULL, *victim;

	t->refs = 1;
	if (!remember)
		return t;
	pthread_mutex_lock(&cache_lock);
	if (cache_len >= CACHE_MAX) {
		for (p = &cache; *p; p = &(*p)->next)
			if (!(*p)->refs && (!oldest || (*p)->last_use < (*oldest)->last_use))
				oldest = p;
		if (oldest) {
			victim = *oldest;
			*oldest = victim->next;
			types_free(victim);
			cache_len--;
		}
	}
	t->cached = true;
	t->last_use = ++cache_clock;
	t->next = cache;
	cache = t;
	cache_len++;
	pthread_mutex_unlock(&cache_lock);
	return t;
}

void kstats_types_put(struct kstats_types *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&cache_lock);
	if (--t->refs == 0 && !t->cached)
		types_free(t);
	pthread_mutex_unlock(&cache_lock);
}

void kstats_cache_stats(struct kstats_cache_stats *stats)
{
	pthread_mutex_lock(&cache_lock);
	*stats = cache_stats;
	pthread_mutex_unlock(&cache_lock);
}

void kstats_cache_clear(void)
{
	struct kstats_types *t, *next;

	pthread_mutex_lock(&cache_lock);
	for (t = cache; t; t = next) {
		next = t->next;
		t->cached = false;
		if (!t->refs)
			types_free(t);	/* else its last put frees it */
	}
	cache = NULL;
	cache_len = 0;
	pthread_mutex_unlock(&cache_lock);
}

bool kstats_types_equal(const struct kstats_types *a, const struct kstats_types *b)
{
	return kstats_layout_equal(&a->key, &b->key) &&
	       kstats_layout_equal(&a->value, &b->value);
}

/* The type a pointer member "name" of a BTF map definition points to. */
static __u32 map_def_member(const struct btf *btf, const struct btf_type *def,
			    const char *name)
{
	const struct btf_member *m = btf_members(def);
	int i;

	for (i = 0; i < btf_vlen(def); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);
		const struct btf_type *ptr = btf__type_by_id(btf, m->type);

		if (n && ptr && btf_is_ptr(ptr) && !strcmp(n, name))
			return ptr->type;
	}
	return 0;
}

/* Finds the key and value types of map_name's definition in .maps. */
static int find_map_def(const struct btf *btf, const char *path, const char *map_name,
			__u32 *key_id, __u32 *value_id, __u32 *max_entries,
			char *err, size_t errlen)
{
	const struct btf_type *arr;
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec, *def;
	int sec_id, i;

	sec_id = btf__find_by_name_kind(btf, ".maps", BTF_KIND_DATASEC);
	sec = sec_id < 0 ? NULL : btf__type_by_id(btf, sec_id);
	for (i = 0, vs = sec ? btf_var_secinfos(sec) : NULL; sec && i < btf_vlen(sec);
	     i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);
		const char *name = var ? btf__name_by_offset(btf, var->name_off) : NULL;

		if (!var || !btf_is_var(var) || !name || strcmp(name, map_name))
			continue;
		def = btf__type_by_id(btf, btf__resolve_type(btf, var->type));
		if (!def || !btf_is_struct(def))
			break;
		*key_id = map_def_member(btf, def, "key");
		*value_id = map_def_member(btf, def, "value");
		arr = btf__type_by_id(btf, map_def_member(btf, def, "max_entries"));
		*max_entries = arr && btf_is_array(arr) ? btf_array(arr)->nelems : 0;
		if (!*key_id || !*value_id)
			return kstats_fail(err, errlen, EINVAL,
					   "%s: map %s is declared without __type(key/value), "
					   "so its layout is unknown", path, map_name);
		return 0;
	}
	return kstats_fail(err, errlen, ESRCH, "%s: defines no map named %s (in .maps)",
			   path, map_name);
}

static int build_layouts(struct kstats_types *t, __u32 key_id, __u32 value_id,
			 char *err, size_t errlen)
{
	t->key_type_id = key_id;
	t->value_type_id = value_id;
	int ret = kstats_layout_build(t->btf, key_id, "key", true, &t->key,
				      err, errlen);

	return ret ?: kstats_layout_build(t->btf, value_id, "value", false,
					  &t->value, err, errlen);
}

static void set_id(const struct stat *st, struct kstats_types_id *id)
{
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->size = st->st_size;
	id->mtime = st->st_mtim;
}

static int stat_id(const char *path, struct kstats_types_id *id, char *err,
		   size_t errlen)
{
	struct stat st;

	if (stat(path, &st))
		return kstats_fail(err, errlen, errno, "%s: %s", path, strerror(errno));
	set_id(&st, id);
	return 0;
}

/*
 * Opens the object once: non-blocking (a FIFO must not hang the reader), a
 * regular file only, and everything after reads this fd, never the name
 * again, which could meanwhile name a FIFO or another file.
 */
static int open_object(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), e;

	if (fd < 0) {
		e = errno;
		return kstats_fail(err, errlen, e, "%s: %s", path, strerror(e));
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return kstats_fail(err, errlen, ENOEXEC, "%s: not a regular file, so not a "
				   "BPF object; pass the .bpf the map was loaded from", path);
	}
	return fd;
}

/* Whether fd is an ELF file for BPF, before libelf's terse answers. */
static int check_bpf_elf(int fd, const char *path, char *err, size_t errlen)
{
	unsigned char h[20];
	unsigned int machine;
	ssize_t n = pread(fd, h, sizeof(h), 0);

	if (n != (ssize_t)sizeof(h) || memcmp(h, "\177ELF", 4))
		return kstats_fail(err, errlen, ENOEXEC, "%s: not an ELF file, so not a BPF "
				   "object; pass the .bpf the map was loaded from", path);
	machine = h[5] == 2 ? (unsigned int)h[18] << 8 | h[19] : h[18] | (unsigned int)h[19] << 8;
	if (machine != EM_BPF)
		return kstats_fail(err, errlen, ENOEXEC, "%s: an ELF file for machine %u, not "
				   "a BPF object; pass the .bpf the map was loaded from",
				   path, machine);
	return 0;
}

/* The .BTF section of elf, at most BTF_MAX_BYTES (the kernel's own limit). */
static int btf_from_elf(Elf *elf, const char *path, struct btf **btf,
			char *err, size_t errlen)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *name;

	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		return kstats_fail(err, errlen, ENOEXEC, "%s: a corrupt ELF file: %s", path,
				   elf_errmsg(-1));
	while ((scn = elf_nextscn(elf, scn))) {
		name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && !strcmp(name, ".BTF") && sh.sh_type == SHT_PROGBITS)
			break;
	}
	/* Not ENOENT: the file is there, so this is no "missing object". */
	if (!scn)
		return kstats_fail(err, errlen, ENODATA, "%s: a BPF object without readable "
				   "BTF (no .BTF section); build it with clang -g", path);
	if (sh.sh_size > BTF_MAX_BYTES)
		return kstats_fail(err, errlen, EFBIG, "%s: its BTF has %llu bytes, more "
				   "than the kernel's limit of %u; pass the .bpf the map was "
				   "loaded from", path, (unsigned long long)sh.sh_size,
				   BTF_MAX_BYTES);
	data = elf_getdata(scn, NULL);
	if (!data)
		return kstats_fail(err, errlen, ENOEXEC, "%s: a corrupt ELF file: %s", path,
				   elf_errmsg(-1));
	*btf = btf__new(data->d_buf, data->d_size);
	if (!*btf)
		return kstats_fail(err, errlen, ENODATA, "%s: a BPF object without readable "
				   "BTF (%s); build it with clang -g", path, strerror(errno));
	return 0;
}

static int parse_object(int fd, const char *path, const char *map_name,
			struct kstats_types *t, char *err, size_t errlen)
{
	__u32 key_id = 0, value_id = 0;
	Elf *elf;
	int ret;

	ret = check_bpf_elf(fd, path, err, errlen);
	if (ret)
		return ret;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return kstats_fail(err, errlen, EINVAL, "libelf: %s", elf_errmsg(-1));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ret = btf_from_elf(elf, path, &t->btf, err, errlen);
	elf_end(elf);
	if (ret)
		return ret;
	ret = find_map_def(t->btf, path, map_name, &key_id, &value_id, &t->max_entries,
			   err, errlen);
	return ret ?: build_layouts(t, key_id, value_id, err, errlen);
}

int kstats_types_from_object(const char *path, const char *map_name,
			     struct kstats_types **out, char *err, size_t errlen)
{
	struct kstats_types_id id = { .map_name = (char *)map_name }, after = id;
	struct kstats_types *t;
	struct stat st;
	char *name;
	int ret, fd;

	ret = stat_id(path, &id, err, errlen);
	if (ret)
		return ret;
	*out = cache_get(&id);
	if (*out)
		return 0;
	t = calloc(1, sizeof(*t));
	name = strdup(map_name);
	if (!t || !name) {
		free(t);
		free(name);
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	}
	t->id.map_name = name;
	fd = open_object(path, err, errlen);
	ret = fd < 0 ? fd : parse_object(fd, path, map_name, t, err, errlen);
	if (!ret && fstat(fd, &st))
		ret = kstats_fail(err, errlen, errno, "%s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (ret) {
		types_free(t);
		return ret;
	}
	set_id(&st, &after);
	t->id = after;
	t->id.map_name = name;
	/* Not the file the name gave before, or changed while parsed: use it this once. */
	*out = cache_add(t, same_id(&id, &after));
	return 0;
}

/*
 * A kernel BTF object, fetched the way loading it would be: a cached copy
 * is served only to a caller who may load it (CAP_SYS_ADMIN), and only
 * while that id still holds a BTF of the same size.  One fd and one info
 * call for the size; the data only on a cache miss.
 */
static int btf_open(__u32 btf_id, __u32 *size)
{
	struct bpf_btf_info bi = {};
	__u32 len = sizeof(bi);
	int fd = bpf_btf_get_fd_by_id(btf_id), ret;

	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &bi, &len)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	*size = bi.btf_size;
	return fd;
}

static struct btf *btf_fetch(int fd, __u32 size)
{
	struct bpf_btf_info bi = { .btf_size = size };
	__u32 len = sizeof(bi);
	void *data = malloc(size ?: 1);
	struct btf *btf = NULL;
	int e = ENOMEM;

	if (data) {
		bi.btf = (__u64)(uintptr_t)data;
		e = bpf_obj_get_info_by_fd(fd, &bi, &len) ? errno :
		    bi.btf_size != size ? EAGAIN : 0;	/* the id now holds another BTF */
	}
	if (!e) {
		btf = btf__new(data, size);
		e = btf ? 0 : errno;
	}
	free(data);
	errno = e;
	return btf;
}

int kstats_types_from_map(const struct bpf_map_info *info,
			  struct kstats_types **out, char *err, size_t errlen)
{
	struct kstats_types_id id = {
		.from_map = true, .btf_id = info->btf_id,
		.key_type_id = info->btf_key_type_id,
		.value_type_id = info->btf_value_type_id,
	};
	struct kstats_types *t;
	int ret, fd;

	if (!info->btf_id || !info->btf_key_type_id || !info->btf_value_type_id)
		return kstats_fail(err, errlen, ENODATA, "map %s has no key/value BTF",
				   info->name);
	fd = btf_open(info->btf_id, &id.btf_size);
	if (fd < 0)
		return kstats_fail(err, errlen, -fd, "cannot load the BTF of map %s: %s",
				   info->name, strerror(-fd));
	*out = cache_get(&id);
	if (*out) {
		close(fd);
		return 0;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		close(fd);
		return kstats_fail(err, errlen, ENOMEM, "out of memory");
	}
	t->btf = btf_fetch(fd, id.btf_size);
	close(fd);
	if (!t->btf)
		ret = kstats_fail(err, errlen, errno, "cannot load the BTF of map %s: %s",
				  info->name, strerror(errno));
	else
		ret = build_layouts(t, id.key_type_id, id.value_type_id, err, errlen);
	if (ret) {
		types_free(t);
		return ret;
	}
	t->id = id;
	*out = cache_add(t, true);
	return 0;
}
