#!/usr/bin/env bash
# Hostile layouts, clocks and files against kstats pull and kstats atoms
# (issue 26, items 1 and 5-8): a root pull on a layout owned by the pulling
# user creates nothing; clock steps neither age nor garble atoms (the
# KSTATS_CLOCK and KSTATS_BOOT_ID hooks of the test build, hooks/kstats,
# never the host clock); kstats atoms
# has bounded memory, reads regular files only and escapes what it prints.
# Runs as root; removes its user, pins and files at the end.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${KSTATS_BUILD:-build}
K=$B/kstats
KH=$B/hooks/kstats	# the test build: clock and boot id hooks (mk/pull_hooks.mk)
PIN=/sys/fs/bpf/kernelstats-test-$$-hpull
U=kst$$
PROTO=proto/kernelstats_atoms.proto
BOOT=00000000-0000-4000-8000-0000000000b1

. tests/lib/testuser.sh
testuser_setup "hostile pull" hpull protoc bpftool jq
[ -x "$KH" ] || { echo "FAIL: setup: build $B first"; exit 1; }
# encode FILE: the AtomList in text format on stdin, as an atoms file.
encode() {
	protoc --encode=kernelstats.AtomList "$PROTO" >"$1" ||
		{ fail "setup: protoc --encode of $1"; exit 1; }
}

# Links unpinned: only this test changes the map (bpftool), with fixed clocks.
testuser_load
rm -f "$PIN"/link_*
MAP=$PIN/map_compaction_compaction_duration_map
ID=$(bpftool -j map show pinned "$MAP" | jq .id) || { fail "setup: bpftool map show"; exit 1; }
# Up time 2 h ahead of the real one: the files of item 5 go 75 minutes back
# in this boot on a machine up for less (the hooked pulls take this clock).
NOWB=$(awk '{ printf "%.0f", ($1 + 7200) * 1e9 }' /proc/uptime)
NOWR=$(($(date +%s) * 1000000000))
cat >"$tmp/status.json" <<JSON
{"version":1,"objects":[{"name":"compaction","maps":[{"name":"compaction_duration_map",
 "pin":"$MAP","map_id":$ID,"created_boottime_ns":$((NOWB - 60000000000)),
 "created_realtime_ns":$((NOWR - 60000000000))}]}]}
JSON
chmod 0644 "$tmp/status.json"
set_bucket3() {	# the only key's bucket 3, the rest 0
	local hex="" i
	for i in $(seq 0 31); do
		if [ "$i" = 3 ]; then
			hex+=$(printf '%02x 00 00 00 00 00 00 00 ' "$1")
		else
			hex+="00 00 00 00 00 00 00 00 "
		fi
	done
	# shellcheck disable=SC2086
	bpftool map update pinned "$MAP" key hex 00 00 00 00 value hex $hex ||
		{ fail "setup: bpftool map update"; exit 1; }
}
pull() {	# pull STATE_DIR OUT_DIR [ARGS...]
	local s=$1 o=$2
	shift 2
	run timeout 60 "$K" pull --obj-dir "$B/bpf" --pin-dir "$PIN" \
		--status-file "$tmp/status.json" --state-dir "$s" --out-dir "$o" \
		--lock-timeout 5 "$@"
}
pull_at() {	# pull_at BOOT_NS:REAL_NS STATE_DIR OUT_DIR [ARGS...]: this boot, that clock
	KSTATS_BOOT_ID=$BOOT KSTATS_CLOCK=$1 K=$KH pull "${@:2}"
}

# ---- item 1: a root pull on the packaged layout creates nothing ----

# $tmp/lib/ks plays /var/lib/kernelstats, owned by the pulling user.
mkdir -m 0755 "$tmp/lib" && mkdir -m 0750 "$tmp/lib/ks" && chown "$U:$U" "$tmp/lib/ks"
pull "$tmp/lib/ks/state" "$tmp/lib/ks/atoms"
if [ $rc -eq 1 ] && [ "$nerr" -eq 1 ] && [ -z "$(ls -A "$tmp/lib/ks")" ] &&
   grep -q "^kstats pull: refusing $tmp/lib/ks/state: $tmp/lib/ks is owned by uid $(id -u "$U").*or run the pull as that user" <<<"$err"; then
	pass "pull: root on a layout owned by uid $(id -u "$U") refuses, nothing created"
else
	fail "pull: root on a user's layout: exit $rc, created '$(ls -A "$tmp/lib/ks" | tr '\n' ' ')': $err"
fi
run setpriv --reuid "$U" --regid kstats --clear-groups --inh-caps +bpf --ambient-caps +bpf -- \
	timeout 60 "$K" pull --obj-dir "$B/bpf" --pin-dir "$PIN" --status-file "$tmp/status.json" \
	--state-dir "$tmp/lib/ks/state" --out-dir "$tmp/lib/ks/atoms" --lock-timeout 5
if [ $rc -eq 0 ] && [ "$(stat -c %U "$tmp/lib/ks/state/lock")" = "$U" ]; then
	pass "pull: the owner's pull after root's refusal works"
else
	fail "pull as $U after root's refusal: exit $rc: $err"
fi

# ---- item 5: a forward clock step ages no atom file ----

# 75 files of this boot written in the last 75 minutes, their mtimes 8 days
# old: what a step of the clock 8 days forward makes of them.
mkdir -m 0700 "$tmp/s5" "$tmp/o5"
for i in $(seq 1 75); do
	f=$(printf '%s/o5/atoms-%010d.pb' "$tmp" "$i")
	echo "atom { pull_id: $i boot_id: \"$BOOT\" window_end_boottime_ns: $((NOWB - (76 - i) * 60000000000)) }" | encode "$f"
	touch -d '8 days ago' "$f"
done
pull_at $NOWB:$((NOWR + 8 * 86400 * 1000000000)) \
	"$tmp/s5" "$tmp/o5" --max-age 7d --max-files 0 --max-bytes 0
left=$(ls "$tmp/o5" | grep -c '^atoms-')
if [ $rc -eq 0 ] && [ "$left" -ge 75 ] && ! grep -q retention <<<"$err"; then
	pass "pull: 75 atom files minutes old survive a clock 8 days ahead (mtimes too)"
else
	fail "pull: clock 8 days ahead: exit $rc, $left of 75 files left: $err"
fi

# Up time ages files, across boots: an earlier boot's file that was 8 days
# old at that boot's last pull goes, its last one stays, though mtimes are new.
mkdir -m 0700 "$tmp/s5b" "$tmp/o5b"
echo "atom { boot_id: \"boot-a\" window_end_boottime_ns: 3600000000000 }" | encode "$tmp/o5b/atoms-0000000001.pb"
echo "atom { boot_id: \"boot-a\" window_end_boottime_ns: $((3600000000000 + 8 * 86400000000000)) }" |
	encode "$tmp/o5b/atoms-0000000002.pb"
echo "atom { boot_id: \"$BOOT\" window_end_boottime_ns: $((NOWB - 60000000000)) }" | encode "$tmp/o5b/atoms-0000000003.pb"
pull_at $NOWB:$NOWR "$tmp/s5b" "$tmp/o5b" --max-age 7d --max-files 0 --max-bytes 0
if [ $rc -eq 0 ] && [ ! -e "$tmp/o5b/atoms-0000000001.pb" ] && [ -e "$tmp/o5b/atoms-0000000002.pb" ] &&
   grep -q "retention removed 1 atom file" <<<"$err"; then
	pass "pull: a file up 8 days ago (an earlier boot) goes by --max-age 7d, the rest stay"
else
	fail "pull: up-time ages: exit $rc, left $(ls "$tmp/o5b" | tr '\n' ' '): $err"
fi

# ---- item 6: a backward clock step: sane windows, the step recorded ----

mkdir -m 0700 "$tmp/s6" "$tmp/o6"
set_bucket3 5
pull_at $NOWB:$NOWR "$tmp/s6" "$tmp/o6"
set_bucket3 9
pull_at $((NOWB + 60000000000)):$((NOWR + 60000000000 - 7200000000000)) "$tmp/s6" "$tmp/o6"
f6=$tmp/o6/atoms-0000000002.pb
if [ -f "$f6" ]; then
	protoc --decode=kernelstats.AtomList "$PROTO" <"$f6" >"$tmp/dec6"
	start=$(awk '/window_start_realtime_ns/ { print $2 }' "$tmp/dec6")
	end=$(awk '/window_end_realtime_ns/ { print $2 }' "$tmp/dec6")
	step=$(awk '/wall_clock_step_ns/ { print $2 }' "$tmp/dec6")
	run "$K" atoms "$f6"
	if [ "$end" -ge "$start" ] && [ $((end - start)) -eq 60000000000 ] &&
	   [ "$step" = -7200000000000 ] && grep -q '+ 60.000s  wall clock set -7200.000s in the window' <<<"$out"; then
		pass "pull: a clock set 2 h back: window end >= start, step -7200 s recorded and shown"
	else
		fail "pull: clock set back: start $start end $end step ${step:-none}: $(grep window <<<"$out")"
	fi
else
	fail "pull: clock set back: no second atoms file: $err"
fi
# Atoms written before this fix (or forged): no 2^64 ns windows.
echo "atom { boot_id: \"$BOOT\" window_start_realtime_ns: 1700007200000000000 window_end_realtime_ns: 1700000000000000000
       window_start_boottime_ns: 5000000000 window_end_boottime_ns: 4999500000 }" | encode "$tmp/back.pb"
run "$K" atoms "$tmp/back.pb"
if [ $rc -eq 0 ] && ! grep -q 18446744073 <<<"$out" &&
   grep -q '+ 0s (its boot-time end is 0.001s before its start)  wall clock set -7200.000s' <<<"$out"; then
	pass "atoms: a window that ends before it starts is shown as such, signed"
else
	fail "atoms: backward window: exit $rc: $(grep window <<<"$out")"
fi

# ---- item 7: kstats atoms has bounded memory per input ----

# One record of 10 M two-byte unknown fields (20 MB); 5 MB of 4000-byte ones.
python3 - "$tmp" <<'EOF'
import sys
def varint(n):
    out = b''
    while True:
        b, n = n & 0x7f, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])
for name, count, times in (('unknown20m.pb', 10 << 20, 1), ('unknown4k.pb', 2000, 1250)):
    body = b'\x78\x00' * count          # field 15, varint 0
    open(f'{sys.argv[1]}/{name}', 'wb').write((b'\x0a' + varint(len(body)) + body) * times)
EOF
maxrss() {	# maxrss CMD...: sets rc, err and rss (KiB) of CMD
	# ASan keeps 256 MB of freed blocks by default: not kstats' memory.
	ASAN_OPTIONS=${ASAN_OPTIONS:-}:quarantine_size_mb=8 /usr/bin/time -f 'rss %M' -o "$tmp/rss" "$@" >/dev/null 2>"$tmp/err"
	rc=$?
	err=$(cat "$tmp/err")
	rss=$(awk '/^rss/ { print $2 }' "$tmp/rss")
}
if [ -x /usr/bin/time ]; then
	maxrss "$K" atoms "$tmp/unknown20m.pb"
	if [ $rc -eq 1 ] && [ "${rss:-0}" -lt 200000 ] &&
	   grep -q "a record over 4 KiB, the limit of one atom" <<<"$err"; then
		pass "atoms: a 20 MB record of unknown fields: refused in $rss KiB: $err"
	else
		fail "atoms: 20 MB record: exit $rc, $rss KiB: $err"
	fi
	maxrss timeout 60 "$K" atoms "$tmp/unknown4k.pb"
	if [ $rc -eq 0 ] && [ "${rss:-0}" -lt 100000 ]; then
		pass "atoms: 5 MB of 4000-byte records of unknown fields decode in $rss KiB"
	else
		fail "atoms: 4000-byte records: exit $rc, $rss KiB: $err"
	fi
	maxrss sh -c "head -c 100000000 /dev/zero | timeout 30 $K atoms -"
	if [ "${rss:-0}" -lt 400000 ] && grep -q "over 64 MiB, the limit of one atoms file" <<<"$err"; then
		pass "atoms: 100 MB on stdin stops at the 64 MiB limit ($rss KiB)"
	else
		fail "atoms: 100 MB on stdin: $rss KiB: $err"
	fi
else
	echo "SKIP: atoms memory: no /usr/bin/time to measure RSS"
fi
run timeout 10 "$K" atoms /dev/zero
if [ $rc -eq 1 ] && [ "$nerr" -eq 1 ] && grep -q "/dev/zero: a symlink or not a regular file" <<<"$err"; then
	pass "atoms: /dev/zero is refused at once"
else
	fail "atoms: /dev/zero: exit $rc: $err"
fi

# ---- item 8: kstats atoms: no FIFO hang, no symlink, nothing raw ----

mkdir -m 0700 "$tmp/o8"
printf 'atom { pull_id: 1 boot_id: "\\033[2J\\033]0;owned\\007\\nCompactionDuration (atom 100003) pull 9 boot forged" }' |
	encode "$tmp/o8/atoms-0000000001.pb"
mkfifo "$tmp/o8/atoms-0000000002.pb"
echo 'atom { pull_id: 77 boot_id: "secret" }' | encode "$tmp/secret.pb"
chmod 0600 "$tmp/secret.pb"
ln -s "$tmp/secret.pb" "$tmp/o8/atoms-0000000003.pb"
run timeout 20 "$K" atoms --out-dir "$tmp/o8"
if [ $rc -eq 1 ] && [ "$nerr" -eq 2 ] && ! grep -q secret <<<"$out" &&
   grep -q "atoms-0000000002.pb: a symlink or not a regular file; pass the atoms file itself" <<<"$err" &&
   grep -q "atoms-0000000003.pb: a symlink or not a regular file" <<<"$err"; then
	pass "atoms: a FIFO and a symlink named like atoms files: one line each, no hang"
else
	fail "atoms: FIFO and symlink: exit $rc (124: hung): $err"
fi
if ! grep -q $'\e' "$tmp/out" && [ "$(grep -c '^CompactionDuration' "$tmp/out")" -eq 0 ] &&
   grep -q 'boot \\x1b\[2J\\x1b\]0;owned\\x07\\x0aCompactionDuration' "$tmp/out"; then
	pass "atoms: a boot id with escapes and a newline is printed escaped, one line"
else
	fail "atoms: boot id printed raw: $(grep -a boot "$tmp/out" | cat -v)"
fi
