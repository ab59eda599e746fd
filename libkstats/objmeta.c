// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kstats_objmeta.h"

static int copy_section(Elf_Data *data, size_t rec, void **out, size_t *n)
{
	if (data->d_size % rec)
		return -EINVAL;
	*out = malloc(data->d_size ? data->d_size : 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, data->d_buf, data->d_size);
	*n = data->d_size / rec;
	return 0;
}

static int copy_obj(Elf_Data *data, struct kstats_obj_meta *obj)
{
	if (data->d_size != sizeof(*obj))
		return -EINVAL;
	memcpy(obj, data->d_buf, sizeof(*obj));
	return 0;
}

/* Forces NUL termination so a corrupt object cannot overrun a name. */
static void terminate_names(struct kstats_objmeta *m)
{
	size_t i;

	for (i = 0; i < m->nmaps; i++) {
		m->maps[i].name[KSTATS_NAME_LEN - 1] = 0;
		m->maps[i].uid[KSTATS_OWNER_LEN - 1] = 0;
		m->maps[i].gid[KSTATS_OWNER_LEN - 1] = 0;
	}
	for (i = 0; i < m->nprogs; i++) {
		m->progs[i].name[KSTATS_NAME_LEN - 1] = 0;
		m->progs[i].attach[KSTATS_NAME_LEN - 1] = 0;
		m->progs[i].uid[KSTATS_OWNER_LEN - 1] = 0;
		m->progs[i].gid[KSTATS_OWNER_LEN - 1] = 0;
	}
	for (i = 0; i < m->nhists; i++) {
		m->hists[i].map[KSTATS_NAME_LEN - 1] = 0;
		m->hists[i].metric[KSTATS_NAME_LEN - 1] = 0;
		m->hists[i].names_map[KSTATS_NAME_LEN - 1] = 0;
		m->hists[i].key_enum[KSTATS_NAME_LEN - 1] = 0;
	}
	for (i = 0; i < m->nstreams; i++) {
		m->streams[i].name[KSTATS_NAME_LEN - 1] = 0;
		m->streams[i].ringbuf[KSTATS_NAME_LEN - 1] = 0;
		m->streams[i].drops[KSTATS_NAME_LEN - 1] = 0;
		m->streams[i].record[KSTATS_NAME_LEN - 1] = 0;
	}
}

#define FOREIGN_VERSION(arr, n, bad) do {				\
		size_t __i;						\
									\
		for (__i = 0; __i < (n); __i++)				\
			if ((arr)[__i].version != KSTATS_META_VERSION) {	\
				*(bad) = (arr)[__i].version;		\
				return true;				\
			}						\
	} while (0)

/* Whether a record has another layout version than this reader's. */
static bool foreign_version(const struct kstats_objmeta *m, __u32 *bad)
{
	FOREIGN_VERSION(m->maps, m->nmaps, bad);
	FOREIGN_VERSION(m->progs, m->nprogs, bad);
	FOREIGN_VERSION(m->hists, m->nhists, bad);
	FOREIGN_VERSION(m->streams, m->nstreams, bad);
	FOREIGN_VERSION(&m->obj, 1, bad);
	return false;
}

static int read_sections(Elf *elf, struct kstats_objmeta *m)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	int ret = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	while (!ret && (scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".kstats.", 8))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			return -EINVAL;
		if (!strcmp(name, KSTATS_SEC_MAPS))
			ret = copy_section(data, sizeof(*m->maps), (void **)&m->maps, &m->nmaps);
		else if (!strcmp(name, KSTATS_SEC_PROGS))
			ret = copy_section(data, sizeof(*m->progs), (void **)&m->progs, &m->nprogs);
		else if (!strcmp(name, KSTATS_SEC_HISTS))
			ret = copy_section(data, sizeof(*m->hists), (void **)&m->hists, &m->nhists);
		else if (!strcmp(name, KSTATS_SEC_OBJ))
			ret = copy_obj(data, &m->obj);
		else if (!strcmp(name, KSTATS_SEC_STREAMS))
			ret = copy_section(data, sizeof(*m->streams), (void **)&m->streams,
					   &m->nstreams);
	}
	return ret;
}

/* Reads the metadata of elf (NULL: not ELF); what names it in errors. */
static int objmeta_from_elf(Elf *elf, const char *what, struct kstats_objmeta *m,
			    char *err, size_t errlen)
{
	__u32 version;
	int ret;

	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(err, errlen, "%s: not an ELF object", what);
		return -ENOEXEC;
	}
	ret = read_sections(elf, m);
	if (ret) {
		snprintf(err, errlen, "%s: corrupt .kstats metadata: %s",
			 what, strerror(-ret));
		kstats_objmeta_free(m);
		return ret;
	}
	if (foreign_version(m, &version)) {
		snprintf(err, errlen, "%s: .kstats metadata version %u, this tool reads "
			 "version %d; rebuild the object with this tree's headers",
			 what, version, KSTATS_META_VERSION);
		kstats_objmeta_free(m);
		return -EPROTO;
	}
	terminate_names(m);
	return 0;
}

static int objmeta_init(struct kstats_objmeta *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	m->obj.max_kver = KSTATS_KVER_INF;
	m->obj.version = KSTATS_META_VERSION;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	return 0;
}

int kstats_objmeta_read(const char *path, struct kstats_objmeta *m,
			char *err, size_t errlen)
{
	struct stat st;
	Elf *elf;
	int fd, ret = objmeta_init(m, err, errlen);

	if (ret)
		return ret;
	/* Non-blocking: a FIFO named *.bpf must not hang the reader. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = fd < 0 ? -errno : -ENOEXEC;
		snprintf(err, errlen, "%s: %s", path, fd < 0 ? (errno == ENOENT ?
			 "no such file (a dangling link?)" : strerror(errno)) :
			 "not a regular file");
		if (fd >= 0)
			close(fd);
		return ret;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ret = objmeta_from_elf(elf, path, m, err, errlen);
	elf_end(elf);
	close(fd);
	return ret;
}

int kstats_objmeta_read_mem(void *buf, size_t len, const char *what,
			    struct kstats_objmeta *m, char *err, size_t errlen)
{
	Elf *elf;
	int ret = objmeta_init(m, err, errlen);

	if (ret)
		return ret;
	elf = elf_memory(buf, len);
	ret = objmeta_from_elf(elf, what, m, err, errlen);
	elf_end(elf);
	return ret;
}

void kstats_objmeta_free(struct kstats_objmeta *m)
{
	free(m->maps);
	free(m->progs);
	free(m->hists);
	free(m->streams);
	memset(m, 0, sizeof(*m));
}

/* The entry of arr (n entries of size bytes) whose string at off is name. */
static const void *find_named(const void *arr, size_t n, size_t size, size_t off,
			      const char *name)
{
	const char *e = arr;
	size_t i;

	for (i = 0; i < n; i++, e += size)
		if (!strcmp(e + off, name))
			return e;
	return NULL;
}

const struct kstats_map_meta *
kstats_objmeta_map(const struct kstats_objmeta *m, const char *name)
{
	return find_named(m->maps, m->nmaps, sizeof(*m->maps),
			  offsetof(struct kstats_map_meta, name), name);
}

const struct kstats_prog_meta *
kstats_objmeta_prog(const struct kstats_objmeta *m, const char *name)
{
	return find_named(m->progs, m->nprogs, sizeof(*m->progs),
			  offsetof(struct kstats_prog_meta, name), name);
}

const struct kstats_hist_meta *
kstats_objmeta_hist(const struct kstats_objmeta *m, const char *map)
{
	return find_named(m->hists, m->nhists, sizeof(*m->hists),
			  offsetof(struct kstats_hist_meta, map), map);
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
	return find_named(m->streams, m->nstreams, sizeof(*m->streams),
			  offsetof(struct kstats_stream_meta, name), name);
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
