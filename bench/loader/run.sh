#!/usr/bin/env bash
# kstats-loader wall time for a set of objects against `bpftool prog loadall`
# run once per object, side by side in one run, medians over REPEATS; plus
# the vmlinux BTF parses each makes (opens of /sys/kernel/btf/vmlinux, by
# strace) and the cost of one parse.
# Usage: bench/loader/run.sh [BUILD]     (root; make bench-loader builds it)
set -eu
BUILD=${1:-build}
REPEATS=${REPEATS:-15}
COPIES=${COPIES:-6}
BPFTOOL=${BPFTOOL:-bpftool}
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "bench-loader: needs root" >&2; exit 2; }
tmp=$(mktemp -d /tmp/kstats-bench-loader-XXXXXX)
pins=/sys/fs/bpf/kernelstats-bench-$$
trap 'rm -rf "$tmp" "$pins"' EXIT

now_us() { echo $(( $(date +%s%N) / 1000 )); }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

loader() {	# objdir
	"$BUILD/kstats-loader" --obj-dir "$1" --pin-dir "$pins/l" --run-dir "$tmp/run" \
		>/dev/null 2>&1
}
bpftool_all() {	# objdir
	local o
	for o in "$1"/*.bpf; do
		mkdir -p "$pins/b/$(basename "$o" .bpf)"
		"$BPFTOOL" prog loadall "$o" "$pins/b/$(basename "$o" .bpf)" \
			pinmaps "$pins/b/$(basename "$o" .bpf)" >/dev/null 2>&1
	done
}
clean() { rm -rf "$pins" "$tmp/run"; mkdir -p "$pins"; }

elapsed() {	# wall time (us) of "$@"
	local t0
	t0=$(now_us); "$@"; echo $(( $(now_us) - t0 ))
}

# Interleaved, so both see the same load from whatever else runs: per
# repeat, a first load and a re-run (everything already pinned) of the
# loader, then bpftool from a clean pin dir.  Prints three medians.
time_all() {	# objdir
	local i
	: >"$tmp/l"; : >"$tmp/r"; : >"$tmp/b"
	for i in $(seq "$REPEATS"); do
		clean; elapsed loader "$1" >>"$tmp/l"; elapsed loader "$1" >>"$tmp/r"
		clean; elapsed bpftool_all "$1" >>"$tmp/b"
	done
	echo "$(median <"$tmp/l") $(median <"$tmp/r") $(median <"$tmp/b")"
}
parses() {	# opens of vmlinux BTF by the function "$1" on objdir "$2"
	clean
	export BUILD BPFTOOL pins tmp
	export -f "$1"
	strace -f -qq -e trace=openat -o "$tmp/strace" bash -c "$1 $2" >/dev/null 2>&1 || true
	grep -c 'sys/kernel/btf/vmlinux' "$tmp/strace" || true
}

scenario() {	# name, objdir
	local n l b r lp bp
	n=$(ls "$2"/*.bpf | wc -l)
	read -r l r b <<<"$(time_all "$2")"
	if command -v strace >/dev/null; then
		lp=$(parses loader "$2"); bp=$(parses bpftool_all "$2")
	else
		lp="n/a (no strace)"; bp=$lp
	fi
	awk -v name="$1" -v n="$n" -v l="$l" -v b="$b" -v r="$r" -v lp="$lp" -v bp="$bp" \
		'BEGIN { printf "%-28s %3d  %9.1f  %9.1f  %6.2f  %9.1f  %6s  %6s\n",
			 name, n, l / 1000, b / 1000, b / l, r / 1000, lp, bp }'
}

mkdir -p "$tmp/all" "$tmp/copies"
cp "$BUILD"/bpf/*.bpf "$tmp/all/"
for i in $(seq "$COPIES"); do cp "$BUILD/bpf/compaction.bpf" "$tmp/copies/compaction$i.bpf"; done

echo "kstats-loader vs bpftool prog loadall (once per object); medians of $REPEATS runs"
printf '%-28s %3s  %9s  %9s  %6s  %9s  %6s  %6s\n' "objects" "n" "loader ms" \
	"bpftool ms" "ratio" "re-run ms" "BTF:ld" "BTF:bt"
scenario "build/bpf/*.bpf" "$tmp/all"
scenario "compaction.bpf x$COPIES" "$tmp/copies"
echo "one vmlinux BTF parse: $("$BUILD/bench/loader/btf_parse") us (median of 21)"
echo "loader: loads one variant per attach point, attaches, pins maps+links+progs,"
echo "        writes the status file; bpftool loadall: loads every program, pins, no attach."
echo "BTF:ld/BTF:bt: vmlinux BTF parses by the loader / by the bpftool runs."
