#!/bin/bash
# The system test inside the guest, run by systest.service (systemd as PID 1)
# at the end of every boot; the phase comes from the kernel command line
# (systest.phase=).  Prints "@@ " lines on the serial console, which
# tests/system/run.sh reads: "@@ PASS: <check>", "@@ FAIL: <check>: why",
# "@@ INFO: ...", data blocks ("@@ BLOB name" .. "@@ BLOB-END") and
# "@@ COUNT <boot_id> <n>" (tracefs' mm_compaction_end events of a boot).
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_PAGER= SYSTEMD_COLORS=0
D=/mnt/systest
PIN=/sys/fs/bpf/kernelstats
ATOMS=/var/lib/kernelstats/atoms
TRACE=/sys/kernel/tracing/trace
phase=$(sed -n 's/.*systest\.phase=\([a-z0-9]*\).*/\1/p' /proc/cmdline)
boot_id=$(cat /proc/sys/kernel/random/boot_id)
out=/run/systest.out

# shellcheck source=tests/system/guest_lib.sh
. "$D/guest_lib.sh"
blob() {	# name file
	echo "@@ BLOB $1"
	base64 -w 76 "$2" | sed 's/^/@@ B64 /'
	echo "@@ BLOB-END"
}
events() { grep -c ' mm_compaction_end:' "$TRACE"; }
# One manual compaction (mm_compaction_end per zone): seconds under TCG.
compact() { echo 1 >/proc/sys/vm/compact_memory; }

no_failed_units() {
	! systemctl --failed --no-legend --plain | grep kernelstats
}
check_failed() { check "$1: systemctl --failed lists no kernelstats unit" no_failed_units; }

loader_ok() {	# the unit ran, exit 0, and kstats status finds nothing failed
	[ "$(systemctl show -P ActiveState kernelstats-loader.service)" = active ] &&
	[ "$(systemctl show -P ExecMainStatus kernelstats-loader.service)" = 0 ] &&
	kstats status
}
# Every object the kernel can run: no FAILED outcome; the dma-buf object
# loaded (on 6.1 its only attach point is a kprobe).
all_objects() {
	kstats status >"$out.status" 2>&1 || { cat "$out.status"; return 1; }
	cat "$out.status"
	! grep -q FAILED "$out.status" && grep -qE '^dmabuf +LOADED' "$out.status" &&
		grep -qE '^  on_dma_buf_export[a-z_]* +dma_buf_export +[a-z_]+ +LOADED' "$out.status"
}
loader_checks() {	# stage
	check "$1: kernelstats-loader.service active, exit 0, kstats status clean" loader_ok
	check "$1: every loadable object loaded (dma-buf kprobe variant too)" all_objects
	blob "status-$1" "$out.status"
	check_failed "$1"
}

# Runs kstats as a user with no capabilities.
as() { setpriv --reuid="$1" --regid="$1" --init-groups --inh-caps=-all --bounding-set=-all -- "${@:2}"; }
member_dump() {
	stat -c '%n %A %U:%G' /sys/fs/bpf "$PIN"
	as member kstats dump CompactionDuration && as member kstats dump | grep -q CompactionDuration
}
# Can the member check fail?  bpffs as systemd mounts it (1700, printed
# before dpkg -i) stops the member; the package's tmpfiles line (applied
# again here) lets it through.
member_needs_0711() {
	chmod 1700 /sys/fs/bpf
	as member kstats dump CompactionDuration >"$out.m" 2>&1
	local rc=$?
	systemd-tmpfiles --create kernelstats.conf
	echo "member's kstats dump under 1700: exit $rc: $(head -2 "$out.m")"
	stat -c '%n %a after systemd-tmpfiles --create kernelstats.conf' /sys/fs/bpf
	[ "$rc" -ne 0 ] && [ "$(stat -c %a /sys/fs/bpf)" = 711 ] && member_dump
}
outsider_denied() {
	as outsider kstats dump >"$out.o" 2>&1
	local rc=$?
	cat "$out.o"
	[ "$rc" -ne 0 ] && ! grep -q 'Success' "$out.o"
}

# The histogram pins' inodes (a recreated map is a new pin) and the counts of
# kstats dump --json without its timestamps.
counts() {
	stat -c '%n %i' "$PIN"/map_*
	kstats dump --json | sed -E '/"iso8601"/d; s/"(time|boottime_ns|realtime_ns|since_boottime_ns|since_realtime_ns|seconds|interval)": *[0-9.]+,?//g'
}

# The timer fires: made due now by a runtime drop-in; the service it starts
# ends successfully and leaves a new atoms file.
timer_fires() {
	local before
	before=$(ls "$ATOMS" | wc -l)
	systemctl is-active kernelstats-pull.timer || return 1
	mkdir -p /run/systemd/system/kernelstats-pull.timer.d
	printf '[Timer]\nOnActiveSec=1s\nRandomizedDelaySec=0\nAccuracySec=1us\n' \
		>/run/systemd/system/kernelstats-pull.timer.d/systest.conf
	systemctl daemon-reload && systemctl restart kernelstats-pull.timer || return 1
	wait_for '[ "$(systemctl show -P LastTriggerUSecMonotonic kernelstats-pull.timer)" != 0 ]' 30 ||
		{ echo "timer did not trigger"; return 1; }
	wait_for '[ "$(systemctl show -P ActiveState kernelstats-pull.service)" = inactive ] &&
		  [ "$(systemctl show -P ExecMainExitTimestampMonotonic kernelstats-pull.service)" != 0 ]' 60 ||
		{ echo "pull service did not finish"; return 1; }
	# No daemon-reload for this: the upgrade's dpkg -i reloads next.
	rm -rf /run/systemd/system/kernelstats-pull.timer.d
	[ "$(systemctl show -P Result kernelstats-pull.service)" = success ] ||
		{ journalctl -b -u kernelstats-pull.service --no-pager | tail -5; return 1; }
	[ "$(ls "$ATOMS" | wc -l)" -gt "$before" ] || { echo "no new atoms file"; return 1; }
}

pull_service() {
	local before
	before=$(ls "$ATOMS" 2>/dev/null | wc -l)
	systemctl start kernelstats-pull.service ||
		{ journalctl -b -u kernelstats-pull.service --no-pager | tail -5; return 1; }
	[ "$(ls "$ATOMS" | wc -l)" -gt "$before" ]
}

# node_exporter, with Debian's default configuration, reads the file the
# package's unit writes beside another collector's (doc/fleet-export.md).
textfile_scraped() {
	local TEXTFILE
	TEXTFILE=$(grep -o -- '--output [^ ]*' /lib/systemd/system/kernelstats-textfile.service | cut -d' ' -f2)
	[ "${TEXTFILE%/*}" = /var/lib/prometheus/node-exporter ] || { echo "writes $TEXTFILE"; return 1; }
	grep -q '^ARGS=""' /etc/default/prometheus-node-exporter || { echo "node_exporter configured"; return 1; }
	echo 'kstats_guest_other_collector 1' >/var/lib/prometheus/node-exporter/other.prom
	SECONDS=0
	systemctl restart prometheus-node-exporter.service || return 1
	echo -n "node_exporter restarted after ${SECONDS}s, " >"$out.tf"
	systemctl start kernelstats-textfile.service ||
		{ journalctl -b -u kernelstats-textfile.service --no-pager | tail -5; return 1; }
	echo -n "the textfile written after ${SECONDS}s, " >>"$out.tf"
	[ -s "$TEXTFILE" ] || { echo "no $TEXTFILE"; return 1; }
	wait_for 'curl -sf -o "$out.metrics" http://127.0.0.1:9100/metrics' 60 ||
		{ echo "node_exporter does not answer"; return 1; }
	echo "scraped after ${SECONDS}s" >>"$out.tf"
	grep -E '^kstats_.*compaction.*_bucket\{' "$out.metrics" | head -2
	grep -qE '^kstats_.*compaction.*_bucket\{.*le="\+Inf"' "$out.metrics" &&
		grep -q '^kstats_guest_other_collector 1$' "$out.metrics" ||
		{ grep -i textfile "$out.metrics" | head -5; return 1; }
}

# One systemd-analyze for all units: each start of it costs seconds under TCG.
security() {
	local units=(kernelstats-loader kernelstats-pull kernelstats-pull-shutdown kernelstats-textfile) u line
	systemd-analyze security --no-pager "${units[@]/%/.service}" >"$out.sec" 2>&1
	for u in "${units[@]}"; do
		line=$(grep "Overall exposure level for $u.service:" "$out.sec")
		[ -n "$line" ] || line="not rated: $(tail -1 "$out.sec")"
		say "INFO: systemd-analyze security $u.service: ${line#*: }"
	done
}

# At shutdown, after kernelstats-pull-shutdown has pulled (units stop in
# reverse order), the boot's final tracefs count.
final_count_unit() {
	cat >/run/systemd/system/systest-final.service <<EOF
[Unit]
DefaultDependencies=no
Conflicts=shutdown.target
Before=shutdown.target kernelstats-pull-shutdown.service
After=sys-kernel-tracing.mount
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/true
ExecStop=/bin/sh -c 'echo "@@ COUNT $boot_id \$(grep -c " mm_compaction_end:" $TRACE)" >/dev/ttyS0; echo "@@ T 0 \$(cut -d" " -f1 /proc/uptime) shutdown pull done" >/dev/ttyS0'
EOF
	systemctl daemon-reload && systemctl start systest-final.service
}

dump_atoms() {
	local f
	for f in "$ATOMS"/atoms-*.pb; do
		[ -f "$f" ] && blob "atoms ${f##*/}" "$f"
	done
}

# A copy of the loader's unit on the installed objects and crash.bpf (made
# on the host: it crashes libbpf's parse), with its own pins and run dir.
# Only that object fails, the others load as at boot, and no object was
# parsed in-process: the prober that replaces the crashed one (the loader
# executed again) started inside the unit's sandbox.
crash_unit() {
	local u=/run/systemd/system/systest-crash.service objs=/run/systest-objs
	local st=/run/systest-crash pins=/sys/fs/bpf/systest-crash
	mkdir -p "$objs" "$st" && cp /usr/lib/kernelstats/bpf/*.bpf "$D/crash.bpf" "$objs/" &&
	sed -e "s|--obj-dir [^ ]*|--obj-dir $objs --pin-dir $pins --run-dir $st|" \
	    -e "s|^ReadWritePaths=.*|& $st|" -e 's|^TimeoutStartSec=.*|TimeoutStartSec=300|' \
	    -e '/^RuntimeDirectory/d' \
	    "$(systemctl show -P FragmentPath kernelstats-loader.service)" >"$u" &&
	systemctl daemon-reload && systemctl start systest-crash.service &&
	grep -q 'libbpf crashed parsing it' "$st/loader-status.json" &&
	[ "$(grep -o '"LOADED"' "$st/loader-status.json" | wc -l)" = \
	  "$(grep -o '"LOADED"' /run/kernelstats/loader-status.json | wc -l)" ] &&
	! journalctl -b --no-pager | grep -q 'cannot start a prober'
	local ok=$?
	[ $ok = 0 ] || say "INFO: crash_unit: $(systemctl show -P ExecMainStatus systest-crash.service) $(grep -o '"outcome": "[A-Z_]*", "reason": "[^"]*"' "$st/loader-status.json" 2>/dev/null | tr '\n' ' ' | cut -c1-600)"
	systemctl stop systest-crash.service
	rm -rf "$u" "$objs" "$st" "$pins"
	systemctl daemon-reload
	return $ok
}

# systest.service (the image's) is Type=simple: its start job ends at once,
# so the boot finishes while this runs (systemd-analyze needs it finished).
wait_for 'systemctl is-system-running | grep -qE "running|degraded"' 120 ||
	say "INFO: boot not finished: $(systemctl is-system-running)"

say "BEGIN $phase $(uname -r) systemd $(systemctl --version | sed -n '1s/systemd \([0-9]*\).*/\1/p')"
stamp "boot finished: $(systemd-analyze time --no-pager | head -1)"

say "BOOT $boot_id"
say "INFO: $phase: kernel.perf_event_paranoid=$(sysctl -n kernel.perf_event_paranoid) kernel.unprivileged_bpf_disabled=$(sysctl -n kernel.unprivileged_bpf_disabled), $(grep -E '^MemAvailable' /proc/meminfo | tr -s ' ')"

case $phase in
install)
	# Events before the loader runs are not the maps': count from here.
	: >"$TRACE"
	say "INFO: install: before dpkg -i: $(stat -c '%n %a %U:%G' /sys/fs/bpf)"
	# TCG runs the verifier tens of times slower than hardware, a loaded
	# host slower still: a boot's loader took 71 s on a host with load 13,
	# over the unit's 60 s.  The test's drop-in, gone before dpkg -r.
	mkdir -p /etc/systemd/system/kernelstats-loader.service.d
	printf '[Service]\nTimeoutStartSec=300\n' >/etc/systemd/system/kernelstats-loader.service.d/systest.conf
	check "install: dpkg -i" dpkg -i "$D/v1.deb"
	loader_checks install
	useradd -M -s /usr/sbin/nologin -G kstats member
	useradd -M -s /usr/sbin/nologin outsider
	compact
	check "install: kernelstats-pull.timer enabled and active" systemctl is-active kernelstats-pull.timer
	check "install: kernelstats-pull.service writes atoms" pull_service
	compact
	check "install: kernelstats-textfile.service writes into /var/lib/prometheus/node-exporter; node_exporter with Debian's defaults serves its buckets beside another collector's metric (127.0.0.1:9100)" textfile_scraped
	say "INFO: install: $(cat "$out.tf" 2>/dev/null)"
	check "install: kstats member without capabilities runs kstats dump" member_dump
	say "INFO: $(head -3 "$out" | tr '\n' ' ')"
	check "install: bpffs 1700 (as systemd mounts it) stops the member; the package's tmpfiles line lets it through" member_needs_0711
	say "INFO: $(head -3 "$out" | tr '\n' ' ')"
	check "install: a user outside group kstats cannot (and the error names it)" outsider_denied
	security
	stamp "install: systemd-analyze security"
	check_failed "install: after the services"
	compact
	# init of the power-cut boots, which start from this boot's disk.
	install -m 0755 "$D/cut.sh" /usr/local/sbin/systest-cut
	final_count_unit
	;;
upgrade)
	loader_checks boot
	check "boot: the member dumps after a reboot (systemd mounted bpffs 1700, tmpfiles made it 0711)" member_dump
	say "INFO: $(head -1 "$out")"
	check "boot: the loader's unit with an object that crashes libbpf: only it fails, the next prober starts in the unit's sandbox" crash_unit
	say "INFO: systemd-analyze blame: $(systemd-analyze blame --no-pager | grep kernelstats-loader)"
	check "boot: kernelstats-pull-shutdown.service active (pulls at shutdown)" \
		systemctl is-active kernelstats-pull-shutdown.service
	compact
	check "boot: kernelstats-pull.timer fires and its pull writes atoms" timer_fires
	compact
	counts >"$out.before"
	check "upgrade: dpkg -i of a second build" dpkg -i "$D/v2.deb"
	counts >"$out.after"
	check "upgrade: the maps (same pins) and their counts are kept" diff "$out.before" "$out.after"
	loader_checks upgrade
	compact
	final_count_unit
	;;
remove)
	loader_checks boot2
	rm -r /etc/systemd/system/kernelstats-loader.service.d
	compact
	check "remove: dpkg -r" dpkg -r kernelstats
	check "remove: pins gone" test ! -e "$PIN"
	say "COUNT $boot_id $(events)"
	dump_atoms
	userdel member
	userdel outsider
	check "purge: dpkg -P" dpkg -P kernelstats
	left=$(ls -d "$PIN" /var/lib/kernelstats /var/lib/kernelstats.created-by-package \
		/var/lib/kernelstats-textfile /var/lib/prometheus/node-exporter/kernelstats.prom \
		/run/kernelstats /etc/kernelstats /lib/systemd/system/kernelstats* \
		/etc/systemd/system/*/kernelstats* /var/lib/systemd/deb-systemd-helper-enabled/*kernelstats* \
		/var/lib/systemd/deb-systemd-helper-enabled/*/kernelstats* 2>/dev/null)
	check "purge: no pins, state, run dir or unit files left" test -z "$left"
	[ -z "$left" ] || say "INFO: left: $left"
	check "purge: no kernelstats unit known to systemd" \
		sh -c '! systemctl list-units --all --no-legend --plain "kernelstats*" | grep .'
	check "purge: no user or group kstats" sh -c '! getent passwd kstats && ! getent group kstats'
	check "purge: no ACL entry left on node_exporter's textfile directory" \
		sh -c '! getfacl -p /var/lib/prometheus/node-exporter | grep kstats'
	check_failed "purge"
	;;
explore)
	# Which sandbox directives work here (tests/system/run.sh explore).
	mkdir -p /sys/fs/bpf/probe && chgrp nogroup /sys/fs/bpf/probe && chmod 0750 /sys/fs/bpf/probe
	n=0
	probe() {	# name, then -p properties, --, a shell command
		local props=() u
		n=$((n + 1))
		u=/run/systemd/system/probe$n.service
		echo "$1" >/run/probe$n.name
		shift
		while [ "$1" != -- ]; do props+=("$2"); shift 2; done
		{ printf '[Service]\nType=oneshot\nStandardOutput=file:/run/probe%s.out\nStandardError=file:/run/probe%s.out\n' $n $n
		  printf '%s\n' "${props[@]}"
		  echo "ExecStart=/bin/sh /run/probe$n.sh"; } >"$u"
		echo "${@: -1}" >/run/probe$n.sh
	}
	w='mkdir /sys/fs/bpf/probe/x && rmdir /sys/fs/bpf/probe/x && echo WRITABLE'
	r='ls -ld /sys/fs/bpf /sys/fs/bpf/probe; ls /sys/fs/bpf/probe && echo READABLE; grep -E " /sys/fs/bpf| /sys " /proc/self/mountinfo | cut -d" " -f5,6,9'
	probe pkt_rwp -p ProtectKernelTunables=yes -p ReadWritePaths=/sys/fs/bpf -- "$w"
	probe strict_rwp -p ProtectSystem=strict -p ReadWritePaths=/sys/fs/bpf -- "$w"
	probe rop_rwp -p ProtectSystem=strict -p ReadOnlyPaths=/sys -p ReadWritePaths=/sys/fs/bpf -- "$w"
	probe pkt_tmpfs -p User=nobody -p Group=nogroup -p ProtectKernelTunables=yes -p TemporaryFileSystem=/sys/fs/bpf -p BindReadOnlyPaths=/sys/fs/bpf/probe -- "$r"
	probe rop_tmpfs -p User=nobody -p Group=nogroup -p ProtectSystem=strict -p ReadOnlyPaths=/sys -p TemporaryFileSystem=/sys/fs/bpf -p BindReadOnlyPaths=/sys/fs/bpf/probe -- "$r"
	probe tmpfs_only -p User=nobody -p Group=nogroup -p TemporaryFileSystem=/sys/fs/bpf:mode=0755 -p BindReadOnlyPaths=/sys/fs/bpf/probe -- "$r"
	probe plain -p User=nobody -p Group=nogroup -- "$r"
	systemctl daemon-reload
	for i in $(seq $n); do
		systemctl start "probe$i.service" >"$out" 2>&1
		say "INFO: explore $(cat /run/probe$i.name): rc=$? $(cat "$out" /run/probe$i.out 2>/dev/null | tr '\n' ' ' | cut -c1-400)"
	done
	rmdir /sys/fs/bpf/probe
	say "INFO: $(systemd-analyze time --no-pager | head -1)"
	systemd-analyze blame --no-pager | head -12 | sed 's/^/@@ INFO: blame /'
	;;
*)
	say "FAIL: guest: unknown phase '$phase'"
	;;
esac
stamp "end"
say "END $phase"
