#!/usr/bin/env bash
# test_selinux's guest (sepolicy/README.md): Debian 12 with
# selinux-policy-default and auditd (tests/system/image.sh selinux, labelled
# by setfiles at build time), systemd 252 as PID 1, Debian's 6.1 cloud
# kernel under qemu TCG booted "security=selinux enforcing=1".  Boot 1
# installs the package of make deb with dpkg -i (postinst loads the
# module); boot 2 checks it enforced (tests/selinux/guest.sh).  Prints
# "PASS|FAIL|SKIP: selinux: <check>" lines.
# Environment: SELINUX_CACHE (build/selinux-guest), KERNELS_CACHE
# (build/kernels), SELINUX_TIMEOUT (s per boot, 900), SELINUX_ENFORCING
# (1; 0 boots permissive, to collect every denial at once while writing
# the policy), SELINUX_KEEP=1 copies the console logs to the cache's last/.
set -u
cd "$(dirname "$0")/../.." || exit 1
T=selinux
cache=${SELINUX_CACHE:-build/selinux-guest}
kcache=${KERNELS_CACHE:-build/kernels}
timeout_s=${SELINUX_TIMEOUT:-900}
enforcing=${SELINUX_ENFORCING:-1}
build=${KSTATS_BUILD:-build/san}
work=
qpid=

say() { echo "$1: $T: $2"; }
skip() { say SKIP "$1"; exit 0; }
# shellcheck source=tests/system/host_lib.sh
. tests/system/host_lib.sh
cleanup() {
	[ -n "$qpid" ] && kill -9 "$qpid" 2>/dev/null
	if [ -n "$work" ] && [ -n "${SELINUX_KEEP:-}" ]; then
		rm -rf "$cache/last" && mkdir -p "$cache/last" && cp "$work"/*.log "$cache/last/"
	fi
	[ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ "$(id -u)" -eq 0 ] || skip "needs root (mmdebstrap, mke2fs -d of a root tree)"
for t in qemu-system-x86_64 qemu-img mmdebstrap mke2fs setfiles dpkg-deb gcc; do
	command -v "$t" >/dev/null || skip "no $t (make deps installs it)"
done
start=$(date +%s)
mkdir -p "$cache"
tests/system/image.sh "$cache" selinux >"$cache/image.out" 2>"$cache/image.err" &
ipid=$!
cloud_kernel "$kcache"
grep -q '^CONFIG_SECURITY_SELINUX=y' "$kcache/debian-6.1-cloud/config" ||
	skip "kernel $kernel has no SELinux (CONFIG_SECURITY_SELINUX)"

work=$(mktemp -d "/tmp/kstats-test-$$-selinux-XXXXXX") || exit 1
mkdir -p "$work/disk"
cached_deb "$cache" "$work"
cp "$(ls "$debdir"/kernelstats_*_amd64.deb | head -1)" "$work/disk/kernelstats.deb"
# An object the package does not have, with maps of its own (a loader
# test object); and the prog_load prober, static (its domain reads no
# shared library).
extra=$build/tests/bpf/loader_count.bpf
[ -f "$extra" ] || make -s --no-print-directory BUILD="$build" "$extra" >"$work/extra.log" 2>&1 ||
	{ say FAIL "cannot build $extra: $(tail -2 "$work/extra.log" | tr '\n' ' ')"; exit 1; }
cp "$extra" "$work/disk/extra.bpf"
# An object that crashes libbpf's parse (as test_system's): after it, the
# loader executes itself afresh as the next prober.
dpkg-deb --fsys-tarfile "$work/disk/kernelstats.deb" |
	tar -xO ./usr/lib/kernelstats/bpf/compaction.bpf >"$work/compaction.bpf" &&
python3 tests/lib/btf_crasher.py "$work/compaction.bpf" "$work/disk/crash.bpf" ||
	{ say FAIL "cannot make crash.bpf"; exit 1; }
gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -static -o "$work/disk/prog_load" \
	tests/selinux/prog_load.c || { say FAIL "cannot build tests/selinux/prog_load.c"; exit 1; }
cp tests/selinux/guest.sh tests/selinux/login.cil tests/system/guest_lib.sh "$work/disk/"
image_ready "$ipid" "$cache/image.out" "$cache/image.err"
echo "# selinux: the package and the image ready after $(($(date +%s) - start))s"
mke2fs -q -t ext4 -L systest -d "$work/disk" "$work/systest.img" 64M >/dev/null
qemu-img create -q -f qcow2 -F raw -b "$(realpath "$base")" "$work/run.qcow2"

boot() {	# phase
	local log=$work/$1.log t0 i
	t0=$(date +%s)
	qemu_start "$log" "$work/run.qcow2" "$work/systest.img" \
		"ro quiet systemd.show_status=0 fsck.mode=skip systemd.mask=getty-static.service security=selinux enforcing=$enforcing systest.phase=$1"
	for ((i = 0; i < timeout_s * 5; i++)); do
		kill -0 "$qpid" 2>/dev/null || break
		sleep 0.2
	done
	kill -9 "$qpid" 2>/dev/null
	wait "$qpid" 2>/dev/null
	qpid=
	sed -i 's/\r$//' "$log"
	if ! grep -q "^@@ BEGIN $1" "$log"; then
		say FAIL "boot $1: the guest's test did not start; console:"
		tail -30 "$log" | sed 's/^/# /'
		return 1
	fi
	verdicts "$log"
	grep -q "^@@ END $1" "$log" ||
		{ say FAIL "boot $1: the guest did not finish in ${timeout_s}s"; tail -20 "$log" | sed 's/^/# /'; }
	echo "# selinux: boot $1: $(($(date +%s) - t0))s in qemu; slowest steps (guest clock):"
	grep '^@@ T ' "$log" | sort -k3 -rn | head -4 | awk '{d = $3; $1 = $2 = $3 = $4 = ""; printf "#   %5.1fs %s\n", d, $0}'
}

boot install && boot boot
echo "# selinux: wall time $(($(date +%s) - start))s"
