#!/usr/bin/env bash
# The AOSP page's DirectReclaimLatency (tests/golden/aosp_direct_reclaim.proto)
# and ours are the same message: every process state, encoded with the
# page's .proto, decodes with ours to the same text, and back.
set -u
cd "$(dirname "$0")/../.." || exit 1
T=pull_page_schema
PAGE=tests/golden/aosp_direct_reclaim.proto
OURS=proto/kernelstats_atoms.proto

command -v protoc >/dev/null || { echo "SKIP: $T: protoc is not installed (make deps)"; exit 0; }
TMP=$(mktemp -d /tmp/kstats-test-$$-page-XXXXXX)
trap 'rm -rf "$TMP"' EXIT

states=$(grep -o '[A-Z][A-Z_]* = [0-9]*;' "$PAGE" | cut -d' ' -f1)
[ "$(echo "$states" | wc -l)" -gt 1 ] || { echo "FAIL: $T: no enum values read from $PAGE"; exit 1; }
fails=0
for s in $states; do
	printf 'process_state: %s\nduration_log2_buckets_micros: 0\nduration_log2_buckets_micros: 7\nduration_log2_buckets_micros: 2147483647\n' \
		"$s" >"$TMP/text"
	if ! protoc -Itests/golden --encode=aosp.DirectReclaimLatency "$PAGE" <"$TMP/text" >"$TMP/page.pb" ||
	   ! protoc -Iproto --decode=kernelstats.DirectReclaimLatency "$OURS" <"$TMP/page.pb" >"$TMP/ours.txt" ||
	   ! cmp -s "$TMP/text" "$TMP/ours.txt"; then
		echo "FAIL: $T: $s: the page's encoding does not decode with $OURS to the same text"
		fails=1
		continue
	fi
	protoc -Iproto --encode=kernelstats.DirectReclaimLatency "$OURS" <"$TMP/text" >"$TMP/ours.pb" &&
	cmp -s "$TMP/page.pb" "$TMP/ours.pb" ||
		{ echo "FAIL: $T: $s: our encoding differs from the page's"; fails=1; }
done
[ "$fails" -eq 0 ] && echo "PASS: $T: $(echo $states | wc -w) process states round-trip between the page's DirectReclaimLatency and ours"
exit "$fails"
