// SPDX-License-Identifier: GPL-2.0
/* The pull state: per map, its id, next window start and per-key counts emitted; a header
 * line (version, CRC32, length) then JSON, written through kstats_file_replace().  Then the
 * per-bucket deltas against it (doc/design.md "Atoms and deltas"). */
#include <errno.h>
#include <string.h>
#include <json-c/json.h>
#include <zlib.h>

#include "kstats_fileio.h"
#include "pull.h"

#define STATE_MAGIC "kernelstats-state"
#define STATE_VERSION 1
#define STATE_MAX_BYTES (64u << 20)
/* Under the units' UMask=0027: never writable by the group nor readable by others. */
#define STATE_MODE 0640

void state_free(struct pull_state *st)
{
	size_t i;

	for (i = 0; i < st->nmaps; i++)
		free(st->maps[i].keys);
	free(st->maps);
	memset(st, 0, sizeof(*st));
}

static int keyed_cmp(const void *a, const void *b, void *nkey)
{
	const int64_t *x = a, *y = b;
	size_t i;

	for (i = 0; i < *(const size_t *)nkey; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

void keyed_sort(void *rows, size_t n, size_t size, size_t nkey)
{
	qsort_r(rows, n, size, keyed_cmp, &nkey);
}

void *keyed_find(const void *rows, size_t n, size_t size, size_t nkey, const int64_t *key)
{
	size_t lo = 0, hi = n, mid;
	const char *row;
	int c;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		row = (const char *)rows + mid * size;
		c = keyed_cmp(key, row, &nkey);
		if (!c)
			return (void *)row;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

int state_add_map(struct pull_state *st, struct pull_map_state *ms)
{
	struct pull_map_state *maps = realloc(st->maps, (st->nmaps + 1) * sizeof(*maps));

	if (!maps)
		return -ENOMEM;
	st->maps = maps;
	keyed_sort(ms->keys, ms->nkeys, sizeof(*ms->keys), PULL_MAX_KEY_COLS);
	st->maps[st->nmaps++] = *ms;
	memset(ms, 0, sizeof(*ms));
	return 0;
}

const struct pull_map_state *state_find_map(const struct pull_state *st,
					    const char *obj, const char *map)
{
	size_t i;

	for (i = 0; i < st->nmaps; i++)
		if (!strcmp(st->maps[i].obj, obj) && !strcmp(st->maps[i].map, map))
			return &st->maps[i];
	return NULL;
}

int state_encode(const struct pull_state *st, char **buf, size_t *len)
{
	json_object *root = json_object_new_object(), *maps = json_object_new_array(), *o, *k, *a,
		    *v;
	const struct pull_map_state *ms;
	const struct pull_key *pk;
	const char *body;
	size_t i, m, j, blen;
	int hlen, ret = 0;

	json_object_object_add(root, "pull_id", json_object_new_uint64(st->pull_id));
	json_object_object_add(root, "boot_id", json_object_new_string(st->boot_id));
	json_object_object_add(root, "maps", maps);
	for (m = 0; m < st->nmaps; m++) {
		ms = &st->maps[m];
		json_object_array_add(maps, o = json_object_new_object());
		json_object_object_add(o, "obj", json_object_new_string(ms->obj));
		json_object_object_add(o, "map", json_object_new_string(ms->map));
		json_object_object_add(o, "map_id", json_object_new_uint64(ms->map_id));
		json_object_object_add(o, "window_start_boottime_ns",
				       json_object_new_uint64(ms->start_boot_ns));
		json_object_object_add(o, "window_start_realtime_ns",
				       json_object_new_uint64(ms->start_real_ns));
		json_object_object_add(o, "key_columns", json_object_new_uint64(ms->nkey_cols));
		json_object_object_add(o, "keys", a = json_object_new_array());
		for (i = 0; i < ms->nkeys; i++) {
			pk = &ms->keys[i];
			json_object_array_add(a, k = json_object_new_object());
			json_object_object_add(k, "key", v = json_object_new_array());
			for (j = 0; j < ms->nkey_cols; j++)
				json_object_array_add(v, json_object_new_int64(pk->key[j]));
			json_object_object_add(k, "base", v = json_object_new_array());
			for (j = 0; j < PULL_NR_BUCKETS; j++)
				json_object_array_add(v, json_object_new_uint64(pk->base[j]));
		}
	}
	body = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
	blen = strlen(body);
	*buf = malloc(blen + 128);
	if (!*buf) {
		ret = -ENOMEM;
		goto out;
	}
	hlen = snprintf(*buf, 128, "%s %d %08lx %zu\n", STATE_MAGIC, STATE_VERSION,
			crc32(0, (const Bytef *)body, blen), blen);
	memcpy(*buf + hlen, body, blen);
	*len = hlen + blen;
out:
	json_object_put(root);
	return ret;
}

/* Anything odd is corruption. */
static json_object *get(json_object *o, const char *name, json_type type)
{
	json_object *f;

	return json_object_object_get_ex(o, name, &f) && json_object_is_type(f, type) ? f : NULL;
}

static int get_u64(json_object *o, const char *name, uint64_t *v)
{
	json_object *f = get(o, name, json_type_int);

	if (f)
		*v = json_object_get_uint64(f);
	return f ? 0 : -EBADMSG;
}

static int get_str(json_object *o, const char *name, char *buf, size_t len)
{
	json_object *f = get(o, name, json_type_string);

	if (!f || (size_t)json_object_get_string_len(f) >= len)
		return -EBADMSG;
	memcpy(buf, json_object_get_string(f), json_object_get_string_len(f) + 1);
	return 0;
}

static int decode_map(json_object *o, struct pull_map_state *ms)
{
	json_object *keys, *key, *base, *v;
	uint64_t id, ncols;
	struct pull_key *k;
	size_t i, j;

	memset(ms, 0, sizeof(*ms));
	if (get_str(o, "obj", ms->obj, sizeof(ms->obj)) ||
	    get_str(o, "map", ms->map, sizeof(ms->map)) ||
	    get_u64(o, "map_id", &id) || id > UINT32_MAX ||
	    get_u64(o, "window_start_boottime_ns", &ms->start_boot_ns) ||
	    get_u64(o, "window_start_realtime_ns", &ms->start_real_ns) ||
	    get_u64(o, "key_columns", &ncols) || !ncols || ncols > PULL_MAX_KEY_COLS ||
	    !(keys = get(o, "keys", json_type_array)))
		return -EBADMSG;
	ms->map_id = (uint32_t)id;
	ms->nkey_cols = ncols;
	ms->nkeys = json_object_array_length(keys);
	ms->keys = calloc(ms->nkeys ? ms->nkeys : 1, sizeof(*ms->keys));
	if (!ms->keys)
		return -ENOMEM;
	for (i = 0, k = ms->keys; i < ms->nkeys; i++, k++) {
		key = get(json_object_array_get_idx(keys, i), "key", json_type_array);
		base = get(json_object_array_get_idx(keys, i), "base", json_type_array);
		if (!key || !base || json_object_array_length(key) != ncols ||
		    json_object_array_length(base) != PULL_NR_BUCKETS)
			return -EBADMSG;
		for (j = 0; j < ncols + PULL_NR_BUCKETS; j++) {
			v = j < ncols ? json_object_array_get_idx(key, j) :
			    json_object_array_get_idx(base, j - ncols);
			if (!json_object_is_type(v, json_type_int))
				return -EBADMSG;
			if (j < ncols)
				k->key[j] = json_object_get_int64(v);
			else
				k->base[j - ncols] = json_object_get_uint64(v);
		}
	}
	return 0;
}

int state_decode(const char *buf, size_t len, struct pull_state *st,
		 char *err, size_t errlen)
{
	struct json_tokener *tok = NULL;
	struct pull_map_state ms;
	json_object *root = NULL, *maps = NULL;
	char canon[128], head[128];
	unsigned long crc;
	size_t blen, i, n = len < sizeof(head) - 1 ? len : sizeof(head) - 1;
	int version, hlen = 0, ret = -EBADMSG;

	memset(st, 0, sizeof(*st));
	/* buf need not end in a NUL: sscanf gets a terminated copy of the header. */
	memcpy(head, buf, n);
	head[n] = 0;
	if (len < sizeof(STATE_MAGIC) || memcmp(buf, STATE_MAGIC " ", sizeof(STATE_MAGIC)) ||
	    !memchr(head, '\n', n) ||
	    sscanf(head, STATE_MAGIC " %d %lx %zu\n%n", &version, &crc, &blen, &hlen) != 3 ||
	    !hlen)
		return kstats_fail(err, errlen, EBADMSG, "no valid header");
	if (snprintf(canon, sizeof(canon), "%s %d %08lx %zu\n", STATE_MAGIC, version,
		     crc, blen) != hlen || memcmp(canon, buf, hlen))
		return kstats_fail(err, errlen, EBADMSG, "header is not in canonical form");
	if (version != STATE_VERSION)
		return kstats_fail(err, errlen, EBADMSG, "version %d, this kstats reads %d",
				   version, STATE_VERSION);
	if (blen > len || (size_t)hlen + blen != len)
		return kstats_fail(err, errlen, EBADMSG, "truncated or padded: %zu bytes, "
				   "header says %zu", len - hlen, blen);
	if (crc32(0, (const Bytef *)buf + hlen, blen) != crc)
		return kstats_fail(err, errlen, EBADMSG, "checksum mismatch");
	tok = json_tokener_new();
	root = tok ? json_tokener_parse_ex(tok, buf + hlen, (int)blen) : NULL;
	if (!root || json_tokener_get_error(tok) != json_tokener_success) {
		snprintf(err, errlen, "checksum matches but the JSON does not parse");
		goto out;
	}
	if (!get_u64(root, "pull_id", &st->pull_id) &&
	    !get_str(root, "boot_id", st->boot_id, sizeof(st->boot_id)) &&
	    (maps = get(root, "maps", json_type_array)))
		ret = 0;
	for (i = 0; !ret && i < json_object_array_length(maps); i++) {
		ret = decode_map(json_object_array_get_idx(maps, i), &ms);
		if (!ret)
			ret = state_add_map(st, &ms);
		free(ms.keys);
	}
	if (ret)
		snprintf(err, errlen, ret == -ENOMEM ? "out of memory" :
			 "JSON does not have the state's fields");
out:
	if (ret)
		state_free(st);
	json_object_put(root);
	json_tokener_free(tok);
	return ret;
}

int state_load(const char *dir, const char *name, struct pull_state *st)
{
	char path[4096], err[256] = "", to[256], *buf = NULL;
	size_t len = 0;
	uint64_t secs;
	unsigned int n;
	int ret;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ret = kstats_read_file(path, STATE_MAX_BYTES, &buf, &len);
	/* A symlink or a FIFO where the state should be is moved aside as corrupt. */
	if (ret == -EINVAL || ret == -ELOOP) {
		ret = kstats_fail(err, sizeof(err), EBADMSG, "a symlink or not a regular file");
	} else if (ret == -EFBIG) {
		ret = kstats_fail(err, sizeof(err), EBADMSG, "larger than %u bytes",
				  STATE_MAX_BYTES);
	} else if (ret) {
		snprintf(err, sizeof(err), "%s", strerror(-ret));
	} else {
		ret = state_decode(buf, len, st, err, sizeof(err));
		free(buf);
	}
	if (ret && ret != -ENOENT && ret != -EBADMSG)
		fprintf(stderr, "kstats pull: cannot read %s: %s\n", path, err);
	if (ret != -EBADMSG)
		return ret;
	secs = (uint64_t)time(NULL);
	/* Never over an earlier saved copy: each one is evidence. */
	for (n = 0, ret = -EEXIST; n < 1000 && ret == -EEXIST; n++) {
		len = (size_t)snprintf(to, sizeof(to), "%s.corrupt-%" PRIu64, name, secs);
		if (n)
			snprintf(to + len, sizeof(to) - len, "-%u", n);
		ret = kstats_rename_in(dir, name, to, true);
	}
	if (ret) {
		fprintf(stderr, "kstats pull: %s/%s is corrupt (%s) and cannot be moved "
			"aside: %s; remove it\n", dir, name, err, strerror(-ret));
		return ret;
	}
	fprintf(stderr, "kstats pull: %s/%s is corrupt (%s); moved to %s/%s\n", dir, name,
		err, dir, to);
	return -EBADMSG;
}

int state_save(const char *dir, const char *name, const struct pull_state *st)
{
	char path[4096], *buf = NULL;
	size_t len;
	int ret;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
		return -ENAMETOOLONG;
	ret = state_encode(st, &buf, &len);
	if (!ret)
		ret = kstats_file_replace(path, buf, len, STATE_MODE);
	free(buf);
	return ret;
}

void delta_begin(struct delta_key *dk, const uint64_t *cur, const uint64_t *base,
		 unsigned int width)
{
	uint64_t mask = width >= 8 ? UINT64_MAX : (1ull << (width * 8)) - 1;
	int i;

	memset(dk, 0, sizeof(*dk));
	for (i = 0; i < PULL_NR_BUCKETS; i++) {
		uint64_t b = base ? base[i] : 0;

		if (width < 8)
			dk->pending[i] = (cur[i] - b) & mask;
		else if (cur[i] >= b)
			dk->pending[i] = cur[i] - b;
		else
			dk->anomalies++;
	}
}

bool delta_next_atom(struct delta_key *dk, int32_t *buckets)
{
	bool any = false;
	int i;

	if (dk->chunks >= PULL_MAX_SPLIT)
		return false;
	for (i = 0; i < PULL_NR_BUCKETS; i++) {
		uint64_t take = dk->pending[i] > INT32_MAX ? INT32_MAX : dk->pending[i];

		buckets[i] = (int32_t)take;
		dk->pending[i] -= take;
		any |= take != 0;
	}
	if (!any && (dk->chunks || !dk->anomalies))
		return false;
	dk->chunks++;
	return true;
}

void delta_new_base(const struct delta_key *dk, const uint64_t *cur,
		    unsigned int width, uint64_t *base)
{
	uint64_t mask = width >= 8 ? UINT64_MAX : (1ull << (width * 8)) - 1;
	int i;

	/* An anomalous bucket has nothing pending: it re-bases to cur. */
	for (i = 0; i < PULL_NR_BUCKETS; i++)
		base[i] = (cur[i] - dk->pending[i]) & mask;
}

int64_t window_clock_step(uint64_t start_boot, uint64_t end_boot, uint64_t start_real,
			  uint64_t end_real)
{
	/* Boot time that went backwards (a forged state, the test clock): length 0. */
	uint64_t boot_d = end_boot > start_boot ? end_boot - start_boot : 0;
	int64_t step = (int64_t)(end_real - start_real - boot_d);
	uint64_t slack = boot_d / 1000 > 1000000000ull ? boot_d / 1000 : 1000000000ull;

	return step > (int64_t)slack || step < -(int64_t)slack ? step : 0;
}

void window_settle(struct window *w)
{
	uint64_t boot_d;

	if (w->end_boot < w->start_boot)
		w->start_boot = w->end_boot;
	boot_d = w->end_boot - w->start_boot;
	w->clock_step = window_clock_step(w->start_boot, w->end_boot, w->start_real,
					  w->end_real);
	if (w->clock_step)
		w->start_real = w->end_real > boot_d ? w->end_real - boot_d : 0;
}
