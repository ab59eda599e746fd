#!/usr/bin/env bash
# Instructions per record of the stream cases, from callgrind (exact and
# repeatable on a busy machine, unlike wall time), and the bound they put on
# each case ÷ the count-only floor: on C CPUs a case's threads do R (reader,
# 0 when the consumers read the ring themselves, as ours and bestzc do) +
# 2 x K (consumers) instructions per record where the floor's one thread does
# F, so at equal instructions per cycle it reaches at most
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

threads() {	# case reader-function|- consumer-function: "reader consumer" per record
	local reader=0 consumer=0 nconsumers=0 f
	for f in "$tmp/$1".*-*; do
		annotate "$f"
		if grep -q ":$3 " "$tmp/annotated"; then
			consumer=$(( consumer + $(total "$f") )); nconsumers=$(( nconsumers + 1 ))
		elif grep -q ":$2 " "$tmp/annotated"; then
			# ours: its reader thread; best: the main thread's reading loop
			[ "$1" = ours ] && reader=$(total "$f") || reader=$(inclusive "$f" ring_buffer__consume)
		fi
	done
	{ [ "$reader" -gt 0 ] || [ "$2" = - ]; } && [ "$nconsumers" -gt 0 ] ||
		{ echo "stream_profile: cannot find the $1 threads in callgrind's output" >&2; exit 1; }
	echo "$reader $(( consumer / nconsumers ))"
}
report() {	# case floor reader consumer: per record, and the bound
	awk -v p="$1" -v f="$2" -v r="$3" -v k="$4" -v nk=2 -v n="$records" -v c="$(nproc)" 'BEGIN {
		f /= n; r /= n; k /= n
		b = c * f / (r + nk * k); if (r > 0 && f / r < b) b = f / r; if (f / k < b) b = f / k
		printf "RESULT\tstream.instr.%sreader\tinstr/rec\t%.1f\n", p, r
		printf "RESULT\tstream.instr.%sconsumer\tinstr/rec\t%.1f\n", p, k
		printf "RESULT\tstream.instr.%stotal\tinstr/rec\t%.1f\n", p == "" ? "ours_" : p, r + nk * k
		printf "RESULT\tstream.%sbound_vs_libbpf\tx\t%.3f\n", p, b
	}'
}

profile libbpf
profile ours
profile best
profile bestzc
floor=$(inclusive "$(ls "$tmp"/libbpf.*-01)" ring_buffer__consume)
[ -n "$floor" ] || { echo "stream_profile: no floor in callgrind's output" >&2; exit 1; }
awk -v f="$floor" -v n="$records" \
	'BEGIN { printf "RESULT\tstream.instr.libbpf\tinstr/rec\t%.1f\n", f / n }'
report "" "$floor" $(threads ours - consumer_main)
report best_ "$floor" $(threads best best_record best_consumer)
report bestzc_ "$floor" $(threads bestzc - zc_consumer)
