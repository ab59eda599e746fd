// SPDX-License-Identifier: GPL-2.0
/* The one reader of a .bpf object: its .kstats.* metadata and its BTF. */
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <bpf/btf.h>

#include "kstats_fileio.h"
#include "kstats_objmeta.h"
#include "map_internal.h"

#define BTF_MAX_BYTES (16u << 20)	/* the kernel's own limit */
#define OBJECT_MAX_BYTES (64u << 20)	/* its BTF and the rest */
#define HINT(want) ((want) & KSTATS_WANT_BTF ? "; pass the .bpf the map was loaded from" : "")

/* A .kstats.* section: records with names first (NAME_LEN, then OWNER_LEN ones). */
#define SECTION(sec, arr, type, names, owners) { sec, offsetof(struct kstats_objmeta, arr), \
	offsetof(struct kstats_objmeta, n##arr), sizeof(type), offsetof(type, version), \
	names, owners }
static const struct section {
	const char *name;
	size_t arr, n, size, version, names, owners;
} sections[] = {
	SECTION(KSTATS_SEC_MAPS, maps, struct kstats_map_meta, 1, 2),
	SECTION(KSTATS_SEC_PROGS, progs, struct kstats_prog_meta, 2, 2),
	SECTION(KSTATS_SEC_HISTS, hists, struct kstats_hist_meta, 4, 0),
	SECTION(KSTATS_SEC_STREAMS, streams, struct kstats_stream_meta, 4, 0),
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

static int copy_meta(const char *name, Elf_Data *data, struct kstats_objmeta *m)
{
	const struct section *s;
	void **arr;

	if (!strcmp(name, KSTATS_SEC_OBJ)) {
		if (data->d_size != sizeof(m->obj))
			return -EINVAL;
		memcpy(&m->obj, data->d_buf, sizeof(m->obj));
		return 0;
	}
	for (s = sections; s < sections + NSECTIONS && strcmp(name, s->name); s++)
		;
	if (s == sections + NSECTIONS)
		return 0;
	if (data->d_size % s->size)
		return -EINVAL;
	arr = (void **)((char *)m + s->arr);
	free(*arr);	/* a hostile object may repeat a section: the last one counts */
	*arr = malloc(data->d_size ?: 1);
	if (!*arr)
		return -ENOMEM;
	memcpy(*arr, data->d_buf, data->d_size);
	*(size_t *)((char *)m + s->n) = data->d_size / s->size;
	return 0;
}

/* A version this tool does not read, into *bad; else each name NUL-terminated. */
static bool foreign_version(struct kstats_objmeta *m, __u32 *bad)
{
	const struct section *s;
	size_t i, k;
	char *rec;

	for (s = sections; s < sections + NSECTIONS; s++) {
		rec = *(char **)((char *)m + s->arr);
		for (i = 0; i < *(size_t *)((char *)m + s->n); i++, rec += s->size) {
			memcpy(bad, rec + s->version, sizeof(*bad));
			if (*bad != KSTATS_META_VERSION)
				return true;
			for (k = 1; k <= s->names; k++)
				rec[k * KSTATS_NAME_LEN - 1] = 0;
			for (k = 1; k <= s->owners; k++)
				rec[s->names * KSTATS_NAME_LEN + k * KSTATS_OWNER_LEN - 1] = 0;
		}
	}
	*bad = m->obj.version;
	return *bad != KSTATS_META_VERSION;
}

/* One pass over the sections of elf (NULL: not ELF), then its BTF; what names it in errors. */
static int read_elf(Elf *elf, const char *what, unsigned int want,
		    struct kstats_objmeta *m, char *err, size_t errlen)
{
	const char *hint = HINT(want);
	Elf_Scn *scn = NULL, *btf_scn = NULL;
	GElf_Shdr sh, btf_sh = {};
	GElf_Ehdr eh = {};
	Elf_Data *data;
	size_t shstrndx;
	__u32 version;
	int ret = 0;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return kstats_fail(err, errlen, ENOEXEC, "%s: not an ELF file, so not a BPF "
				   "object%s", what, hint);
	if ((want & KSTATS_WANT_BTF) && (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_BPF))
		return kstats_fail(err, errlen, ENOEXEC, "%s: an ELF file for machine %u, not "
				   "a BPF object%s", what, eh.e_machine, hint);
	if (elf_getshdrstrndx(elf, &shstrndx))
		return kstats_fail(err, errlen, ENOEXEC, "%s: a corrupt ELF file: %s", what,
				   elf_errmsg(-1));
	while (!ret && (scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".BTF") && !btf_scn) {
			btf_scn = scn;
			btf_sh = sh;
		}
		if (!(want & KSTATS_WANT_META) || !name || strncmp(name, ".kstats.", 8))
			continue;
		data = elf_getdata(scn, NULL);
		ret = data ? copy_meta(name, data, m) : -EINVAL;
	}
	if (ret)
		return kstats_fail(err, errlen, -ret, "%s: corrupt .kstats metadata: %s",
				   what, strerror(-ret));
	if (foreign_version(m, &version))
		return kstats_fail(err, errlen, EPROTO, "%s: .kstats metadata version %u, "
				   "this tool reads version %d; rebuild the object with this "
				   "tree's headers", what, version, KSTATS_META_VERSION);
	if (!(want & KSTATS_WANT_BTF))
		return 0;
	/* Not ENOENT: the file is there, so this is no "missing object". */
	if (!btf_scn)
		return kstats_fail(err, errlen, ENODATA, "%s: a BPF object without readable "
				   "BTF (no .BTF section); build it with clang -g", what);
	if (btf_sh.sh_size > BTF_MAX_BYTES)
		return kstats_fail(err, errlen, EFBIG, "%s: its BTF has %llu bytes, more "
				   "than the kernel's limit of %u%s", what,
				   (unsigned long long)btf_sh.sh_size, BTF_MAX_BYTES, hint);
	data = elf_getdata(btf_scn, NULL);
	if (!data)
		return kstats_fail(err, errlen, ENOEXEC, "%s: a corrupt ELF file: %s", what,
				   elf_errmsg(-1));
	m->btf = btf__new(data->d_buf, data->d_size);
	if (!m->btf)
		return kstats_fail(err, errlen, ENODATA, "%s: a BPF object without readable "
				   "BTF (%s); build it with clang -g", what, strerror(errno));
	return 0;
}

static int read_object(void *buf, size_t len, const char *what, unsigned int want,
		       struct kstats_objmeta *m, char *err, size_t errlen)
{
	Elf *elf;
	int ret;

	*m = (struct kstats_objmeta){ .obj = { .max_kver = KSTATS_KVER_INF,
						.version = KSTATS_META_VERSION } };
	if (elf_version(EV_CURRENT) == EV_NONE)
		return kstats_fail(err, errlen, EINVAL, "libelf: %s", elf_errmsg(-1));
	elf = elf_memory(buf, len);
	ret = read_elf(elf, what, want, m, err, errlen);
	elf_end(elf);
	if (ret)
		kstats_objmeta_free(m);
	return ret;
}

/* The process's catalog: each object's bytes, read once (non-blocking: a FIFO must not hang us;
 * a regular file, never reopened by name), parsed from memory by every later reader, read again
 * only when the path names another file now (an update renamed over it: stat(), no open). */
struct catalog_entry {
	struct catalog_entry *next;
	char *path;
	struct stat st;		/* of the file read */
	char *buf;
	size_t len;
};

static struct catalog_entry *catalog;
static pthread_mutex_t catalog_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The entry of path, read now unless it is the file read before; under catalog_lock. */
static int catalog_entry(const char *path, unsigned int want, struct catalog_entry **out,
			 char *err, size_t errlen)
{
	struct catalog_entry *e, fresh = {};
	struct stat st;
	int fd, ret;

	for (e = catalog; e && strcmp(e->path, path); e = e->next)
		;
	if (e && !stat(path, &st) && same_file(&st, &e->st)) {
		*out = e;
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return kstats_fail(err, errlen, errno, "%s: %s", path, errno == ENOENT ?
				   "no such file (a dangling link?)" : strerror(errno));
	if (fstat(fd, &fresh.st) || !S_ISREG(fresh.st.st_mode))
		ret = kstats_fail(err, errlen, ENOEXEC, "%s: not a regular file, so not a "
				  "BPF object%s", path, HINT(want));
	else if ((ret = kstats_read_fd(fd, OBJECT_MAX_BYTES, &fresh.buf, &fresh.len)) == -EFBIG)
		ret = kstats_fail(err, errlen, EFBIG, "%s: more than %u bytes, so not a BPF "
				  "object%s", path, OBJECT_MAX_BYTES, HINT(want));
	else if (ret)
		ret = kstats_fail(err, errlen, -ret, "%s: %s", path, strerror(-ret));
	close(fd);
	if (ret)
		return ret;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || !(e->path = strdup(path))) {
			free(e);
			free(fresh.buf);
			return kstats_fail(err, errlen, ENOMEM, "out of memory");
		}
		e->next = catalog;
		catalog = e;
	}
	free(e->buf);
	e->st = fresh.st;
	e->buf = fresh.buf;
	e->len = fresh.len;
	*out = e;
	return 0;
}

int kstats_object_read(const char *path, unsigned int want, struct kstats_objmeta *m,
		       char *err, size_t errlen)
{
	struct catalog_entry *e;
	char *copy = NULL;
	size_t len = 0;
	int ret;

	memset(m, 0, sizeof(*m));
	pthread_mutex_lock(&catalog_lock);
	ret = catalog_entry(path, want, &e, err, errlen);
	if (!ret && (copy = malloc(e->len ?: 1)))
		memcpy(copy, e->buf, len = e->len);
	pthread_mutex_unlock(&catalog_lock);
	if (!ret && !copy)
		ret = kstats_fail(err, errlen, ENOMEM, "out of memory");
	if (!ret)
		ret = read_object(copy, len, path, want, m, err, errlen);
	free(copy);
	return ret;
}

int kstats_objmeta_read_mem(void *buf, size_t len, const char *what,
			    struct kstats_objmeta *m, char *err, size_t errlen)
{
	return read_object(buf, len, what, KSTATS_WANT_META, m, err, errlen);
}

void kstats_objmeta_free(struct kstats_objmeta *m)
{
	btf__free(m->btf);
	free(m->maps);
	free(m->progs);
	free(m->hists);
	free(m->streams);
	memset(m, 0, sizeof(*m));
}

/* The type a member "name" of a BTF map definition points to, or 0. */
static __u32 def_member(const struct btf *btf, const struct btf_type *def, const char *name)
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

/* N of a member declared int (*name)[N] by __uint(). */
static __u32 def_uint(const struct btf *btf, const struct btf_type *def, const char *name)
{
	const struct btf_type *arr = btf__type_by_id(btf, def_member(btf, def, name));

	return arr && btf_is_array(arr) ? btf_array(arr)->nelems : 0;
}

int kstats_btf_map_def(const struct btf *btf, const char *map, struct kstats_map_def *d)
{
	int sec_id = btf__find_by_name_kind(btf, ".maps", BTF_KIND_DATASEC), i;
	const struct btf_type *sec = sec_id < 0 ? NULL : btf__type_by_id(btf, sec_id);
	const struct btf_var_secinfo *vs = sec ? btf_var_secinfos(sec) : NULL;

	memset(d, 0, sizeof(*d));
	for (i = 0; sec && i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type), *def;
		const char *name = var ? btf__name_by_offset(btf, var->name_off) : NULL;

		if (!var || !btf_is_var(var) || !name || strcmp(name, map))
			continue;
		def = btf__type_by_id(btf, btf__resolve_type(btf, var->type));
		if (!def || !btf_is_struct(def))
			break;
		d->type = def_uint(btf, def, "type");
		d->max_entries = def_uint(btf, def, "max_entries");
		d->key_type = def_member(btf, def, "key");
		d->value_type = def_member(btf, def, "value");
		return 0;
	}
	return -ESRCH;
}

int kstats_btf_find_enum(const struct btf *btf, const char *name)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_ENUM);

	return id > 0 ? id : btf__find_by_name_kind(btf, name, BTF_KIND_ENUM64);
}

struct kstats_enumerator kstats_btf_enumerator(const struct btf *btf,
					       const struct btf_type *t, int i)
{
	if (btf_is_enum(t))
		return (struct kstats_enumerator){
			btf__name_by_offset(btf, btf_enum(t)[i].name_off),
			btf_kflag(t) ? btf_enum(t)[i].val : (int64_t)(uint32_t)btf_enum(t)[i].val };
	return (struct kstats_enumerator){ btf__name_by_offset(btf, btf_enum64(t)[i].name_off),
					   (int64_t)btf_enum64_value(&btf_enum64(t)[i]) };
}

/* The entry of arr (n entries of size bytes) named name: each begins with it. */
_Static_assert(!offsetof(struct kstats_map_meta, name) && !offsetof(struct kstats_prog_meta, name)
	       && !offsetof(struct kstats_stream_meta, name), "find_named: name comes first");
static const void *find_named(const void *arr, size_t n, size_t size, const char *name)
{
	const char *e = arr;
	size_t i;

	for (i = 0; i < n; i++, e += size)
		if (!strcmp(e, name))
			return e;
	return NULL;
}

const struct kstats_map_meta *
kstats_objmeta_map(const struct kstats_objmeta *m, const char *name)
{
	return find_named(m->maps, m->nmaps, sizeof(*m->maps), name);
}

const struct kstats_prog_meta *
kstats_objmeta_prog(const struct kstats_objmeta *m, const char *name)
{
	return find_named(m->progs, m->nprogs, sizeof(*m->progs), name);
}

static const char *next_alnum(const char *s)
{
	while (*s && !isalnum((unsigned char)*s))
		s++;
	return s;
}

/* The Prometheus name lowercases and puts '_' between words (prom_name). */
bool kstats_metric_same(const char *a, const char *b)
{
	for (a = next_alnum(a), b = next_alnum(b); *a && *b;
	     a = next_alnum(a + 1), b = next_alnum(b + 1))
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return false;
	return !*a && !*b;
}

const struct kstats_stream_meta *
kstats_objmeta_stream(const struct kstats_objmeta *m, const char *name)
{
	return find_named(m->streams, m->nstreams, sizeof(*m->streams), name);
}

static int bpf_filter(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n >= 4 && !strcmp(d->d_name + n - 4, ".bpf");
}

int kstats_scan_objects(const char *dir, struct dirent ***ents)
{
	int n = scandir(dir, ents, bpf_filter, alphasort);

	return n < 0 ? -errno : n;
}

int kstats_obj_name(const char *path, char *buf, size_t len)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n > 4 && !strcmp(base + n - 4, ".bpf"))
		n -= 4;
	if (!n || n >= len)
		return -ENAMETOOLONG;
	memcpy(buf, base, n);
	buf[n] = 0;
	return 0;
}
