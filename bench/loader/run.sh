#!/usr/bin/env bash
# kstats-loader wall time, process against process, side by side in one run
# (interleaved repeats), against:
#   min     bench/loader/min_loader: the same programs loaded, attached and
#           pinned under the same names by the least libbpf code (the fair
#           baseline; no gating, no attach-point checks, no status file)
#   bpftool `bpftool prog loadall` per object: verifies every program of the
#           object (both tp_btf and raw_tp variants), pins, attaches nothing
# on the objects the loader loads here, and on COPIES copies of one object;
# plus vmlinux BTF parses per run (opens of /sys/kernel/btf/vmlinux, by
# strace) and the cost of one parse; then, for the objects it loads here,
# instructions (callgrind, user space, the probe child included) and
# syscalls (strace -c -f) of one run of each loader: the same on a busy
# machine, unlike wall time; and the threads the loader loaded on (one per
# CPU, at most 4; min_loader and bpftool load one object at a time).
# Prints bench/lib/bstat.h RESULT lines.
# Usage: bench/loader/run.sh [BUILD]     (root; make bench-loader builds it)
set -eu
BUILD=${1:-build}
REPEATS=${REPEATS:-11}
COPIES=${COPIES:-6}
BPFTOOL=${BPFTOOL:-bpftool}
cd "$(dirname "$0")/../.."
. bench/lib/bstat.sh
[ "$(id -u)" -eq 0 ] || { echo "bench-loader: needs root" >&2; exit 2; }
# As at boot under systemd, which mounts it: the loader asks tracefs first.
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing || true
tmp=$(mktemp -d /tmp/kstats-bench-loader-XXXXXX)
pins=/sys/fs/bpf/kernelstats-bench-$$
# The status file goes to /run/kernelstats at boot, a tmpfs, where its
# fsyncs cost nothing: so here too, whatever filesystem /tmp is.
for run in /run /dev/shm "$tmp"; do
	[ "$(stat -f -c %T "$run")" = tmpfs ] && break
done
run=$(mktemp -d "$run/kstats-bench-run-XXXXXX")
trap 'rm -rf "$tmp" "$pins" "$run"' EXIT

loader() {	# objdir
	"$BUILD/kstats-loader" --obj-dir "$1" --pin-dir "$pins" --run-dir "$run/run" \
		>/dev/null 2>&1
}
# min_loader's arguments: each object with the programs the loader pinned.
min_args() {	# objdir
	local o n secs
	rm -rf "$pins"; loader "$1"
	for o in "$1"/*.bpf; do
		n=$(basename "$o" .bpf)
		secs=$(ls "$pins" | sed -n "s/^prog_${n}_//p" | paste -sd,)
		[ -n "$secs" ] && echo "$o:$secs"
	done
}
min_loader() {	# objdir
	mkdir -p "$pins"
	# shellcheck disable=SC2046
	"$BUILD/bench/loader/min_loader" "$pins" $(cat "$tmp/min_args.$(basename "$1")") \
		>/dev/null 2>&1
}
bpftool_all() {	# objdir
	local o
	for o in "$1"/*.bpf; do
		mkdir -p "$pins/$(basename "$o" .bpf)"
		"$BPFTOOL" prog loadall "$o" "$pins/$(basename "$o" .bpf)" \
			pinmaps "$pins/$(basename "$o" .bpf)" >/dev/null 2>&1
	done
}
clean() { rm -rf "$pins" "$run/run"; }
elapsed() {	# wall time (ms) of "$@"
	local t0
	t0=$(bstat_now_us); "$@"; awk -v d=$(( $(bstat_now_us) - t0 )) 'BEGIN { print d / 1000 }'
}
parses() {	# opens of vmlinux BTF by the function "$1" on objdir "$2"
	clean
	export BUILD BPFTOOL pins tmp run
	export -f "$1" bstat_now_us
	strace -f -qq -e trace=openat -o "$tmp/strace" bash -c "$1 $2" >/dev/null 2>&1 || true
	grep -c 'sys/kernel/btf/vmlinux' "$tmp/strace" || true
}

threads() {	# threads the loader loaded objdir "$1" on (strace: CLONE_THREAD; main only reports)
	clean
	strace -f -qq -e trace=clone,clone3 -o "$tmp/strace" \
		"$BUILD/kstats-loader" --obj-dir "$1" --pin-dir "$pins" --run-dir "$run/run" \
		>/dev/null 2>&1 || true
	grep -c CLONE_THREAD "$tmp/strace" || true
}

scenario() {	# key, objdir
	local i w
	min_args "$2" >"$tmp/min_args.$(basename "$2")"
	for w in loader rerun min bpftool; do : >"$tmp/$w"; done
	for i in $(seq "$REPEATS"); do
		clean; elapsed loader "$2" >>"$tmp/loader"; elapsed loader "$2" >>"$tmp/rerun"
		clean; elapsed min_loader "$2" >>"$tmp/min"
		clean; elapsed bpftool_all "$2" >>"$tmp/bpftool"
	done
	bstat_ratio "loader.$1.loader_vs_min" "$tmp/loader" "$tmp/min"
	bstat_ratio "loader.$1.loader_vs_bpftool" "$tmp/loader" "$tmp/bpftool"
	for w in loader rerun min bpftool; do bstat_result "loader.$1.$w" ms "$tmp/$w"; done
	echo "RESULT	loader.$1.objects	n	$(ls "$2"/*.bpf | wc -l)"
	echo "RESULT	loader.$1.threads	n	$(threads "$2")"
	echo "RESULT	loader.$1.btf_parses_loader	n	$(parses loader "$2")"
	echo "RESULT	loader.$1.btf_parses_min	n	$(parses min_loader "$2")"
	echo "RESULT	loader.$1.btf_parses_bpftool	n	$(parses bpftool_all "$2")"
}

# The objects the loader loads on this kernel (the others it skips).
mkdir -p "$tmp/all" "$tmp/copies"
clean; loader "$BUILD/bpf"
for o in "$BUILD"/bpf/*.bpf; do
	ls "$pins" | grep -q "^prog_$(basename "$o" .bpf)_" && cp "$o" "$tmp/all/"
done
# One metric name loads once (doc/loader.md): each copy gets its own name,
# of the same length, so that every copy loads.
for i in $(seq "$COPIES"); do
	perl -pe "s/CompactionDuration/CompactionDurati$(printf %02d "$i")/" \
		"$BUILD/bpf/compaction.bpf" >"$tmp/copies/compaction$i.bpf"
done

# One run of the command under callgrind: user-space instructions of its
# processes (the loader's probe child too), summed.
instructions() {
	local f n=0
	rm -f "$tmp"/cg.*
	valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$tmp/cg.%p" \
		"$@" >/dev/null 2>&1 || true
	for f in "$tmp"/cg.*; do
		n=$(( n + $(awk '/^(summary|totals):/ { print $2; exit }' "$f") ))
	done
	echo "$n"
}
progs() {	# programs pinned
	local f n=0
	for f in "$pins"/prog_*; do [ -e "$f" ] && n=$(( n + 1 )); done
	echo "$n"
}
syscalls() {	# one run of the command: its syscalls, all processes
	strace -f -c -o "$tmp/strace" "$@" >/dev/null 2>&1 || true
	awk '$NF == "total" { print $4 }' "$tmp/strace"
}
profile() {	# key, objdir (its scenario ran: min_loader's arguments are known)
	local l m lp mp lc mc
	command -v valgrind >/dev/null || { echo "# loader profile: no valgrind, skipped"; return; }
	lc=("$BUILD/kstats-loader" --obj-dir "$2" --pin-dir "$pins" --run-dir "$run/run")
	# shellcheck disable=SC2207
	mc=("$BUILD/bench/loader/min_loader" "$pins" $(cat "$tmp/min_args.$(basename "$2")"))
	# From no pins, as in the timed runs (min_loader needs the directory);
	# each must have pinned the same programs under callgrind.
	clean; l=$(instructions "${lc[@]}"); lp=$(progs)
	clean; mkdir -p "$pins"; m=$(instructions "${mc[@]}"); mp=$(progs)
	[ "$lp" -gt 0 ] && [ "$lp" = "$mp" ] ||
		{ echo "bench-loader: under callgrind the loader pinned $lp programs, min_loader $mp" >&2
		  exit 1; }
	echo "RESULT	loader.$1.instr_loader	Minstr	$(awk -v v="$l" 'BEGIN { printf "%.2f", v / 1e6 }')"
	echo "RESULT	loader.$1.instr_min	Minstr	$(awk -v v="$m" 'BEGIN { printf "%.2f", v / 1e6 }')"
	echo "RESULT	loader.$1.instr_loader_vs_min	x	$(awk -v l="$l" -v m="$m" 'BEGIN { printf "%.3f", l / m }')"
	clean; echo "RESULT	loader.$1.syscalls_loader	n	$(syscalls "${lc[@]}")"
	clean; mkdir -p "$pins"
	echo "RESULT	loader.$1.syscalls_min	n	$(syscalls "${mc[@]}")"
	clean
}

echo "# loader: $REPEATS interleaved repeats; objects: $(ls "$tmp/all" | tr '\n' ' ')"
echo "# status file and flag under $run ($(stat -f -c %T "$run"); /run at boot is a tmpfs)"
scenario all "$tmp/all"
scenario copies "$tmp/copies"
"$BUILD/bench/loader/btf_parse"
profile all "$tmp/all"
