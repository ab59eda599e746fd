// SPDX-License-Identifier: GPL-2.0
/* Does this kernel have a program's attach point?  Asked from its section name. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "kstats_fileio.h"
#include "loader.h"

#define KPROBE_PMU "/sys/bus/event_source/devices/kprobe"
#define EVENTS_MAX_BYTES (4u << 20)	/* about 64 KiB on 6.x kernels */

/* The run's tracefs and BTF answers, shared by the loading threads. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;

const char *variant_name(__u32 variant)
{
	static const char *const names[] = { [KSTATS_VARIANT_TP_BTF] = "tp_btf",
		[KSTATS_VARIANT_RAW_TP] = "raw_tp", [KSTATS_VARIANT_KPROBE] = "kprobe",
		[KSTATS_VARIANT_OTHER] = "other" };

	return names[variant < KSTATS_VARIANT_OTHER ? variant : KSTATS_VARIANT_OTHER];
}

static const char *tracefs(void)
{
	if (!access("/sys/kernel/tracing/events", F_OK))
		return "/sys/kernel/tracing";
	if (!access("/sys/kernel/debug/tracing/events", F_OK))
		return "/sys/kernel/debug/tracing";
	return NULL;
}

/* event is "name" (any system) or "system/name": 1, 0, or -errno. */
static int tracefs_has_event(const char *event)
{
	/* Read once per run: each lookup in events/ cost a stat in ~100 systems. */
	static char *text;
	static int err;
	const char *slash = strchr(event, '/'), *root;
	char line[512], *raw = NULL;
	size_t len = 0;
	int n;

	if (!text && !err) {
		root = tracefs();
		err = -ENOENT;
		if (root) {
			snprintf(line, sizeof(line), "%s/available_events", root);
			err = kstats_read_file(line, EVENTS_MAX_BYTES, &raw, &len);
		}
		if (!err && !(text = malloc(len + 3)))
			err = -ENOMEM;
		if (text)
			snprintf(text, len + 3, "\n%s\n", raw);
		free(raw);
	}
	if (!text)
		return err;
	if (slash)
		n = snprintf(line, sizeof(line), "\n%.*s:%s\n", (int)(slash - event), event,
			     slash + 1);
	else
		n = snprintf(line, sizeof(line), ":%s\n", event);
	/* No event name is that long. */
	return n < (int)sizeof(line) && strstr(text, line);
}

/* On first use; libbpf 1.1 parses it again per load (its options take a path). */
static const struct btf *vmlinux(struct loader_ctx *ctx)
{
	if (!ctx->vmlinux_btf && !ctx->vmlinux_tried) {
		ctx->vmlinux_tried = true;
		ctx->vmlinux_btf = btf__load_vmlinux_btf();
		if (!ctx->vmlinux_btf)
			log_msg(LOG_WARNING, "warning: no vmlinux BTF; tp_btf programs fall "
				"back to raw_tp");
	}
	return ctx->vmlinux_btf;
}

/* libbpf 1.1 scans every type per lookup, a missing tracepoint is asked twice: kept. */
#define BTF_ANSWERS 32

static struct btf_answer {
	char name[256];
	int kind;
	bool found;
} btf_answers[BTF_ANSWERS];
static size_t nbtf_answers;

static bool btf_has(struct loader_ctx *ctx, const char *prefix,
		    const char *name, int kind)
{
	struct btf_answer *a;
	char full[sizeof(a->name)];
	bool found;
	size_t i;

	if (!vmlinux(ctx))
		return false;
	snprintf(full, sizeof(full), "%s%s", prefix, name);
	for (i = 0; i < nbtf_answers; i++)
		if (btf_answers[i].kind == kind && !strcmp(btf_answers[i].name, full))
			return btf_answers[i].found;
	found = btf__find_by_name_kind(vmlinux(ctx), full, kind) > 0;
	if (nbtf_answers < BTF_ANSWERS) {
		a = &btf_answers[nbtf_answers++];
		*a = (struct btf_answer){ .kind = kind, .found = found };
		snprintf(a->name, sizeof(a->name), "%s", full);
	}
	return found;
}

/* 1 when func is word field of a line (0: filter functions, 2: kallsyms), 0, or -errno. */
static int symbol_listed(const char *path, int field, const char *func)
{
	char line[512], *tok, *save;
	FILE *f = fopen(path, "re");
	int i, found = 0;

	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		tok = strtok_r(line, " \t\n", &save);
		for (i = 0; tok && i < field; i++)
			tok = strtok_r(NULL, " \t\n", &save);
		found = tok && !strcmp(tok, func);
	}
	fclose(f);
	return found;
}

static bool kprobe_exists(struct loader_ctx *ctx, const char *target,
			  char *why, size_t len)
{
	const char *root = tracefs();
	char func[KSTATS_NAME_LEN * 2], path[128];
	int found = -ENOENT;

	/* libbpf attaches through the kprobe PMU, else tracefs kprobe_events. */
	snprintf(path, sizeof(path), "%s/kprobe_events", root ? root : "/nonexistent");
	if (access(KPROBE_PMU, F_OK) && access(path, F_OK)) {
		snprintf(why, len, "kernel has no kprobes (no " KPROBE_PMU
			 " nor kprobe_events)");
		return false;
	}
	snprintf(func, sizeof(func), "%s", target);
	func[strcspn(func, "+")] = 0;	/* "func+0x10" */
	/* tracefs builds its list of 35k+ functions on each read: seconds at boot. */
	if (btf_has(ctx, "", func, BTF_KIND_FUNC))
		return true;
	if (root) {
		snprintf(path, sizeof(path), "%s/available_filter_functions", root);
		found = symbol_listed(path, 0, func);
	}
	if (found < 0) {
		snprintf(path, sizeof(path), "/proc/kallsyms");
		found = symbol_listed(path, 2, func);
	}
	if (found > 0)
		return true;
	if (found < 0)
		snprintf(why, len, "cannot list kernel functions to find %s", func);
	else
		snprintf(why, len, "%s is not in %s", func, path);
	return false;
}

static const char *after(const char *section, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(section, prefix, n) ? NULL : section + n;
}

/* A tp_btf in tracefs is left to the load's own BTF (one not there: bare DECLARE_TRACE?). */
bool attach_point_deferred(const char *section)
{
	const char *tp = after(section, "tp_btf/");
	bool ret;

	pthread_mutex_lock(&gate_lock);
	ret = tp && !access("/sys/kernel/btf/vmlinux", R_OK) && tracefs_has_event(tp) > 0;
	pthread_mutex_unlock(&gate_lock);
	return ret;
}

static bool exists(struct loader_ctx *ctx, const char *section, char *why, size_t len)
{
	const char *name;
	int found;

	if ((name = after(section, "tp_btf/"))) {
		if (!vmlinux(ctx)) {
			snprintf(why, len, "no vmlinux BTF (/sys/kernel/btf/vmlinux) for tp_btf");
			return false;
		}
		if (btf_has(ctx, "btf_trace_", name, BTF_KIND_TYPEDEF))
			return true;
		snprintf(why, len, "tracepoint %s is not in vmlinux BTF (no btf_trace_%s)",
			 name, name);
		return false;
	}
	if ((name = after(section, "raw_tp/")) || (name = after(section, "raw_tracepoint/")) ||
	    (name = after(section, "raw_tp.w/")) || (name = after(section, "raw_tracepoint.w/"))) {
		/* tracefs first: it lists module tracepoints too, and costs no BTF parse. */
		found = tracefs_has_event(name);
		if (found > 0 || btf_has(ctx, "btf_trace_", name, BTF_KIND_TYPEDEF))
			return true;
		if (found < 0 && !vmlinux(ctx))
			return true;	/* nothing to ask: let attach decide */
		snprintf(why, len, "tracepoint %s does not exist in this kernel", name);
		return false;
	}
	if ((name = after(section, "kprobe/")) || (name = after(section, "kretprobe/")))
		return kprobe_exists(ctx, name, why, len);
	if ((name = after(section, "fentry/")) || (name = after(section, "fexit/")) ||
	    (name = after(section, "fmod_ret/"))) {
		if (btf_has(ctx, "", name, BTF_KIND_FUNC))
			return true;
		snprintf(why, len, "function %s is not in vmlinux BTF", name);
		return false;
	}
	/* No tracefs: let attach decide. */
	if (((name = after(section, "tp/")) || (name = after(section, "tracepoint/"))) &&
	    !tracefs_has_event(name)) {
		snprintf(why, len, "tracepoint %s does not exist in this kernel", name);
		return false;
	}
	return true;	/* nothing (else) to check before loading */
}

bool attach_point_exists(struct loader_ctx *ctx, const char *section,
			 char *why, size_t len)
{
	bool ret;

	pthread_mutex_lock(&gate_lock);
	ret = exists(ctx, section, why, len);
	pthread_mutex_unlock(&gate_lock);
	return ret;
}
