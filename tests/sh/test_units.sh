#!/usr/bin/env bash
# make install into a scratch DESTDIR, then check the installed layout and
# run systemd-analyze verify on the loader unit (any message is a failure).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${KSTATS_BUILD:-build}
PREFIX=/usr
tmp=$(mktemp -d /tmp/kstats-test-$$-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
trap 'exit 143' TERM
unit=$PREFIX/lib/systemd/system/kernelstats-loader.service
rc=$PREFIX/etc/init/kernelstats.rc
textfile=$PREFIX/lib/systemd/system/kernelstats-textfile.service
rules=$PREFIX/share/kernelstats/prometheus/kernelstats.rules.yml
fail=0

check() {	# name, then a command that must succeed
	local name=$1
	shift
	if "$@"; then echo "PASS: $name"; else echo "FAIL: $name: $*"; fail=1; fi
}

if ! make -s --no-print-directory install BUILD="$BUILD" PREFIX=$PREFIX \
	DESTDIR="$tmp" >"$tmp/make.log" 2>&1; then
	echo "FAIL: install: make install failed: $(tail -3 "$tmp/make.log" | tr '\n' ' ')"
	exit 1
fi
echo "PASS: install"

for f in $PREFIX/sbin/kstats-loader $PREFIX/bin/kstats \
	 $PREFIX/lib/kernelstats/bpf/compaction.bpf $unit $rc /etc/kernelstats/loader.conf \
	 $PREFIX/lib/systemd/system/kernelstats-pull.service /etc/cron.daily/kernelstats \
	 $PREFIX/lib/systemd/system/kernelstats-textfile.service \
	 $PREFIX/lib/systemd/system/kernelstats-textfile.timer $rules \
	 $PREFIX/lib/tmpfiles.d/kernelstats.conf; do
	[ -e "$tmp$f" ] || { echo "FAIL: install_layout: $f missing"; fail=1; }
done
[ "$fail" -eq 0 ] && echo "PASS: install_layout"

check unit_exec_path grep -qx "ExecStart=$PREFIX/sbin/kstats-loader --boot --obj-dir $PREFIX/lib/kernelstats/bpf" "$tmp$unit"
check unit_oneshot grep -qx "Type=oneshot" "$tmp$unit"
check unit_remain_after_exit grep -qx "RemainAfterExit=yes" "$tmp$unit"
check unit_after_bpffs grep -q "^RequiresMountsFor=/sys/fs/bpf " "$tmp$unit"
check no_placeholders_left bash -c "! grep -q '@[A-Z_]*@' '$tmp$unit' '$tmp$rc' '$tmp$textfile'"
check textfile_default_dir grep -qx "ExecStart=$PREFIX/bin/kstats dump --prometheus --obj-dir $PREFIX/lib/kernelstats/bpf --output /var/lib/prometheus/node-exporter/kernelstats.prom" "$tmp$textfile"
# Root (node_exporter's directory is root's) with CAP_BPF only, skipped
# without node_exporter; nothing made or given in node_exporter's directory.
check textfile_root_cap_bpf_only bash -c "! grep -q '^User=' '$tmp$textfile' &&
	grep -qx CapabilityBoundingSet=CAP_BPF '$tmp$textfile' &&
	grep -qx 'ExecCondition=/usr/bin/test -d /var/lib/prometheus/node-exporter' '$tmp$textfile' &&
	! grep -rq -e prometheus -e kernelstats-textfile '$tmp$PREFIX/lib/tmpfiles.d'"
check rules_promtool_clean bash -c "! command -v promtool >/dev/null || promtool check rules '$tmp$rules' >/dev/null"
check pull_paths_follow_prefix bash -c "! grep -rq /usr/local '$tmp$PREFIX/lib/systemd/system' '$tmp/etc/cron.daily'"
check rc_service grep -q "^service kstats_loader $PREFIX/sbin/kstats-loader --boot --obj-dir $PREFIX/lib/kernelstats/bpf" "$tmp$rc"
check rc_oneshot grep -qx "    oneshot" "$tmp$rc"
# An existing config is never overwritten.
echo "disable = all" >"$tmp/etc/kernelstats/loader.conf"
make -s --no-print-directory install BUILD="$BUILD" PREFIX=$PREFIX DESTDIR="$tmp" >/dev/null 2>&1
check config_kept grep -qx "disable = all" "$tmp/etc/kernelstats/loader.conf"
# TEXTFILE_DIR= moves the textfile unit's output, write access and directory.
make -s --no-print-directory install BUILD="$BUILD" PREFIX=$PREFIX DESTDIR="$tmp" \
	TEXTFILE_DIR=/srv/textfile >/dev/null 2>&1
check textfile_dir_configurable bash -c "grep -q -- '--output /srv/textfile/kernelstats.prom\$' '$tmp$textfile' &&
	grep -qx 'ReadWritePaths=-/srv/textfile' '$tmp$textfile'"
# Under systemd 252, ProtectKernelTunables=yes mounts /sys read-only over
# what ReadWritePaths= or TemporaryFileSystem= under /sys ask for (issue 25:
# the loader could not pin, the readers met bpffs' 0700).
for u in dist/systemd/*.service; do
	check "no_tunables_over_bpffs_$(basename "$u" .service)" bash -c "! { grep -qx 'ProtectKernelTunables=yes' '$u' &&
		grep -qE '^(ReadWritePaths|TemporaryFileSystem|BindReadOnlyPaths)=-?/sys/' '$u'; }"
done

if ! command -v systemd-analyze >/dev/null; then
	echo "SKIP: systemd_analyze_verify: systemd-analyze is not installed"
else
	# The pull units are verified by test_pull_units.sh; this one has no
	# default dependencies, so it verifies inside the DESTDIR root.
	out=$(systemd-analyze verify --root="$tmp" "$unit" 2>&1)
	if [ $? -ne 0 ] || [ -n "$out" ]; then
		echo "FAIL: systemd_analyze_verify: $out"
		fail=1
	else
		echo "PASS: systemd_analyze_verify"
	fi
fi
exit "$fail"
