#!/usr/bin/env bash
# The installed system under a real systemd (doc/system-test.md): a Debian
# bookworm guest (tests/system/image.sh) with systemd 252 as PID 1, Debian's
# 6.1 cloud kernel under qemu TCG, the package of make deb installed with
# dpkg -i.  Three systemd boots (install, upgrade, remove and purge); beside
# the last two, on a copy of the installed disk, the power cuts (qemu killed
# while pulls run); then the checks that span boots.  Prints
# "PASS|FAIL|SKIP: system: <check>" lines and "# system:" cost lines.
# Usage: tests/system/run.sh    Environment: SYSTEM_CACHE (build/system),
# KERNELS_CACHE (build/kernels), SYSTEM_CUTS (20), SYSTEM_TIMEOUT (s, 900).
set -u
cd "$(dirname "$0")/../.." || exit 1
T=system
cache=${SYSTEM_CACHE:-build/system}
kcache=${KERNELS_CACHE:-build/kernels}
cuts=${SYSTEM_CUTS:-20}
timeout_s=${SYSTEM_TIMEOUT:-900}	# a systemd boot took 624 s on a host with load 13
cut_wait_s=120	# a cut boot starts its second pull in about 10 s
work=
qpid=
lane=

say() { echo "$1: $T: $2"; }
skip() { say SKIP "$1"; exit 0; }
# shellcheck source=tests/system/host_lib.sh
. tests/system/host_lib.sh
cleanup() {
	[ -n "$qpid" ] && kill -9 "$qpid" 2>/dev/null
	[ -n "$lane" ] && kill "$lane" 2>/dev/null && wait "$lane"
	if [ -n "$work" ] && [ -n "${SYSTEM_KEEP:-}" ]; then
		rm -rf "$cache/last"
		mkdir -p "$cache/last" && cp "$work"/*.log* "$work"/*.tab "$cache/last/" 2>/dev/null
	fi
	[ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ "$(id -u)" -eq 0 ] || skip "needs root (mmdebstrap, mke2fs -d of a root tree)"
for t in qemu-system-x86_64 qemu-img mmdebstrap mke2fs protoc dpkg-deb; do
	command -v "$t" >/dev/null || skip "no $t (make deps installs it)"
done

start=$(date +%s)
# The base image builds (network, dpkg) while the kernel is fetched and the
# package built (compilers): on a fresh machine they overlap.
mkdir -p "$cache"
tests/system/image.sh "$cache" >"$cache.out" 2>"$cache.err" &
ipid=$!
cloud_kernel "$kcache"

work=$(mktemp -d "/tmp/kstats-test-$$-system-XXXXXX") || exit 1
mkdir -p "$work/disk"

# The package (SYSTEM_DEB=file installs that one instead).
if [ -n "${SYSTEM_DEB:-}" ]; then
	debdir=$(dirname "$SYSTEM_DEB")
else
	cached_deb "$cache" "$work"
fi
image_ready "$ipid" "$cache.out" "$cache.err"
echo "# system: the package and the base image ready after $(($(date +%s) - start))s"
v1=${SYSTEM_DEB:-$(ls "$debdir"/kernelstats_*_amd64.deb | head -1)}
cp "$v1" "$work/disk/v1.deb"
# The second build an upgrade installs: the same files under a newer version.
dpkg-deb -R "$v1" "$work/v2"
sed -i 's/^Version: .*/&+systest2/' "$work/v2/DEBIAN/control"
dpkg-deb -b "$work/v2" "$work/disk/v2.deb" >/dev/null
# An object that crashes libbpf's parse, for the guest's crash_unit check.
python3 tests/lib/btf_crasher.py "$work/v2/usr/lib/kernelstats/bpf/compaction.bpf" \
	"$work/disk/crash.bpf" || { say FAIL "cannot make crash.bpf"; exit 1; }
rm -rf "$work/v2"
cp tests/system/guest.sh tests/system/guest_lib.sh tests/system/cut.sh "$work/disk/"
mke2fs -q -t ext4 -L systest -d "$work/disk" "$work/systest.img" 64M >/dev/null
qemu-img create -q -f qcow2 -F raw -b "$(realpath "$base")" "$work/run.qcow2"

# One boot; the console log in $work/<name>.log.  With kill_after (a
# fraction), qemu is killed that much of the boot's first pull after its
# second pull started.
boot() {	# name disk cmdline [kill_after]
	local name=$1 disk=$2 append=$3 kill_after=${4:-} log=$work/$1.log t0 i
	t0=$(date +%s%N) ticks=0
	: >"$log"
	qemu_start "$log" "$disk" "$work/systest.img" "trace_event=compaction:mm_compaction_end $append"
	if [ -n "$kill_after" ]; then
		for ((i = 0; i < cut_wait_s * 10; i++)); do
			grep -q '^@@ PRE 2 ' "$log" && break
			kill -0 "$qpid" 2>/dev/null || break
			sleep 0.1
		done
		sleep "$(pull_secs "$log" "$kill_after")"
		cpu_ticks
		kill -9 "$qpid" 2>/dev/null
	else
		for ((i = 0; i < timeout_s * 10; i++)); do
			kill -0 "$qpid" 2>/dev/null || break
			((i % 10)) || cpu_ticks
			sleep 0.1
		done
		kill -9 "$qpid" 2>/dev/null
	fi
	wait "$qpid" 2>/dev/null
	qpid=
	sed -i 's/\r$//' "$log"
	echo "$(( ($(date +%s%N) - t0) / 1000000 )) $ticks" >"$log.ms"
}
# qemu's CPU time so far (user + system, clock ticks): what a boot costs
# whatever else the host runs.
ticks=0
cpu_ticks() {
	local t
	t=$(awk '{print $14 + $15}' "/proc/$qpid/stat" 2>/dev/null) && ticks=$t
}

# A cut boot that printed nothing hung in the emulator before the kernel
# reached init (seen twice in 14 boots under qemu 7.2 TCG, before -cx16):
# the same disk boots once more, said on an INFO line; the checks judge
# the boot that ran.
cut_boot() {	# name disk cmdline [kill_after]
	boot "$@"
	grep -q '^@@ ' "$work/$1.log" && return
	echo "# system: boot $1 printed nothing in ${cut_wait_s}s (emulator hang); booted again"
	boot "$@"
}

systemd_boot() {	# phase
	# No fsck of the root fs and no gettys on the virtual consoles (Debian
	# starts them when dbus is missing): seconds of boot under TCG.
	boot "$1" "$work/run.qcow2" "ro quiet systemd.show_status=0 fsck.mode=skip systemd.mask=getty-static.service systest.phase=$1"
	if ! grep -q "^@@ BEGIN $1" "$work/$1.log"; then
		say FAIL "boot $1: the guest's test did not start; console:"
		tail -30 "$work/$1.log" | sed 's/^/# /'
		return 1
	fi
	verdicts "$work/$1.log"
	grep -q "^@@ END $1" "$work/$1.log" ||
		{ say FAIL "boot $1: the guest did not finish in ${timeout_s}s"; tail -20 "$work/$1.log" | sed 's/^/# /'; }
	say PASS "boot $1: $(sed -n 's/^@@ BEGIN [a-z]* //p' "$work/$1.log"), $(( $(cut -d' ' -f1 "$work/$1.log.ms") / 1000 ))s in qemu"
	boot_cost "$1"
}

# What a systemd boot cost: host wall and qemu CPU time, and from the
# guest's clock the boot, the test's steps (the slowest five) and shutdown.
boot_cost() {	# name
	local ms tk
	read -r ms tk <"$work/$1.log.ms"
	awk -v n="$1" -v ms="$ms" -v tk="$tk" '
		$1 != "@@" || $2 != "T" {next}
		/ boot finished: / {b = $4; st = $0; sub(/.*Startup finished in /, "", st)}
		/ end$/ {e = $4}
		/ shutdown pull done$/ {sd = $4}
		END {
			printf "# system: boot %s: %.0fs wall, qemu %.0fs CPU; guest: boot %s; test %.0fs", n, ms / 1000, tk / 100, st, e - b
			if (sd) printf ", shutdown pull %.0fs after", sd - e
			printf "\n"
		}' "$work/$1.log"
	grep '^@@ T ' "$work/$1.log" | grep -v ' boot finished: \| end$\| shutdown pull done$' |
		sort -k3 -rn | head -6 | awk '{d = $3; $1 = $2 = $3 = $4 = ""; printf "#   %5.1fs %s\n", d, $0}'
}

# What the cut boots cost on average: host wall and qemu CPU time, and from
# the guest's clock: init started, the loader done, one loop (compaction,
# count, pull).
cut_cost() {
	local f ms tk
	for f in "$work"/cut*.log; do
		read -r ms tk <"$f.ms"
		awk -v ms="$ms" -v tk="$tk" '$1 == "@@" && $2 == "T" {
				if ($5 == "init") i = $4; else if ($5 == "loaded") l = $4
				else if ($5 == "pull") {if (p) {pd += $4 - p; pn++} p = $4}
			}
			END {print ms / 1000, tk / 100, i ? i : "-", l ? l - i : "-", pn ? pd / pn : "-"}' "$f"
	done | awk '{w += $1; c += $2; n++
			if ($3 != "-") {i += $3; ni++}
			if ($4 != "-") {l += $4; nl++}
			if ($5 != "-") {p += $5; np++}}
		END {printf "# system: %d cut boots, each on average: %.1fs wall, qemu %.1fs CPU; guest: init at %.1fs, loader %.1fs, a loop %.1fs\n",
			n, w / n, c / n, ni ? i / ni : 0, nl ? l / nl : 0, np ? p / np : 0}'
}

sum_for_boot() {	# atoms_table boot_id
	awk -v b="$2" '$3 == b {s += $4} END {print s + 0}' "$1"
}

# SYSTEM_PHASES=explore: one boot that tries sandbox directives (development).
if [ -n "${SYSTEM_PHASES:-}" ]; then
	for p in $SYSTEM_PHASES; do systemd_boot "$p"; done
	exit 0
fi

# Seconds for a fraction of a cut boot's first pull, as the guest's clock
# timed it (under TCG the host's: the cut point follows the host's load).
pull_secs() {	# log fraction
	tr -d '\r' <"$1" | awk -v f="$2" '$1 == "@@" && $2 == "PRE" && $3 == 1 {s = $5}
		$1 == "@@" && $2 == "T" && $5 == "pull" && $6 == 1 {e = $4}
		END {printf "%.2f", f * (s && e ? e - s : 1)}'
}

# The power cuts: a chain of cut boots on a copy of the installed disk, then
# a boot that pulls and prints every atoms file.
power_cuts() {
	local c t0
	t0=$(date +%s)
	trap '[ -n "$qpid" ] && kill -9 "$qpid" 2>/dev/null' EXIT
	trap 'exit 143' TERM
	for ((c = 1; c <= cuts; c++)); do
		cut_boot "cut$c" "$work/cut.qcow2" "rw init=/usr/local/sbin/systest-cut systest.cut=loop" \
			"$(awk -v s="$RANDOM" 'BEGIN {srand(s); printf "%.3f", rand() * 1.2}')"
	done
	cut_boot cutfinal "$work/cut.qcow2" "rw init=/usr/local/sbin/systest-cut systest.cut=final"
	echo "# system: power cuts: $(($(date +%s) - t0))s wall"
	cut_cost
	rm -f "$work/cut.qcow2"
}

# --- the systemd boots; the power cuts run beside upgrade and remove ---
# (one qemu each: TCG runs a guest CPU on one host thread).
systemd_boot install
cp "$work/run.qcow2" "$work/cut.qcow2"
power_cuts >"$work/cuts.out" 2>&1 &
lane=$!
systemd_boot upgrade
systemd_boot remove
wait "$lane"
lane=
cat "$work/cuts.out"

# --- checks across boots ---
tests/system/atoms.sh "$work/remove.log" "$work/atoms" >"$work/atoms.tab"
if grep -q UNDECODABLE "$work/atoms.tab"; then
	say FAIL "atoms: every file decodes: $(grep UNDECODABLE "$work/atoms.tab" | tr '\n' ' ')"
else
	say PASS "atoms: all $(ls "$work/atoms"/*.b64 2>/dev/null | wc -l) files of the systemd boots decode (protoc)"
fi
for p in install upgrade remove; do
	b=$(sed -n 's/^@@ BOOT //p' "$work/$p.log")
	want=$(sed -n "s/^.*@@ COUNT $b //p" "$work/$p.log" | tail -1)
	if [ -z "$want" ]; then
		# install and upgrade print theirs after the shutdown pull.
		want=$(sed -n "s/^.*@@ COUNT $b //p" "$work"/*.log | tail -1)
	fi
	got=$(sum_for_boot "$work/atoms.tab" "$b")
	what="boot $p: the atoms of boot_id ${b:0:8} sum to tracefs' mm_compaction_end count"
	[ "$p" = remove ] && what="$what (dpkg -r pulled before unloading)" ||
		what="$what (after the shutdown pull)"
	if [ -n "$want" ] && [ "$want" -gt 0 ] && [ "$got" = "$want" ]; then
		say PASS "$what: $got = $want"
	else
		say FAIL "$what: atoms $got, tracefs ${want:-not reported}"
	fi
done

tests/system/cuts.sh "$work" "$cuts"
echo "# system: wall time $(($(date +%s) - start))s"
