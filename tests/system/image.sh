#!/usr/bin/env bash
# The system test's base image: Debian bookworm with systemd as PID 1, built
# by mmdebstrap from Debian's packages, as a raw ext4 image (mke2fs -d) that
# the guest boots as /dev/nvme0n1 without an initramfs.  Cached as
# CACHE/base-<hash>.img, the hash over this script, the suite, the mirror and
# the package list, so a re-run builds nothing; the guest's runs write to a
# qcow2 overlay and never change it.  Prints the image's path.
# At every boot, systest.service runs /mnt/systest/guest.sh from the second
# disk (label systest) and powers off: the test lives there, not in the image.
# The selinux flavour (tests/selinux/) adds Debian's refpolicy, the audit
# daemon and the SELinux tools, and labels the tree with setfiles before
# mke2fs -d copies it (xattrs included): no relabelling at first boot.
# Usage: tests/system/image.sh CACHE [selinux]
# Exit: 0 ready, 77 cannot build (offline, no mmdebstrap; reason on stderr).
set -euo pipefail
cache=$1
flavour=${2:-}
suite=bookworm
# The mirror this machine's apt uses for bookworm, unless SYSTEST_MIRROR names one.
mirror=${SYSTEST_MIRROR:-$("$(dirname "$0")/../kernels/apt.sh" mirror)}
# The package's run-time dependencies are here so that dpkg -i needs no
# network; node_exporter because a fleet host has it.
pkgs="systemd systemd-sysv udev procps util-linux passwd adduser acl curl kmod
      prometheus-node-exporter libbpf1 libelf1 libjson-c5 libprotobuf-c1 zlib1g"
label=(--customize-hook=true)
if [ "$flavour" = selinux ]; then
	pkgs="$pkgs selinux-policy-default selinux-utils policycoreutils
	      policycoreutils-python-utils semodule-utils setools auditd"
	label=(--customize-hook='setfiles -r "$1" -e "$1/proc" -e "$1/sys" -e "$1/dev" "$1/etc/selinux/default/contexts/files/file_contexts" "$1"')
fi
pkgs=$(echo $pkgs | tr ' ' ',')

hash=$( { cat "$0"; echo "$suite $mirror $pkgs $flavour"; } | sha256sum | cut -c1-16)
img=$cache/base${flavour:+-$flavour}-$hash.img
[ -f "$img" ] && { echo "$img"; exit 0; }

command -v mmdebstrap >/dev/null || { echo "no mmdebstrap (make deps installs it)" >&2; exit 77; }
mkdir -p "$cache"
exec 9>"$cache/.image.lock"
flock 9
[ -f "$img" ] && { echo "$img"; exit 0; }
rm -rf --one-file-system "$cache"/.tmp.*
tmp=$(mktemp -d "$cache/.tmp.XXXXXX")
trap 'rm -rf --one-file-system "$tmp"' EXIT

# The boot-time driver: the test script on the second disk, its output on
# the serial console, then power off.  Not ordered against shutdown: it
# starts the poweroff itself.  Type=simple: its start job ends when it has
# started, so the boot is finished while the test runs (systemd-analyze).
unit='[Unit]
Description=system test driver (tests/system/guest.sh on the disk labelled systest)
DefaultDependencies=no
After=multi-user.target
[Service]
Type=simple
ExecStart=/bin/sh -c "mount -o ro LABEL=systest /mnt/systest && exec /bin/bash /mnt/systest/guest.sh"
ExecStopPost=/bin/systemctl --no-block poweroff
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
[Install]
WantedBy=multi-user.target'

# Nothing else at boot: no logins on the console, no periodic jobs.
masked="serial-getty@ttyS0.service getty@tty1.service apt-daily.timer
	apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer
	man-db.timer systemd-tmpfiles-clean.timer e2scrub_reap.service"
masked=$(echo $masked)
log=$tmp/mmdebstrap.log
if ! mmdebstrap --mode=root --variant=minbase --include="$pkgs" \
	--aptopt='APT::Install-Recommends "false"' \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt=force-unsafe-io \
	--customize-hook='echo systest > "$1/etc/hostname"' \
	--customize-hook='echo "/dev/nvme0n1 / ext4 rw,errors=remount-ro 0 1" > "$1/etc/fstab"' \
	--customize-hook='mkdir -p "$1/mnt/systest"' \
	--customize-hook="printf '%s\n' '$unit' > \"\$1/etc/systemd/system/systest.service\"" \
	--customize-hook='chroot "$1" systemctl enable systest.service' \
	--customize-hook="chroot \"\$1\" systemctl mask $masked" \
	--customize-hook='rm -f "$1/etc/machine-id"; : > "$1/etc/machine-id"' \
	--customize-hook='sed -i "/force-unsafe-io/d" "$1/etc/dpkg/dpkg.cfg.d/99mmdebstrap"' \
	"${label[@]}" \
	"$suite" "$tmp/root" "$mirror" >"$log" 2>&1; then
	if grep -qiE 'could not resolve|failed to fetch|temporary failure|unable to connect' "$log"; then
		echo "cannot build the bookworm image: $(grep -iE 'could not resolve|failed to fetch|temporary failure|unable to connect' "$log" | head -1); offline?" >&2
		exit 77
	fi
	echo "mmdebstrap failed:" >&2
	tail -20 "$log" >&2
	exit 1
fi
# mke2fs says "Creating regular file" on stdout even with -q: stdout is the path.
mke2fs -q -t ext4 -L root -d "$tmp/root" "$tmp/base.img" 2G >&2
mv "$tmp/base.img" "$img"
echo "$img"
