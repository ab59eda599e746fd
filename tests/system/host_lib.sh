# Sourced by the guests' hosts (tests/system/run.sh, tests/selinux/run.sh):
# the kernel, the package and qemu, shared.  The caller defines say() and
# skip() and sets $T.

# Debian's 6.1 cloud kernel (the kernel matrix's), fetched and cached by the
# lab's fetcher: sets $kernel, or skips (offline) or fails.
cloud_kernel() {	# cache
	local spec err
	spec=$(awk '$1 == "debian-6.1-cloud" {print $3}' tests/kernels/matrix)
	err=$(tests/kernels/fetch.sh "$1" debian-6.1-cloud "$spec" 2>&1)
	case $? in
	0) ;;
	77) skip "kernel $spec: $err" ;;
	*) say FAIL "kernel fetch: $err"; exit 1 ;;
	esac
	kernel=$(ls "$1"/debian-6.1-cloud/vmlinu[xz] | head -1)
}

# The package: make deb of this tree, cached under the tree's content hash
# (tests/ is not in the package) in CACHE/deb-<hash>: sets $debdir.
cached_deb() {	# cache work
	local tree
	tree=$( { git ls-files -co --exclude-standard 2>/dev/null || find . -path ./build -prune -o -type f -print; } |
		grep -v '^tests/' | sort | xargs -d '\n' sha256sum 2>/dev/null | sha256sum | cut -c1-16)
	debdir=$1/deb-$tree
	ls "$debdir"/kernelstats_*.deb >/dev/null 2>&1 && return 0
	rm -rf "$1"/deb-*
	if ! make -s --no-print-directory deb DEB_DIR="$debdir" >"$2/deb.log" 2>&1; then
		say FAIL "make deb: $(tail -3 "$2/deb.log" | tr '\n' ' ')"
		rm -rf "$debdir"
		exit 1
	fi
}

# The base image tests/system/image.sh built in the background: sets $base.
image_ready() {	# pid out err
	wait "$1"
	case $? in
	0) ;;
	77) skip "base image: $(cat "$3")" ;;
	*) say FAIL "base image: $(tail -5 "$3" | tr '\n' ' ')"; exit 1 ;;
	esac
	base=$(cat "$2")
	rm -f "$2" "$3"
	[ -f "$base" ] || { say FAIL "base image: image.sh printed '$base', not an image file"; exit 1; }
}

# One guest in the background (sets $qpid): the root disk, and the test's
# disk (label systest) read-only, both NVMe; the console in the log.
qemu_start() {	# log root.qcow2 systest.img cmdline
	# -cx16: qemu 7.2's TCG breaks SLUB's cmpxchg16b (doc/kernel-matrix.md).
	qemu-system-x86_64 -accel tcg -cpu qemu64,-cx16 -m 1024 -smp 1 -nodefaults -display none -nic none \
		-monitor none -no-reboot -serial "file:$1" -kernel "$kernel" \
		-append "root=/dev/nvme0n1 console=ttyS0 loglevel=1 panic=-1 $4" \
		-device nvme,id=nvme0,serial=systest \
		-drive "file=$2,if=none,id=root,format=qcow2" -device nvme-ns,drive=root,bus=nvme0,nsid=1 \
		-drive "file=$3,if=none,id=t,format=raw,readonly=on" \
		-device nvme-ns,drive=t,bus=nvme0,nsid=2 \
		</dev/null >"$1.qemu" 2>&1 &
	qpid=$!
}

# The guest's verdicts, as the suite's.
verdicts() {	# log
	sed -n 's/^.*@@ \(PASS\|FAIL\|SKIP\): /\1: '"$T"': /p; s/^.*@@ INFO: /# /p' "$1"
}
