#!/usr/bin/env bash
# Hostile files, names and users against the tools (issue 15, items 3, 5
# and 7): planted symlinks and writable directories under kstats pull, pull
# ids at the end of their range, saved corrupt states; bad objects among
# dump's; status as a health check; messages that name the real cause, for
# root, a kstats group member and an outsider (real users via setpriv).
# Runs as root; removes its user, pins and files at the end.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${KSTATS_BUILD:-build}
K=$B/kstats
PIN=/sys/fs/bpf/kernelstats-test-$$-hostile
OBJ=$B/bpf/compaction.bpf
MAP=compaction_duration_map

. tests/lib/testuser.sh
testuser_setup "hostile tools" hostile jq strace
testuser_load
# Status files are root's: the test copy lives in a private directory.
STATUS=$tmp/run/loader-status.json
chmod 0755 "$tmp/run" && chmod 0644 "$STATUS"
echo 1 > /proc/sys/vm/compact_memory 2>/dev/null	# real events for the atoms
pull() {	# pull STATE_DIR OUT_DIR [ARGS...]
	local s=$1 o=$2
	shift 2
	run timeout 60 "$K" pull --obj-dir "$B/bpf" --pin-dir "$PIN" --status-file "$STATUS" \
		--state-dir "$s" --out-dir "$o" --lock-timeout 5 "$@"
}

# ---- item 3: kstats pull never follows a plant, never wraps, never replaces ----

mkdir -m 0700 "$tmp/s1" "$tmp/o1"
echo precious > "$tmp/victim"
ln -s "$tmp/victim" "$tmp/s1/lock"
pull "$tmp/s1" "$tmp/o1"
if [ $rc -ne 0 ] && [ "$(cat "$tmp/victim")" = precious ] && [ "$nerr" -eq 1 ] &&
   grep -q "lock: a symlink or not a regular file; remove it" <<<"$err"; then
	pass "pull: a lock symlinked to another file is refused, the file untouched"
else
	fail "pull: lock symlink: exit $rc, victim '$(cat "$tmp/victim")': $err"
fi

# Every file the pull creates: O_NOFOLLOW, and O_EXCL but for the lock.
mkdir -m 0700 "$tmp/s2" "$tmp/o2"
ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 run strace -f -qq -y -e trace=open,openat,creat,rename,renameat,renameat2 -o "$tmp/trace" \
	"$K" pull --obj-dir "$B/bpf" --pin-dir "$PIN" --status-file "$STATUS" \
	--state-dir "$tmp/s2" --out-dir "$tmp/o2"
creates=$(grep -E 'open(at)?\(.*O_CREAT' "$tmp/trace" | grep -E "$tmp/[so]2")
unsafe=$(grep -v O_NOFOLLOW <<<"$creates"; grep -v '/lock"' <<<"$creates" | grep -v O_EXCL)
atoms=$(ls "$tmp/o2" | grep -c '^atoms-')
if [ $rc -eq 0 ] && [ -n "$creates" ] && [ -z "$unsafe" ]; then
	pass "pull: all $(wc -l <<<"$creates") files it creates use O_NOFOLLOW (and O_EXCL but the lock)"
else
	fail "pull: exit $rc; creates without O_NOFOLLOW/O_EXCL: ${unsafe:-none seen}: $err"
fi
if [ "$atoms" -eq 0 ]; then
	echo "SKIP: pull: no atoms file written (no events), RENAME_NOREPLACE not seen"
elif grep -E 'renameat2\(.*atoms-[0-9]+\.pb", RENAME_NOREPLACE' "$tmp/trace" >/dev/null ||
     grep -E 'link\(.*atoms-[0-9]+\.pb' "$tmp/trace" >/dev/null; then
	pass "pull: the atoms file is renamed into place with RENAME_NOREPLACE"
else
	fail "pull: atoms rename may replace: $(grep -E 'rename.*atoms' "$tmp/trace")"
fi

# A directory others can write is refused, with the fix.
mkdir -m 0770 "$tmp/s3" && mkdir -m 0700 "$tmp/o3"
pull "$tmp/s3" "$tmp/o3"
if [ $rc -eq 1 ] && [ "$nerr" -eq 1 ] && grep -q "group-writable (mode 0770).*run: chmod go-w $tmp/s3" <<<"$err" &&
   [ -z "$(ls -A "$tmp/s3")" ]; then
	pass "pull: a group-writable state dir is refused: $err"
else
	fail "pull: group-writable state dir: exit $rc: $err"
fi
mkdir -m 0700 "$tmp/s4" "$tmp/o4" && chown "$U" "$tmp/o4"
pull "$tmp/s4" "$tmp/o4"
if [ $rc -eq 1 ] && [ "$nerr" -eq 1 ] && grep -q "owned by uid $(id -u "$U").*run: chown 0 $tmp/o4" <<<"$err"; then
	pass "pull: an out dir owned by another user is refused: $err"
else
	fail "pull: out dir of $U: exit $rc: $err"
fi

# Ids at the end of their range: refused, never wrapped onto atoms-0000000000.pb.
mkdir -m 0700 "$tmp/s5" "$tmp/o5"
echo precious > "$tmp/o5/atoms-0000000000.pb"
: > "$tmp/o5/atoms-18446744073709551615.pb"
pull "$tmp/s5" "$tmp/o5"
if [ $rc -ne 0 ] && [ "$(cat "$tmp/o5/atoms-0000000000.pb")" = precious ] &&
   [ ! -e "$tmp/s5/state" ] && grep -q "pull ids are used up" <<<"$err"; then
	pass "pull: an atoms id of 2^64-1 is refused, nothing wraps"
else
	fail "pull: id 2^64-1: exit $rc, atoms-0 '$(cat "$tmp/o5/atoms-0000000000.pb")': $err"
fi
mkdir -m 0700 "$tmp/s5b" "$tmp/o5b"
echo precious > "$tmp/o5b/atoms-0000000000.pb"
: > "$tmp/o5b/atoms-99999999999999999999999.pb"	# past 2^64: parsed as the maximum
pull "$tmp/s5b" "$tmp/o5b"
if [ $rc -ne 0 ] && [ "$(cat "$tmp/o5b/atoms-0000000000.pb")" = precious ]; then
	pass "pull: an atoms id past 2^64 is refused, nothing wraps"
else
	fail "pull: id past 2^64: exit $rc: $err"
fi

# A corrupt state is saved under a name no earlier copy has.
mkdir -m 0700 "$tmp/s6" "$tmp/o6"
now=$(date +%s)
for t in $(seq $((now - 1)) $((now + 5))); do echo "evidence $t" > "$tmp/s6/state.corrupt-$t"; done
echo garbage > "$tmp/s6/state"
pull "$tmp/s6" "$tmp/o6"
kept=0
for t in $(seq $((now - 1)) $((now + 5))); do
	[ "$(cat "$tmp/s6/state.corrupt-$t")" = "evidence $t" ] && kept=$((kept + 1))
done
saved=$(grep -l '^garbage$' "$tmp/s6"/state.corrupt-* 2>/dev/null | wc -l)
if [ $rc -eq 0 ] && [ $kept -eq 7 ] && [ "$saved" -eq 1 ]; then
	pass "pull: a corrupt state is saved beside 7 earlier copies, none replaced"
else
	fail "pull: corrupt state: exit $rc, $kept of 7 earlier copies kept, $saved saved: $err"
fi

# ---- item 5: one bad object among dump's objects is skipped with one warning ----

objs=$tmp/bpf
mkdir -m 0755 "$objs" && cp "$B"/bpf/*.bpf "$objs"/
: > "$objs/empty.bpf"
echo "not an object" > "$objs/garbage.bpf"
ln -s "$objs/nonexistent" "$objs/dangling.bpf"
mkfifo "$objs/fifo.bpf"
run timeout 30 "$K" dump --obj-dir "$objs" --pin-dir "$PIN" --status-file "$STATUS"
warned=$(grep -c '^kstats dump: warning: .*\(empty\|garbage\|dangling\|fifo\)\.bpf: .*; skipped' "$tmp/err")
if [ $rc -eq 0 ] && grep -q '^CompactionDuration' <<<"$out" && [ "$warned" -eq 4 ] && [ "$nerr" -eq 4 ]; then
	pass "dump: an empty, a garbage, a dangling and a FIFO object: one warning each, the rest shown"
else
	fail "dump with bad objects: exit $rc, $warned warnings: $err"
fi

jq '.objects += [{"name":"garbage","path":"/nonexistent/garbage.bpf","outcome":"FAILED_OBJECT",
	"reason":"not an ELF object","critical":false,"programs":[],"maps":[]}]' "$STATUS" > "$tmp/bad.json"
run "$K" status --status-file "$tmp/bad.json"
if [ $rc -eq 0 ] && [ "$nerr" -eq 1 ] && grep -q '^kstats status: warning: garbage: FAILED_OBJECT: not an ELF object; skipped' <<<"$err" &&
   grep -q '^compaction  LOADED' <<<"$out"; then
	pass "status: a bad object file is one warning, the rest shown, exit 0"
else
	fail "status with a bad object: exit $rc: $err"
fi

# ---- item 7: status as a health check; messages that name the real cause ----

run "$K" status --status-file "$STATUS"
[ $rc -eq 0 ] && pass "status: healthy: exit 0" || fail "status: healthy: exit $rc: $err"
"$B/kstats-loader" --obj-dir "$B/bpf" --pin-dir "$PIN-gone" --run-dir "$tmp/run-gone" >/dev/null &&
	rm "$PIN-gone/map_compaction_$MAP"
run "$K" status --status-file "$tmp/run-gone/loader-status.json"
if [ $rc -eq 3 ] && [ "$nerr" -eq 1 ] && grep -q "1 map(s) of loaded objects are gone ($PIN-gone/map_compaction_$MAP); run kstats-loader" <<<"$err"; then
	pass "status: a loaded object's map gone: exit 3, names it"
else
	fail "status with a map gone: exit $rc: $err"
fi

prog=$(ls "$PIN"/prog_* 2>/dev/null | head -1)
run "$K" read --pin "$prog"
if [ $rc -eq 2 ] && [ "$nerr" -eq 1 ] && grep -q "$prog: not a map (a pinned BPF program)" <<<"$err"; then
	pass "read: a program pin: 'not a map', exit 2"
else
	fail "read of program pin $prog: exit $rc: $err"
fi
run "$K" read --pin "$tmp/victim"
if [ $rc -eq 2 ] && [ "$nerr" -eq 1 ] && grep -q "not on bpffs, so not a pinned map" <<<"$err"; then
	pass "read: a path outside bpffs: the real reason, exit 2"
else
	fail "read of a path outside bpffs: exit $rc: $err"
fi
for bad in /bin/true "$tmp/victim"; do
	run "$K" read --obj "$bad" --map "$MAP" --pin "$PIN/map_compaction_$MAP"
	if [ $rc -eq 2 ] && [ "$nerr" -eq 1 ] && grep -q "not a BPF object; pass the .bpf" <<<"$err" &&
	   ! grep -q "clang -g" <<<"$err"; then
		pass "read: --obj $bad: 'not a BPF object', one line"
	else
		fail "read --obj $bad: exit $rc: $err"
	fi
done
llvm-objcopy --remove-section .BTF "$OBJ" "$tmp/nobtf.bpf"
run "$K" read --obj "$tmp/nobtf.bpf" --map "$MAP" --pin "$PIN/map_compaction_$MAP"
if [ $rc -eq 1 ] && [ "$nerr" -eq 1 ] && ! grep -q '^libbpf:' <<<"$err" &&
   grep -q "a BPF object without readable BTF (.*); build it with clang -g" <<<"$err"; then
	pass "read: --obj without BTF: one line naming clang -g, libbpf's own lines silenced"
else
	fail "read --obj without BTF: exit $rc: $err"
fi

# A member with CAP_BPF lacks nothing the hint could name: root-only maps are skipped.
run as kstats "$K" status --status-file "$STATUS"
if [ $rc -eq 0 ] && grep -Eq 'compaction_start_map +root-only' <<<"$out" && ! grep -q 'group kstats' <<<"$err"; then
	pass "status as a kstats member: root-only start maps skipped, exit 0"
else
	fail "status as a kstats member: exit $rc: $err"
fi
run as kstats "$K" read --obj "$OBJ" --map compaction_start_map --pin "$PIN/map_compaction_compaction_start_map"
if [ $rc -eq 5 ] && [ "$nerr" -eq 1 ] && grep -q 'root-only' <<<"$err" && ! grep -q 'group kstats' <<<"$err"; then
	pass "read as a kstats member of a root-only map: says root-only, not 'group kstats'"
else
	fail "read as a kstats member of a root-only map: exit $rc: $err"
fi
run as "$U" "$K" read --obj "$OBJ" --map "$MAP" --pin "$PIN/map_compaction_$MAP"
if [ $rc -eq 5 ] && grep -q 'needs CAP_BPF and group kstats' <<<"$err"; then
	pass "read outside group kstats: the hint names the group"
else
	fail "read outside group kstats: exit $rc: $err"
fi
