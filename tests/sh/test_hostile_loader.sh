#!/usr/bin/env bash
# Hostile objects and limits, round 4 (doc/loader.md): an object path whose
# symlink a user flips between root's object and their own during the load
# (the trust check must judge what is read); an object on which libbpf's
# parse never ends (the prober's deadline); the loader out of file
# descriptors (a limit, not the verifier; a failed account lookup, not a
# missing account); a disable name that matches no object.
set -u
cd "$(dirname "$0")/../.." || exit 1
T="hostile loader"
B=${KSTATS_BUILD:-build}
L=$B/kstats-loader
. tests/lib/testuser.sh
fail() { echo "FAIL: $T: $1"; exit 1; }
pass() { echo "PASS: $T: $1"; }
testuser_setup "$T" hostload python3 timeout jq
PIN=/sys/fs/bpf/kernelstats-test-$$-hostload
[ -x "$L" ] && [ -e "$B/bpf/compaction.bpf" ] && [ -e "$B/tests/bpf/loader_count.bpf" ] ||
	fail "setup: build $B first"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0

load() {	# name objdir [loader args]: exit code in $tmp/name.rc
	local name=$1 dir=$2
	shift 2
	"$L" --obj-dir "$dir" --pin-dir "$PIN" --run-dir "$tmp/run" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}
unload() { "$L" --unload --obj-dir "$1" --pin-dir "$PIN" --run-dir "$tmp/run" >/dev/null 2>&1; }

# 1. obj/x.bpf -> user's dir/link, flipped by the user between root's
# compaction object and their own (loader_count: another program name).
mkdir -p "$tmp/obj" "$tmp/root" "$tmp/u"
cp "$B/bpf/compaction.bpf" "$tmp/root/x.bpf"
cp "$B/tests/bpf/loader_count.bpf" "$tmp/u/evil.bpf"
chown -R "$U:$U" "$tmp/u"
ln -s "$tmp/u/link" "$tmp/obj/x.bpf"
setpriv --reuid "$U" --regid "$U" --clear-groups -- /usr/bin/python3 -c '
import os, sys
a, b, link = sys.argv[1:]
while True:
    for t in (a, b):
        os.symlink(t, link + ".t")
        os.rename(link + ".t", link)' "$tmp/root/x.bpf" "$tmp/u/evil.bpf" "$tmp/u/link" &
flipper=$!
for i in $(seq 50); do [ -L "$tmp/u/link" ] && break; sleep 0.1; done
RUNS=30 evil=0 root=0 refused=0
for i in $(seq $RUNS); do
	load race "$tmp/obj"
	st=$tmp/run/loader-status.json
	jq -e '.objects[0].programs[] | select(.name == "on_rename" and .outcome == "LOADED")' \
		"$st" >/dev/null 2>&1 && evil=$((evil + 1))
	jq -e '.objects[0].programs[] | select(.name == "on_compaction_end" and .outcome == "LOADED")' \
		"$st" >/dev/null 2>&1 && root=$((root + 1))
	grep -q "owned by uid $(id -u "$U")" "$tmp/race.out" && refused=$((refused + 1))
	[ -n "${KSTATS_TEST_VERBOSE:-}" ] && head -1 "$tmp/race.out"
	unload "$tmp/obj"
done
kill "$flipper"
wait "$flipper" 2>/dev/null
[ "$evil" = 0 ] || fail "a user's object was loaded past the trust check in $evil of $RUNS runs"
[ $((root + refused)) = "$RUNS" ] ||
	fail "flipped link: $root runs loaded root's object and $refused refused the user's, of $RUNS: $(head -2 "$tmp/race.out")"
pass "a symlink flipped during $RUNS loads: the user's object never loaded ($root root's, $refused refused naming uid $(id -u "$U"))"

# 2. An object on which libbpf's parse never ends, between two good ones.
mkdir -p "$tmp/objs2"
cp "$B/bpf/compaction.bpf" "$tmp/objs2/"
cp "$B/bpf/kswapd.bpf" "$tmp/objs2/"
python3 tests/lib/btf_crasher.py "$B/bpf/kswapd.bpf" "$tmp/objs2/hang.bpf" loop ||
	fail "setup: cannot make the hanging object"
start=$(date +%s)
timeout 120 "$L" --obj-dir "$tmp/objs2" --pin-dir "$PIN" --run-dir "$tmp/run" \
	>"$tmp/hang.out" 2>"$tmp/hang.err"
rc=$? secs=$(($(date +%s) - start))
[ "$rc" = 0 ] || fail "a hanging object: the loader exited $rc after $secs s: $(cat "$tmp/hang.out" "$tmp/hang.err" | head -3)"
grep -q '^hang .*FAILED_OBJECT: libbpf did not finish parsing it within' "$tmp/hang.out" ||
	fail "a hanging object: no deadline reason: $(grep '^hang' "$tmp/hang.out")"
[ "$(grep -c 'LOADED:' "$tmp/hang.out")" = 2 ] && [ "$secs" -le 30 ] &&
	jq -e '.objects | length == 3' "$tmp/run/loader-status.json" >/dev/null ||
	fail "a hanging object: the others and the status: $(cat "$tmp/hang.out") ($secs s)"
pass "an object libbpf never finishes parsing fails alone ($secs s), the two others load, the status is written"
unload "$tmp/objs2"

# 3. Out of file descriptors: at whatever limit the load fails, it is not
# blamed on the verifier, and no variant is tried for it.
mkdir -p "$tmp/objs3"
cp "$B/bpf/compaction.bpf" "$tmp/objs3/"
limits=0 lookups=0
for n in $(seq 4 40); do
	(ulimit -n "$n" && load emfile "$tmp/objs3")
	unload "$tmp/objs3"
	grep -q 'Too many open files' "$tmp/emfile.out" "$tmp/emfile.err" || continue
	limits=$((limits + 1))
	grep -q 'FAILED_VERIFIER' "$tmp/emfile.out" &&
		fail "ulimit -n $n: out of descriptors blamed on the verifier: $(grep compaction "$tmp/emfile.out")"
	if grep -q '^compaction .*load: Too many open files' "$tmp/emfile.out"; then
		grep -q 'raise the loader.s open files limit' "$tmp/emfile.out" ||
			fail "ulimit -n $n: the reason names no fix: $(grep compaction "$tmp/emfile.out")"
	fi
	grep -q 'unknown, using root' "$tmp/emfile.err" &&
		fail "ulimit -n $n: a failed account lookup reported as a missing account: $(grep unknown "$tmp/emfile.err")"
	grep -q 'cannot look up .*Too many open files' "$tmp/emfile.err" && lookups=$((lookups + 1))
done
[ "$limits" -gt 0 ] || fail "no limit from 4 to 40 ran the loader out of descriptors"
[ "$lookups" -gt 0 ] || fail "no limit made an account lookup fail with EMFILE"
pass "out of descriptors at $limits limits: never a verifier failure, a lookup error said as one ($lookups)"

# 4. A disable name that matches no object: one warning naming the objects.
load typo "$tmp/objs3" --disable compction,direct_reclaim,compaction
n=$(grep -c 'names no object' "$tmp/typo.err")
[ "$(cat "$tmp/typo.rc")" = 0 ] && [ "$n" = 2 ] &&
	grep -q 'disable = compction names no object in .*; the objects are: compaction$' "$tmp/typo.err" &&
	grep -q '^compaction .*SKIPPED_DISABLED' "$tmp/typo.out" ||
	fail "misspelt disable names: $n warnings: $(cat "$tmp/typo.err" "$tmp/typo.out" | head -4)"
pass "misspelt disable names: one warning each naming the objects, the right name still disables"
unload "$tmp/objs3"
