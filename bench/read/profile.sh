#!/usr/bin/env bash
# Instructions per row of one reader read and of one bare whole-map batch
# (bench_read --profile), from callgrind: exact and repeatable on a busy
# machine, unlike wall time.  callgrind counts user space only; the kernel's
# batch copy, which both share, is not in either figure, so the difference
# is what the reader adds per row: the in-place decode (one move of each
# value to make room for the key column, and the key).
# Prints bench/lib/bstat.h RESULT lines; nothing when valgrind is missing.
# Usage: bench/read/profile.sh BUILD [N...]      (root)
set -eu -o pipefail
BUILD=${1:-build}
shift || true
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { echo "# read profile: no valgrind, skipped" >&2; exit 0; }
tmp=$(mktemp -d /tmp/kstats-bench-cg-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

inclusive() {	# file function: the function's inclusive instructions
	callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		awk -v f="$2" '!n && $0 ~ (":" f " ") { gsub(/,/, "", $1); n = $1 } END { print n }'
}

sizes=("$@")
[ $# -gt 0 ] || sizes=(10000 65536)
for n in "${sizes[@]}"; do
	valgrind --tool=callgrind --callgrind-out-file="$tmp/read.$n" \
		"$BUILD/bench/read/bench_read" "$BUILD/kstats" --profile --entries "$n" \
		>/dev/null 2>"$tmp/err.$n" ||
		{ echo "read profile: $n entries failed:" >&2; tail -3 "$tmp/err.$n" >&2; exit 1; }
	reader=$(inclusive "$tmp/read.$n" kstats_map_read)
	batch=$(inclusive "$tmp/read.$n" run_batch)
	[ -n "$reader" ] && [ -n "$batch" ] ||
		{ echo "read profile: no kstats_map_read/run_batch in callgrind's output" >&2; exit 1; }
	awk -v r="$reader" -v b="$batch" -v n="$n" 'BEGIN {
		printf "RESULT\tread.%d.instr.reader\tinstr/row\t%.1f\n", n, r / n
		printf "RESULT\tread.%d.instr.batch\tinstr/row\t%.1f\n", n, b / n
	}'
done
