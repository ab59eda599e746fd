#!/usr/bin/env bash
# The atoms files a guest printed on its console ("@@ BLOB atoms NAME" ..
# "@@ BLOB-END", base64), decoded with protoc into OUT_DIR; prints one line
# per CompactionDuration atom: "<file> <pull_id> <boot_id> <count>" (count:
# the sum of its buckets), and "<file> UNDECODABLE" for a file that is not
# a whole AtomList.
# Usage: tests/system/atoms.sh CONSOLE_LOG OUT_DIR
set -u
log=$1 out=$2 proto=proto/kernelstats_atoms.proto
mkdir -p "$out"
awk -v dir="$out" '/^@@ BLOB atoms /{f=dir "/" $4 ".b64"; printf "" > f; next}
	/^@@ BLOB-END/{f=""; next} f && /^@@ B64 /{print substr($0, 8) > f}' "$log"
for f in "$out"/*.b64; do
	[ -e "$f" ] || continue
	pb=${f%.b64}
	name=$(basename "$pb")
	if ! base64 -d "$f" >"$pb" 2>/dev/null ||
	   ! protoc --decode=kernelstats.AtomList -I"$(dirname "$proto")" "$proto" \
		<"$pb" >"$pb.txt" 2>"$pb.err"; then
		echo "$name UNDECODABLE"
		continue
	fi
	awk -v name="$name" '
		/^  pull_id:/ {pull = $2}
		/^  boot_id:/ {boot = $2; gsub(/"/, "", boot)}
		/compaction_duration \{/ {in_c = 1; n = 0}
		in_c && /duration_log2_buckets_micros:/ {n += $2}
		in_c && /^  }/ {print name, pull, boot, n; in_c = 0}
		END {if (!pull) print name, "NOATOMS"}' "$pb.txt"
done
