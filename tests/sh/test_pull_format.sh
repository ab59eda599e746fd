#!/usr/bin/env bash
# Format: protoc --decode of kstats pull's output, and kstats atoms' text,
# equal the golden files.  The real loader pins the real compaction object;
# its links are unpinned so only this test writes the map (bpftool), and the
# clock, boot id and map creation time (loader status) are fixed: the clock
# and boot id by the test build of kstats (hooks/kstats, mk/pull_hooks.mk).
# KSTATS_UPDATE_GOLDEN=1 rewrites the golden files instead.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${KSTATS_BUILD:-build}
T=pull_format
GOLDEN=tests/golden/pull_compaction

. tests/lib/shtest.sh
. tests/lib/pull.sh
shtest_setup format protoc bpftool jq

"$BUILD/kstats-loader" --obj-dir "$BUILD/bpf" --pin-dir "$PIN" --run-dir "$TMP/run" >/dev/null ||
	fail "kstats-loader failed"
rm -f "$PIN"/link_*
MAP=$PIN/map_compaction_compaction_duration_map
ID=$(bpftool -j map show pinned "$MAP" | jq .id) || fail "bpftool map show"
cat >"$TMP/status.json" <<JSON
{"version":1,"objects":[{"name":"compaction","maps":[{"name":"compaction_duration_map",
 "pin":"$MAP","map_id":$ID,"created_boottime_ns":1000000000,
 "created_realtime_ns":1700000001000000000}]}]}
JSON

# set_buckets b0 b1 ... (the rest 0): the map's only key, little-endian u64s.
set_buckets() {
	local hex="" v i b
	for i in $(seq 0 31); do
		v=${1:-0}
		[ $# -gt 0 ] && shift
		b=$(printf '%016x' "$v")
		for ((j = 14; j >= 0; j -= 2)); do hex+="${b:j:2} "; done
	done
	# shellcheck disable=SC2086
	bpftool map update pinned "$MAP" key hex 00 00 00 00 value hex $hex ||
		fail "bpftool map update"
}

# Pull 1, 60 s after creation: bucket 10 exceeds INT32_MAX, so two atoms.
set_buckets 1 0 0 5 0 0 0 0 0 0 2147483655 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 42
pull_at 61000000000:1700000061000000000 --status-file "$TMP/status.json"
# Pull 2, a day later: +4 in bucket 3, +3 in bucket 5, bucket 31 went back.
set_buckets 1 0 0 9 0 3 0 0 0 0 2147483655 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 40
pull_at 86461000000000:1700086461000000000 --status-file "$TMP/status.json"
# Pull 3: nothing new, no file.
pull_at 86462000000000:1700086462000000000 --status-file "$TMP/status.json"

cat "$TMP"/atoms/atoms-*.pb |
	protoc --decode=kernelstats.AtomList proto/kernelstats_atoms.proto \
	>"$TMP/decoded.txt" 2>&1 || fail "protoc --decode failed: $(head -1 "$TMP/decoded.txt")"
# Each atom names the kernel it was counted under: this one's.
sed -i "s/^  kernel_release: \"$(uname -r)\"$/  kernel_release: \"\$(uname -r)\"/" "$TMP/decoded.txt"
(cd "$TMP/atoms" && "$OLDPWD/$BUILD/kstats" atoms atoms-*.pb) >"$TMP/atoms.txt" 2>&1 ||
	fail "kstats atoms failed"
if [ "${KSTATS_UPDATE_GOLDEN:-0}" = 1 ]; then
	cp "$TMP/decoded.txt" "$GOLDEN.decode.txt"
	cp "$TMP/atoms.txt" "$GOLDEN.atoms.txt"
fi
[ "$(ls "$TMP/atoms" | wc -l)" -eq 2 ] || fail "expected 2 atom files, got: $(ls "$TMP/atoms")"
diff -u "$GOLDEN.decode.txt" "$TMP/decoded.txt" >&2 ||
	fail "protoc --decode differs from $GOLDEN.decode.txt"
echo "PASS: $T: protoc --decode matches $GOLDEN.decode.txt"
diff -u "$GOLDEN.atoms.txt" "$TMP/atoms.txt" >&2 ||
	fail "kstats atoms differs from $GOLDEN.atoms.txt"
echo "PASS: $T: kstats atoms matches $GOLDEN.atoms.txt"
