// SPDX-License-Identifier: GPL-2.0
/*
 * kstats pull: the atoms-<pull id>.pb files, and the commit: state.pending,
 * then the atoms, then state (pull_run.h says why this order).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kstats.h"
#include "kstats_fileio.h"
#include "kstats_hooks.h"
#include "pull_run.h"

/* Like the state: never writable by the group nor readable by others (UMask=0027). */
#define ATOMS_MODE 0640

static int atoms_file_id(const char *name, uint64_t *id)
{
	int n = 0;

	return sscanf(name, "atoms-%" SCNu64 ".pb%n", id, &n) == 1 &&
	       !name[n] && name[6] >= '0' && name[6] <= '9' ? 0 : -EINVAL;
}

int kstats_atoms_filter(const struct dirent *d)
{
	uint64_t id;

	return !atoms_file_id(d->d_name, &id);
}

static int atoms_name(char *buf, size_t len, uint64_t pull_id)
{
	return snprintf(buf, len, "atoms-%010" PRIu64 ".pb", pull_id);
}

uint64_t pull_max_atoms_id(const char *out_dir)
{
	struct dirent **ents;
	uint64_t id, max = 0;
	int n, i;

	n = scandir(out_dir, &ents, kstats_atoms_filter, alphasort);
	for (i = 0; i < n; i++) {
		if (!atoms_file_id(ents[i]->d_name, &id) && id > max)
			max = id;
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	return max;
}

bool pull_atoms_exist(const char *out_dir, uint64_t pull_id)
{
	char name[64], path[4096];

	atoms_name(name, sizeof(name), pull_id);
	snprintf(path, sizeof(path), "%s/%s", out_dir, name);
	return !access(path, F_OK);
}

static int write_atoms(struct pull_run *r, char *name, size_t len)
{
	Kernelstats__AtomList list = KERNELSTATS__ATOM_LIST__INIT;
	Kernelstats__Atom **ptrs;
	char path[4096];
	uint8_t *buf = NULL;
	size_t i, size;
	int ret = -ENOMEM;

	ptrs = calloc(r->natoms, sizeof(*ptrs));
	if (!ptrs)
		return ret;
	for (i = 0; i < r->natoms; i++)
		ptrs[i] = &r->atoms[i]->atom;
	list.n_atom = r->natoms;
	list.atom = ptrs;
	size = kernelstats__atom_list__get_packed_size(&list);
	buf = malloc(size);
	if (buf) {
		kernelstats__atom_list__pack(&list, buf);
		atoms_name(name, len, r->pull_id);
		ret = snprintf(path, sizeof(path), "%s/%s", r->o->out_dir, name) >=
		      (int)sizeof(path) ? -ENAMETOOLONG :
		      kstats_file_create(path, buf, size, ATOMS_MODE);
	}
	free(buf);
	free(ptrs);
	return ret;
}

int pull_commit(struct pull_run *r, char *atoms_file, size_t len)
{
	const char *dir = r->o->state_dir;
	int ret;

	r->new.pull_id = r->pull_id;
	snprintf(r->new.boot_id, sizeof(r->new.boot_id), "%s", r->boot_id);
	if (!r->natoms)
		return state_save(dir, PULL_STATE_FILE, &r->new);
	ret = state_save(dir, PULL_PENDING_FILE, &r->new);
	if (ret)
		return ret;
	kstats_hook_point("pending");
	ret = write_atoms(r, atoms_file, len);
	/* Someone else's atoms-N: else the next pull would take it as ours. */
	if (ret == -EEXIST)
		kstats_unlink_in(dir, PULL_PENDING_FILE);
	if (ret)
		return ret;
	kstats_hook_point("atoms");
	return kstats_rename_in(dir, PULL_PENDING_FILE, PULL_STATE_FILE, false);
}
