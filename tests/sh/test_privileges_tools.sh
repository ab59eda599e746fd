#!/usr/bin/env bash
# The privilege model through the real tools: kstats read/dump as a
# throwaway user with only CAP_BPF (setpriv), inside and outside group
# kstats; the loader refusing objects that others could have written; and
# the files kstats pull creates.  Runs as root; removes its user at the end.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${KSTATS_BUILD:-build}
PIN=/sys/fs/bpf/kernelstats-test-$$-privsh
OBJ=$B/bpf/compaction.bpf
MAP=compaction_duration_map
MAP_PIN=$PIN/map_compaction_$MAP

. tests/lib/testuser.sh
# make install creates group kstats; the throwaway user gets its own group.
testuser_setup privileges privsh
testuser_load

# The capabilities really are CAP_BPF alone (bit 39), effective.
caps=$(as "$U" grep -E '^Cap(Eff|Prm)' /proc/self/status | awk '{print $2}' | sort -u)
if [ "$caps" = 0000008000000000 ]; then
	pass "the test user runs with exactly CAP_BPF"
else
	fail "the test user's capabilities are '$caps', want only CAP_BPF"
fi

# Outside group kstats: CAP_BPF does not get past the pins' file modes.
out=$(as "$U" "$B/kstats" read --obj "$OBJ" --map "$MAP" --pin "$MAP_PIN" 2>&1)
rc=$?
if [ $rc -eq 5 ] && grep -q 'group kstats' <<<"$out"; then
	pass "outside kstats, CAP_BPF: kstats read is denied (exit 5) and names the fix"
else
	fail "outside kstats, CAP_BPF: kstats read gave $rc: $out"
fi
out=$(as "$U" "$B/kstats" dump --obj-dir "$B/bpf" --pin-dir "$PIN" 2>&1)
rc=$?
if [ $rc -eq 5 ] && grep -q 'group kstats' <<<"$out"; then
	pass "outside kstats, CAP_BPF: kstats dump is denied and names the fix"
else
	fail "outside kstats, CAP_BPF: kstats dump gave $rc: $out"
fi

# A member (Group=kstats, as in the unit) reads what root reads.
root_out=$("$B/kstats" read --obj "$OBJ" --map "$MAP" --pin "$MAP_PIN" 2>&1)
out=$(as kstats "$B/kstats" read --obj "$OBJ" --map "$MAP" --pin "$MAP_PIN" 2>&1)
rc=$?
if [ $rc -eq 0 ] && [ "$(head -1 <<<"$out")" = "$(head -1 <<<"$root_out")" ] &&
   [ "$(wc -l <<<"$out")" = "$(wc -l <<<"$root_out")" ]; then
	pass "in kstats, CAP_BPF: kstats read gives root's columns and rows"
else
	fail "in kstats, CAP_BPF: kstats read gave $rc: $out"
fi
out=$(as kstats "$B/kstats" dump --obj-dir "$B/bpf" --pin-dir "$PIN" 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q '^CompactionDuration' <<<"$out"; then
	pass "in kstats, CAP_BPF: kstats dump shows CompactionDuration"
else
	fail "in kstats, CAP_BPF: kstats dump gave $rc: $out"
fi

# systemd mounts bpffs with mode=0700, which stops members at /sys/fs/bpf.
# The unit's fix (doc/privileges.md): TemporaryFileSystem=/sys/fs/bpf plus
# BindReadOnlyPaths=/sys/fs/bpf/kernelstats.  Replayed with mount(8) in a
# private mount namespace, on a private bpffs, both gone when it exits.
ns_script=$(cat <<EOF
set -u
view=$tmp/ns-bpf keep=$tmp/ns-keep
mkdir \$view \$keep && mount -t bpf -o mode=0700 bpf \$view || exit 1
"$B/kstats-loader" --obj-dir "$B/bpf" --pin-dir \$view/kernelstats --run-dir $tmp/ns-run >/dev/null || exit 1
read_it() {
	setpriv --reuid "$U" --regid kstats --clear-groups --inh-caps +bpf \
		--ambient-caps +bpf -- "$B/kstats" read --obj "$OBJ" --map "$MAP" \
		--pin \$view/kernelstats/map_compaction_$MAP 2>&1
}
if read_it | grep -q 'Permission denied'; then
	echo "PASS: bpffs mounted 0700 (as systemd does) keeps members out"
else
	echo "FAIL: bpffs mounted 0700 let a member in"
fi
mount --bind \$view/kernelstats \$keep &&
	mount -t tmpfs -o mode=0755 tmpfs \$view && mkdir \$view/kernelstats &&
	mount --bind \$keep \$view/kernelstats &&
	mount -o remount,bind,ro \$view/kernelstats || exit 1
if out=\$(read_it); then
	echo "PASS: a 0755 tmpfs over bpffs plus a read-only bind of the pin directory lets members read"
else
	echo "FAIL: through the read-only bind: \$out"
fi
EOF
)
if command -v unshare >/dev/null; then
	unshare -m --propagation private bash -c "$ns_script" ||
		fail "private mount namespace: setup failed"
else
	echo "SKIP: bpffs mode 0700: no unshare"
fi

# load DIR TAG: runs the loader on DIR into its own pin dir; sets out, rc, pins.
load() {
	out=$("$B/kstats-loader" --obj-dir "$1" --pin-dir "$PIN-$2" --run-dir "$tmp/run-$2" 2>&1)
	rc=$?
	pins=$(find "$PIN-$2" -name 'map_*' 2>/dev/null | wc -l)
	compaction_pins=$(find "$PIN-$2" -name 'map_compaction_*' 2>/dev/null | wc -l)
}

objs=$tmp/bpf
mkdir -m 0755 "$objs" && cp "$B"/bpf/*.bpf "$objs"/ && chmod 0644 "$objs"/*.bpf ||
	{ fail "setup: cannot copy the objects to $objs"; exit 1; }
load "$objs" ok
if [ $rc -eq 0 ] && [ "$pins" -gt 0 ]; then
	pass "a root-owned 0755 object directory loads"
else
	fail "the trusted copy did not load ($rc): $out"
fi

# The loader unit's CapabilityBoundingSet: these three suffice, each is needed.
loader_caps="bpf perfmon chown"
with_caps() {
	local set=-all c
	for c in $1; do set+=",+$c"; done
	out=$(setpriv --inh-caps=-all --bounding-set "$set" -- "$B/kstats-loader" \
		--obj-dir "$B/bpf" --pin-dir "$PIN-caps-${1// /-}" \
		--run-dir "$tmp/run-caps-${1// /-}" 2>&1)
	rc=$?
}
with_caps "$loader_caps"
if [ $rc -eq 0 ] && grep -q 'compaction .*LOADED' <<<"$out"; then
	pass "the loader works with only CAP_BPF, CAP_PERFMON and CAP_CHOWN"
else
	fail "the loader with only $loader_caps: exit $rc: $out"
fi
# Without one: the run fails, or (CAP_PERFMON) every tracing object does.
for drop in $loader_caps; do
	with_caps "${loader_caps/$drop/}"
	if [ $rc -ne 0 ] || ! grep -q 'LOADED' <<<"$out"; then
		pass "the loader fails without CAP_${drop^^}"
	else
		fail "the loader succeeded without CAP_${drop^^}: the unit grants too much"
	fi
done

chmod 0775 "$objs"
load "$objs" dir
if [ $rc -eq 3 ] && [ "$pins" -eq 0 ] && [ "$(wc -l <<<"$out")" -eq 1 ] &&
   grep -q "group-writable (mode 0775).*run: chmod go-w $objs" <<<"$out"; then
	pass "a group-writable object directory is refused: $out"
else
	fail "group-writable object directory: exit $rc, $pins pins: $out"
fi
chmod 0755 "$objs"

chmod 0666 "$objs/compaction.bpf"
load "$objs" file
if [ $rc -eq 0 ] && [ "$compaction_pins" -eq 0 ] &&
   grep -q "compaction .*FAILED_OBJECT: .*world-writable (mode 0666)" <<<"$out"; then
	pass "a world-writable object file is refused"
else
	fail "world-writable object file: exit $rc, $compaction_pins compaction pins: $out"
fi
chmod 0644 "$objs/compaction.bpf"

chown "$U" "$objs/compaction.bpf"
load "$objs" owner
if [ $rc -eq 0 ] && [ "$compaction_pins" -eq 0 ] &&
   grep -q "FAILED_OBJECT: .*owned by uid $(id -u "$U"), not root" <<<"$out"; then
	pass "an object file owned by another user is refused"
else
	fail "object owned by $U: exit $rc, $compaction_pins compaction pins: $out"
fi
chown root "$objs/compaction.bpf"

# State and atoms: created by the service user, group kstats, under the
# unit's UMask=0027, never writable by the group nor readable by others.
if ! help=$("$B/kstats" pull --help 2>&1); then
	echo "SKIP: kstats pull files: kstats has no pull command in this tree"
	exit 0
fi
state_opt=$(grep -o -- '--state[a-z-]*' <<<"$help" | head -1)
atoms_opt=$(grep -o -E -- '--(atoms|out)[a-z-]*' <<<"$help" | head -1)
if [ -z "$state_opt" ] || [ -z "$atoms_opt" ]; then
	echo "SKIP: kstats pull files: no --state*/--atoms* option in kstats pull --help"
	exit 0
fi
var=$tmp/var
mkdir -m 0750 "$var" && chown "$U:kstats" "$var"
out=$(umask 0027 && as kstats "$B/kstats" pull --obj-dir "$B/bpf" --pin-dir "$PIN" \
	"$state_opt" "$var/state" "$atoms_opt" "$var/atoms" 2>&1)
rc=$?
files=$(find "$var" -mindepth 1 | wc -l)
bad=$(find "$var" -mindepth 1 \( ! -user "$U" -o ! -group kstats -o -perm /0027 \) \
	-printf '%p %u:%g %m\n')
if [ $rc -eq 0 ] && [ "$files" -gt 0 ] && [ -z "$bad" ]; then
	pass "kstats pull creates its $files state and atom files $U:kstats, mode <= 0750"
else
	fail "kstats pull: exit $rc, $files files, wrong owner or mode: ${bad:-$out}"
fi
