#!/usr/bin/env bash
# Scheduling: systemd-analyze verify on the pull and textfile units
# (warnings count as failures), the cron.daily script's syntax, and a pull
# and the textfile export under the units' privilege model: not root, group
# kstats, CAP_BPF only (setpriv).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${KSTATS_BUILD:-build}
T=pull_units
KSTATS=$PWD/$BUILD/kstats
TMP=$(mktemp -d /tmp/kstats-test-$$-units-XXXXXX)
PIN=/sys/fs/bpf/kernelstats-test-$$-units
trap 'rm -rf "$TMP" "$PIN"' EXIT
trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
trap 'exit 143' TERM

verify_units() {
	local out
	if ! command -v systemd-analyze >/dev/null; then
		echo "SKIP: $T: systemd-analyze is not installed"
		return
	fi
	# verify checks that ExecStart= exists: point it at the build.
	cp dist/systemd/kernelstats-pull* dist/systemd/kernelstats-textfile* dist/systemd/kernelstats-ship* "$TMP/"
	sed -i -e "s|@BINDIR@/kstats|$KSTATS|" -e "s|@BPFDIR@|$PWD/$BUILD/bpf|" -e "s|@TEXTFILE_DIR@|$TMP|" \
		-e "s|@SYSCONFDIR@|/etc|" "$TMP"/kernelstats-*
	if out=$(systemd-analyze verify "$TMP"/kernelstats-* 2>&1) &&
	   [ -z "$out" ]; then
		echo "PASS: $T: systemd-analyze verify"
	else
		echo "FAIL: $T: systemd-analyze verify: $(echo "$out" | head -3)"
	fi
	if grep -qx 'OnCalendar=daily' dist/systemd/kernelstats-pull.timer &&
	   grep -qx 'Persistent=true' dist/systemd/kernelstats-pull.timer &&
	   grep -q '^RandomizedDelaySec=' dist/systemd/kernelstats-pull.timer &&
	   grep -q '^ExecStop=.*kstats pull' dist/systemd/kernelstats-pull-shutdown.service; then
		echo "PASS: $T: daily persistent randomized timer, pull at shutdown"
	else
		echo "FAIL: $T: timer or shutdown unit lost a required setting"
	fi
	if grep -qx 'OnUnitActiveSec=60s' dist/systemd/kernelstats-textfile.timer &&
	   ! grep -q '^User=' dist/systemd/kernelstats-textfile.service &&
	   grep -qx 'SupplementaryGroups=kstats' dist/systemd/kernelstats-textfile.service &&
	   grep -qx 'ReadWritePaths=-@TEXTFILE_DIR@' dist/systemd/kernelstats-textfile.service &&
	   diff <(grep -v -e '^ExecStart=' -e '^#' -e '^ReadWritePaths=' -e '^StateDirectory' \
			-e '^UMask=' -e '^User=' -e '^Group=' -e '^AmbientCapabilities=' \
			dist/systemd/kernelstats-pull.service | sed -n '/^\[Service\]/,$p') \
		<(grep -v -e '^Exec\(Start\|Condition\)=' -e '^#' -e '^ReadWritePaths=' -e '^UMask=' \
			-e '^SupplementaryGroups=' \
			dist/systemd/kernelstats-textfile.service | sed -n '/^\[Service\]/,$p') >/dev/null; then
		echo "PASS: $T: textfile every 60 s as root with CAP_BPF only, hardened like the pull"
	else
		echo "FAIL: $T: textfile timer or service lost a required setting or the pull's hardening"
	fi
}

check_cron() {
	if sh -n dist/cron.daily/kernelstats && [ -x dist/cron.daily/kernelstats ]; then
		echo "PASS: $T: cron.daily script parses and is executable"
	else
		echo "FAIL: $T: dist/cron.daily/kernelstats does not parse or is not executable"
	fi
}

unprivileged_pull() {
	local gid lib=$TMP/lib out
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: $T: unprivileged pull: needs root to set up"; return; }
	command -v setpriv >/dev/null || { echo "SKIP: $T: setpriv is not installed"; return; }
	gid=$(getent group kstats | cut -d: -f3)
	[ -n "$gid" ] || { echo "SKIP: $T: no group kstats (make install creates it)"; return; }
	"$BUILD/kstats-loader" --obj-dir "$BUILD/bpf" --pin-dir "$PIN" --run-dir "$TMP/run" >/dev/null ||
		{ echo "FAIL: $T: kstats-loader failed"; return; }
	chmod 0755 "$TMP"
	install -d -o 65534 -g "$gid" -m 0750 "$lib"
	echo 1 >/proc/sys/vm/compact_memory
	if out=$(setpriv --reuid=65534 --regid="$gid" --clear-groups \
			--inh-caps=+bpf --ambient-caps=+bpf --bounding-set=-all,+bpf \
			"$KSTATS" pull -v --obj-dir "$BUILD/bpf" --pin-dir "$PIN" \
			--state-dir "$lib/state" --out-dir "$lib/atoms" \
			--status-file "$TMP/none.json" 2>&1) &&
	   ls "$lib"/atoms/atoms-*.pb >/dev/null 2>&1 &&
	   echo "$out" | grep -q "window starts at its programs' load time"; then
		echo "PASS: $T: pull as uid 65534, group kstats, CAP_BPF only"
	else
		echo "FAIL: $T: unprivileged pull: $(echo "$out" | grep -v 'not pinned' | head -3)"
	fi
}

# The textfile unit's command as it runs it: root with CAP_BPF only (no
# CAP_DAC_OVERRIDE), group kstats, into a directory of root's.
privileged_textfile() {
	local gid tf=$TMP/textfile out
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: $T: textfile: needs root to set up"; return; }
	command -v setpriv >/dev/null || { echo "SKIP: $T: setpriv is not installed"; return; }
	gid=$(getent group kstats | cut -d: -f3)
	[ -n "$gid" ] || { echo "SKIP: $T: no group kstats (make install creates it)"; return; }
	[ -e "$PIN" ] || { echo "SKIP: $T: textfile: the loader did not run"; return; }
	install -d -m 0755 "$tf"
	if out=$(setpriv --reuid=0 --regid=0 --groups="$gid" --reset-env \
			--inh-caps=-all --bounding-set=-all,+bpf \
			"$KSTATS" dump --prometheus --obj-dir "$BUILD/bpf" --pin-dir "$PIN" \
			--output "$tf/kernelstats.prom" 2>&1) &&
	   grep -q '^kstats_compaction_duration_seconds_count ' "$tf/kernelstats.prom" &&
	   [ "$(stat -c %a "$tf/kernelstats.prom")" = 644 ] &&
	   [ "$(ls -A "$tf")" = kernelstats.prom ]; then
		echo "PASS: $T: textfile export as root with CAP_BPF only, group kstats, into a directory of root's"
	else
		echo "FAIL: $T: textfile: $out $(ls -la "$tf" | head -3)"
	fi
}

verify_units
check_cron
unprivileged_pull
privileged_textfile
