#!/usr/bin/env bash
# Instructions per record of the stream cases, from callgrind (exact and
# repeatable on a busy machine, unlike wall time), and the bound they put on
# ours ÷ the count-only floor: on C CPUs the three threads of ours do
# R (reader) + 2 x K (consumers) instructions per record where the floor's
# one thread does F, so at equal instructions per cycle ours reaches at most
# min(C x F / (R + 2K), F / R, F / K) of the floor's rate.
# Prints bench/lib/bstat.h RESULT lines; nothing when valgrind is missing.
# Usage: bench/stream_profile.sh BUILD       (root)
set -eu -o pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "# stream_profile: no valgrind, skipped" >&2; exit 0; }
tmp=$(mktemp -d /tmp/kstats-bench-cg-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
records=$(awk '/^#define DRAIN_RECORDS/ { sub(/u$/, "", $3); print $3 }' bench/stream.c)

profile() {	# case: one drain under callgrind, one file per thread
	KSTATS_BUILD="$BUILD" valgrind --tool=callgrind --separate-threads=yes \
		--callgrind-out-file="$tmp/$1.%p" "$BUILD/bench/stream" --profile "$1" \
		>/dev/null 2>"$tmp/$1.err" ||
		{ echo "stream_profile: $1 failed:" >&2; tail -3 "$tmp/$1.err" >&2; exit 1; }
}
annotate() {	# file [--inclusive=yes]: callgrind_annotate's output, kept
	callgrind_annotate --auto=no "$@" >"$tmp/annotated" 2>/dev/null || true
}
inclusive() {	# file function: the function's inclusive instructions
	annotate "$1" --inclusive=yes
	awk -v f="$2" '$0 ~ (":" f " ") { gsub(/,/, "", $1); print $1; exit }' "$tmp/annotated"
}
total() {	# file: all its instructions
	annotate "$1"
	awk '/PROGRAM TOTALS/ { gsub(/,/, "", $1); print $1; exit }' "$tmp/annotated"
}

profile libbpf
profile ours
floor=$(inclusive "$(ls "$tmp"/libbpf.*-01)" ring_buffer__consume)
reader=0 consumer=0 nconsumers=0
for f in "$tmp"/ours.*-*; do
	annotate "$f"
	if grep -q ':consumer_main ' "$tmp/annotated"; then
		consumer=$(( consumer + $(total "$f") )); nconsumers=$(( nconsumers + 1 ))
	elif grep -q ':kstats_stream_on_record ' "$tmp/annotated"; then
		reader=$(total "$f")
	fi
done
[ -n "$floor" ] && [ "$reader" -gt 0 ] && [ "$nconsumers" -gt 0 ] ||
	{ echo "stream_profile: cannot find the threads in callgrind's output" >&2; exit 1; }
awk -v f="$floor" -v r="$reader" -v k="$consumer" -v nk="$nconsumers" -v n="$records" \
    -v c="$(nproc)" 'BEGIN {
	f /= n; r /= n; k /= n * nk
	b = c * f / (r + nk * k); if (f / r < b) b = f / r; if (f / k < b) b = f / k
	printf "RESULT\tstream.instr.libbpf\tinstr/rec\t%.1f\n", f
	printf "RESULT\tstream.instr.reader\tinstr/rec\t%.1f\n", r
	printf "RESULT\tstream.instr.consumer\tinstr/rec\t%.1f\n", k
	printf "RESULT\tstream.instr.ours_total\tinstr/rec\t%.1f\n", r + nk * k
	printf "RESULT\tstream.bound_vs_libbpf\tx\t%.3f\n", b
}'
