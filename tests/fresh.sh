#!/usr/bin/env bash
# make test-fresh: the README's first command as a new user runs it, on a
# fresh Debian bookworm root (mmdebstrap minbase plus git and make, from
# the machine's own bookworm sources) with this kernel's /proc, /dev, a
# sysfs, a bpffs of its own and tracefs, in a private mount namespace.
# `make run` in a clone of the committed REV must: install about the
# packages building and running need and none of the lab's, leave the
# root's apt sources, keys and architectures as they were, and print a
# real CompactionDuration histogram.  Slow (minutes): not in make test;
# .ci/run runs it.  The root is removed and its mounts go, pass or fail.
# Usage: tests/fresh.sh [REPO [REV]]   (default: this checkout, HEAD)
# Exit: 0 every check passed or a SKIP, 1 a check failed.
set -u
cd "$(dirname "$0")/.." || exit 1
repo=${1:-$PWD} rev=${2:-HEAD}
# What building and running need (issue 43), written here, not taken from
# the Makefile: make run may add a few packages to its closure, no more.
minimal="clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config
	 libprotobuf-c-dev protobuf-c-compiler libjson-c-dev gcc"
margin=5
lab='^(qemu-|prometheus|lintian|debhelper|openjdk-|mmdebstrap|valgrind|libcmocka|.*aarch64-linux-gnu|.*-cross$)'
fails=0

check() {	# name, then a command that must succeed
	local name=$1
	shift
	if "$@"; then echo "PASS: $name"; else echo "FAIL: $name"; fails=$((fails + 1)); fi
}

[ "$(id -u)" = 0 ] || { echo "SKIP: fresh: needs root (mmdebstrap, chroot, mounts)"; exit 0; }
for tool in mmdebstrap unshare chroot git; do
	command -v $tool >/dev/null || { echo "SKIP: fresh: no $tool (make test installs it)"; exit 0; }
done
[ -r /sys/kernel/btf/vmlinux ] || { echo "SKIP: fresh: no /sys/kernel/btf/vmlinux"; exit 0; }
sha=$(git -C "$repo" rev-parse --verify "$rev^{commit}") ||
	{ echo "FAIL: fresh: no commit $rev in $repo"; exit 1; }
sources=$(tests/kernels/apt.sh sources 2>&1) || { echo "SKIP: fresh: $sources"; exit 0; }
# A stock install's suites: not backports, even where this machine has it.
mapfile -t mirrors < <(grep -v ' bookworm-backports ' <<<"$sources")

# Not under build/: make would read the root's *.d files as dependencies.
root=$(mktemp -d "/tmp/kstats-test-$$-fresh-XXXXXX") && chmod 755 "$root" || exit 1
log=$root.log
trap 'rm -rf --one-file-system "$root" "$log"' EXIT
trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
trap 'exit 143' TERM

t0=$SECONDS
if ! mmdebstrap --mode=root --variant=minbase --include=git,make bookworm "$root" \
	"${mirrors[@]}" >"$log" 2>&1; then
	if grep -qiE 'could not resolve|failed to fetch|temporary failure|unable to connect' "$log"; then
		echo "SKIP: fresh: offline? $(grep -m1 -iE 'could not resolve|failed to fetch|temporary failure|unable to connect' "$log")"
		exit 0
	fi
	echo "FAIL: fresh: mmdebstrap failed"
	tail -20 "$log"
	exit 1
fi
echo "# fresh root built in $((SECONDS - t0)) s"
git clone -q --no-hardlinks "$repo" "$root/root/kernelstats" &&
	git -C "$root/root/kernelstats" checkout -q "$sha" ||
	{ echo "FAIL: fresh: cannot clone $repo into the root"; exit 1; }

packages() { chroot "$root" dpkg-query -W -f='${db:Status-Status} ${Package}\n' | awk '$1 == "installed" {print $2}' | sort; }
before=$(packages)
state=$(tests/host_state.sh "$root")
host=$(tests/host_state.sh)
cp "$root/var/lib/dpkg/status" "$root/var/tmp/status.fresh"

# The namespace's mounts go with it; the bpffs is a new instance, so its
# pins (make run's /sys/fs/bpf/kernelstats-demo) are the root's alone.
t0=$SECONDS
unshare -m --propagation private bash -c '
	set -e
	r=$1
	mount -t proc proc "$r/proc"
	mount -t sysfs sysfs "$r/sys"
	mount -t bpf bpf "$r/sys/fs/bpf"
	mount -t tracefs nodev "$r/sys/kernel/tracing"
	mount --rbind /dev "$r/dev"
	mount -t tmpfs tmpfs "$r/run"
	set +e
	chroot "$r" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
		bash -c "cd /root/kernelstats && make run"
	rc=$?
	chroot "$r" /root/kernelstats/build/kstats-loader --unload --obj-dir /run/kernelstats-demo/bpf \
		--pin-dir /sys/fs/bpf/kernelstats-demo --run-dir /run/kernelstats-demo >/dev/null 2>&1
	exit $rc' fresh "$root" >"$log" 2>&1
rc=$?
secs=$((SECONDS - t0))
installed=$(comm -13 <(echo "$before") <(packages))
n=$(grep -c . <<<"$installed")
# The closure of the minimal set in the fresh root, without Recommends
# (make run left the package lists).
need=$(chroot "$root" apt-get -s -o Debug::NoLocking=1 -o Dir::State::status=/var/tmp/status.fresh \
	install --no-install-recommends $minimal 2>/dev/null | grep -c '^Inst ')
echo "# make run: $secs s, installed $n packages (the minimal set's closure: $need)"

check "make run in a fresh bookworm root exits 0 ($secs s)" [ $rc -eq 0 ]
check "it installs $n packages: at most $margin more than the $need of building and running" \
	[ "$need" -gt 0 -a "$n" -le $((need + margin)) ]
lab_pkgs=$(grep -E "$lab" <<<"$installed" | tr '\n' ' ')
check "none for testing or the lab (${lab_pkgs:-none})" [ -z "$lab_pkgs" ]
check "the root's apt sources, keys and architectures are unchanged" \
	[ -n "$state" -a "$(tests/host_state.sh "$root")" = "$state" ]
check "the machine's apt sources, keys and architectures are unchanged" \
	[ -n "$host" -a "$(tests/host_state.sh)" = "$host" ]
check "a real CompactionDuration histogram was printed" \
	awk '/^CompactionDuration/ {m = 1} /^$/ {m = 0} m && /^ *count [1-9]/ {ok = 1} END {exit !ok}' "$log"
if [ $fails -gt 0 ]; then
	sed 's/^/    | /' "$log" | tail -40
	echo "    | installed: $(tr '\n' ' ' <<<"$installed" | head -c 4000)"
fi
[ $fails -eq 0 ]
