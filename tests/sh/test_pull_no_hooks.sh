#!/usr/bin/env bash
# The shipped kstats has no test hooks (issue 28): no --fault or
# --list-faults option (rejected like any unknown one), no KSTATS_FAULT,
# KSTATS_CLOCK or KSTATS_BOOT_ID, nothing of them in --help or in the
# binary.  The test build, hooks/kstats (mk/pull_hooks.mk), has them: each
# check is made on both, so it can fail.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${KSTATS_BUILD:-build}
T=pull_no_hooks
K=$B/kstats
KH=$B/hooks/kstats

pass() { echo "PASS: $T: $1"; }
fail() { echo "FAIL: $T: $1"; }
[ -x "$K" ] && [ -x "$KH" ] || { fail "setup: build $B first (make test-build)"; exit 1; }
TMP=$(mktemp -d /tmp/kstats-test-$$-nohooks-XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -m 0700 "$TMP/pins"

pull() {	# pull BINARY NAME [ARGS...]: rc, err; state and atoms in $TMP/NAME
	local bin=$1 name=$2
	shift 2
	"$bin" pull --obj-dir "$B/bpf" --pin-dir "$TMP/pins" --state-dir "$TMP/$name/s" \
		--out-dir "$TMP/$name/o" "$@" >/dev/null 2>"$TMP/err"
	rc=$?
	err=$(cat "$TMP/err")
}

hooks='--fault|--list-faults|KSTATS_[A-Z_]+|[Tt]esting|hook|point'
help=$("$K" pull --help)
if [ -n "$help" ] && ! grep -q -E -- "$hooks" <<<"$help"; then
	pass "kstats pull --help names no test hook"
else
	fail "kstats pull --help: $(grep -E -- "$hooks" <<<"$help")"
fi

for opt in "--fault locked" --list-faults; do
	# shellcheck disable=SC2086
	pull "$K" opt $opt
	if [ $rc -eq 2 ] && grep -q "unrecognized option '${opt%% *}'" <<<"$err" &&
	   [ ! -e "$TMP/opt" ]; then
		pass "kstats pull $opt: exit 2, an unknown option, nothing created"
	else
		fail "kstats pull $opt: exit $rc: $(head -1 <<<"$err")"
	fi
done

# The crash point "locked" comes before the maps are read: with nothing
# pinned the shipped pull exits 3, the test build is killed there.
KSTATS_FAULT=locked KSTATS_CLOCK=1:1 KSTATS_BOOT_ID=fake pull "$K" env
rc_shipped=$rc err_shipped=$err
KSTATS_FAULT=locked pull "$KH" hooked
if [ "$rc_shipped" -eq 3 ] && grep -q "no histogram map is pinned" <<<"$err_shipped" &&
   [ $rc -eq 137 ] && grep -q "fault point locked" <<<"$err"; then
	pass "KSTATS_FAULT, KSTATS_CLOCK, KSTATS_BOOT_ID: ignored by kstats (exit 3), the test build is killed at 'locked'"
else
	fail "hook variables: kstats exit $rc_shipped ($err_shipped), test build exit $rc ($err)"
fi

names='KSTATS_FAULT|KSTATS_CLOCK|KSTATS_BOOT_ID|fault point'
for bin in "$K" "$B/kstats-loader"; do
	found=$(grep -a -o -E "$names" "$bin" | sort -u | paste -sd ' ')
	if [ -z "$found" ] && grep -q -a -E "$names" "$KH"; then
		pass "${bin##*/}: no hook in the binary (the test build has them)"
	else
		fail "${bin##*/} holds ${found:-nothing, nor does the test build}"
	fi
done
