#!/bin/bash
# test_selinux inside the guest (tests/selinux/run.sh): Debian 12 with
# selinux-policy-default, booted enforcing.  Run by the image's
# systest.service (init_t) at the end of each boot; the phase comes from
# the kernel command line (systest.phase=).  Prints "@@ " lines on the
# serial console, as tests/system/guest.sh does.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_PAGER= SYSTEMD_COLORS=0
# As an administrator's shell (unconfined_t), not the unit's initrc_t
# (init_t executing a shell): initrc_t executing kstats enters kstats_t (the
# units' domain), whose output here would be refused.  The units' domains
# are reached through units below.
[ "$(cut -d: -f3 /proc/self/attr/current)" = unconfined_t ] ||
	exec runcon -t unconfined_t -- /bin/bash "$0" "$@"
D=/mnt/systest
PIN=/sys/fs/bpf/kernelstats
BPF=/usr/lib/kernelstats/bpf
ATOMS=/var/lib/kernelstats/atoms
phase=$(sed -n 's/.*systest\.phase=\([a-z0-9]*\).*/\1/p' /proc/cmdline)
out=/run/systest.out
# The module's domains, and any of its types.
DOMAINS='kstats_loader_t|kstats_t'
TYPES='kstats_([a-z_]*_)?t|bpf_t'

info() { say "INFO: $*"; }
# shellcheck source=tests/system/guest_lib.sh
. "$D/guest_lib.sh"

# Every AVC denial so far, all boots: the audit log, and the kernel's log
# (the journal keeps it across boots) for those before auditd ran.
denials() {
	{ cat /var/log/audit/audit.log* 2>/dev/null; journalctl -k --no-pager -o cat 2>/dev/null; } |
		grep 'avc: *denied' | sort -u
}
# Denials whose source is one of the module's domains.
domain_denials() { denials | grep -E "scontext=[^ ]*:($DOMAINS):" ; }
no_domain_denials() {
	domain_denials >"$out.d"
	cat "$out.d"
	[ ! -s "$out.d" ]
}

# The type of a path (ls -Z), and the check that all of them have one.
type_of() { stat -c %C "$1" | cut -d: -f3; }
all_typed() {	# type path...
	local t=$1 p bad=0
	shift
	for p in "$@"; do
		echo "$(stat -c %C "$p") $p"
		[ "$(type_of "$p")" = "$t" ] || bad=1
	done
	[ "$bad" = 0 ] && [ $# -gt 0 ]
}

# The domain a unit's process runs in, seen with ps -Z while it waits for
# a lock the test holds (the loader's run-dir lock, the pull's state lock).
domain_while_locked() {	# lockfile unit comm
	local lock=$1 unit=$2 comm=$3
	: >"$out.ps"
	flock "$lock" -c "systemctl restart --no-block $unit &&
		for i in \$(seq 300); do
			ps -e -o label=,pid=,comm=,args= | awk '\$3 == \"$comm\"' | grep . >$out.ps && break
			sleep 0.1
		done"
	cat "$out.ps"
	[ -s "$out.ps" ]
}
ran_in() {	# domain: every process ps showed runs in it
	[ -s "$out.ps" ] && ! awk '{print $1}' "$out.ps" | grep -v ":$1:"
}

loader_ok() {
	if [ "$(systemctl show -P ActiveState kernelstats-loader.service)" != active ] ||
	   [ "$(systemctl show -P ExecMainStatus kernelstats-loader.service)" != 0 ]; then
		journalctl -b -u kernelstats-loader.service --no-pager | tail -4
		return 1
	fi
	kstats status >"$out.status" 2>&1
	cat "$out.status"
	! grep -q FAILED "$out.status" && grep -qE '^dmabuf +LOADED' "$out.status"
}

# The boot's maps are the loader's: a kstats_t unit reads them, and
# kstats_t may read only maps that kstats_loader_t created (the kernel
# labels a map with its creator's domain).
boot_loader_domain() {
	local f=/var/lib/kernelstats/systest.prom	# user kstats' own directory
	loader_ok && run_unit dump User=kstats Group=kstats -- "/usr/bin/kstats dump --prometheus --obj-dir $BPF --output $f" &&
	grep -E '^kstats_.*compaction.*_bucket' "$f" | head -1 | grep . && rm -f "$f"
}

pull_in_domain() {
	local before
	before=$(ls "$ATOMS" 2>/dev/null | wc -l)
	# The shutdown pull of the last boot made it, user kstats'.
	[ -f /var/lib/kernelstats/state/lock ] || { echo "no pull lock file"; return 1; }
	echo 1 >/proc/sys/vm/compact_memory	# counts to pull
	mkdir -p /run/systemd/system/kernelstats-pull.timer.d
	printf '[Timer]\nOnActiveSec=1s\nRandomizedDelaySec=0\nAccuracySec=1us\n' \
		>/run/systemd/system/kernelstats-pull.timer.d/systest.conf
	systemctl daemon-reload
	flock /var/lib/kernelstats/state/lock -c "systemctl restart kernelstats-pull.timer &&
		for i in \$(seq 600); do
			ps -e -o label=,pid=,comm=,args= | awk '\$3 == \"kstats\"' | grep . >$out.ps && break
			sleep 0.1
		done"
	cat "$out.ps"
	wait_for '[ "$(systemctl show -P ActiveState kernelstats-pull.service)" = inactive ] &&
		  [ "$(systemctl show -P ExecMainExitTimestampMonotonic kernelstats-pull.service)" != 0 ]' 120
	rm -rf /run/systemd/system/kernelstats-pull.timer.d
	systemctl daemon-reload
	[ "$(systemctl show -P Result kernelstats-pull.service)" = success ] ||
		{ journalctl -b -u kernelstats-pull.service --no-pager | tail -5; return 1; }
	ran_in kstats_t || return 1
	[ "$(ls "$ATOMS" | wc -l)" -gt "$before" ] || { echo "no new atoms file"; return 1; }
	all_typed kstats_var_lib_t /var/lib/kernelstats "$ATOMS" "$ATOMS"/* /var/lib/kernelstats/state/*
}

textfile_served() {
	local f
	f=$(grep -o -- '--output [^ ]*' /lib/systemd/system/kernelstats-textfile.service | cut -d' ' -f2)
	echo "ARGS=\"--collector.textfile.directory=${f%/*}\"" >/etc/default/prometheus-node-exporter
	systemctl restart prometheus-node-exporter.service || return 1
	systemctl start kernelstats-textfile.service ||
		{ journalctl -b -u kernelstats-textfile.service --no-pager | tail -5; return 1; }
	all_typed kstats_textfile_dir_t "${f%/*}" && all_typed kstats_textfile_t "$f" || return 1
	wait_for 'curl -sf -o "$out.metrics" http://127.0.0.1:9100/metrics' 120 ||
		{ echo "node_exporter does not answer"; return 1; }
	grep -E '^kstats_.*compaction.*_bucket\{' "$out.metrics" | head -2
	grep -qE '^kstats_.*compaction.*_bucket\{.*le="\+Inf"' "$out.metrics"
}

installed_typed() {
	all_typed kstats_loader_exec_t /usr/sbin/kstats-loader &&
	all_typed kstats_exec_t /usr/bin/kstats &&
	all_typed kstats_obj_t "$BPF" "$BPF"/* &&
	all_typed kstats_var_lib_t /var/lib/kernelstats
}

# The loader's unit restarted with two objects more: an object that
# crashes libbpf's parse (crash.bpf, made on the host), so that the next
# prober is the loader executed afresh (--probe-server), and an object with
# maps of its own (systestExtra.bpf, a loader test object).  ps -Z sees the
# loader while it waits for the run-dir lock the test holds, then the
# executed prober.
loader_restart() {
	find "$PIN" -mindepth 1 | sort >"$out.pins"
	cp "$D/extra.bpf" "$BPF/systestExtra.bpf" && cp "$D/crash.bpf" "$BPF/crash.bpf" || return 1
	domain_while_locked /run/kernelstats/loader.lock kernelstats-loader.service kstats-loader
	cp "$out.ps" "$out.main"
	for i in $(seq 3000); do
		ps -e -o label=,pid=,comm=,args= | grep -- '--probe-server' | grep -v grep >"$out.ps" && break
		[ $((i % 20)) != 0 ] ||
			[ "$(systemctl show -P ActiveState kernelstats-loader.service)" = activating ] || break
	done
	cat "$out.ps" >>"$out.main"
	wait_for '[ "$(systemctl show -P ActiveState kernelstats-loader.service)" != activating ]' 240
	rm -f "$BPF/crash.bpf"
	cat "$out.main"
	kstats status 2>&1 | grep -E '^(crash|systestExtra) '
}
loader_domains() {
	cp "$out.main" "$out.ps" && ran_in kstats_loader_t &&
	grep -q -- '--probe-server' "$out.main" && grep -q 'kstats-loader  */usr/sbin/kstats-loader --boot' "$out.main" &&
	! journalctl -b --no-pager | grep 'cannot start a prober'
}

pins_typed() { all_typed kstats_bpf_t "$PIN" $(find "$PIN" -mindepth 1); }

# The new object's pins, with the module's type: no policy change.
extra_pins() {
	kstats status 2>&1 | grep -E '^systestExtra +LOADED' || return 1
	find "$PIN" -mindepth 1 | sort | comm -13 "$out.pins" - >"$out.new"
	[ -s "$out.new" ] && all_typed kstats_bpf_t $(cat "$out.new")
}

no_permissive() {
	semanage permissive -l >"$out.p" 2>&1 || return 1
	seinfo --permissive /sys/fs/selinux/policy >>"$out.p" 2>&1 || return 1
	cat "$out.p"
	! grep -E "$DOMAINS" "$out.p"
}

# A transient unit (no D-Bus here for systemd-run): systemd starts it,
# in the domain its SELinuxContext= or its binary's type gives.
run_unit() {	# name, unit lines..., --, ExecStart
	local u=/run/systemd/system/systest-$1.service rc
	shift
	{ printf '[Service]\nType=oneshot\n'
	  while [ "$1" != -- ]; do echo "$1"; shift; done
	  echo "ExecStart=$2"; } >"$u"
	systemctl daemon-reload
	systemctl start "${u##*/}"
	rc=$?
	echo "unit: ExecMainStatus=$(systemctl show -P ExecMainStatus "${u##*/}")"
	return $rc
}

# A denial that appeared while running "$@" (any exit), naming the
# module's types.  Prints the new AVC lines.
new_denials() {	# pattern command...
	local pat=$1
	shift
	denials >"$out.before"
	"$@" >"$out.cmd" 2>&1
	echo "exit $?: $(head -3 "$out.cmd" | tr '\n' ' ')"
	sleep 1
	denials | comm -13 "$out.before" - | grep -E "$pat"
}

# kstats ship from its unit, as an operator turns it on (ship.conf, a
# password file), to a listener on 127.0.0.1:8123 that answers as
# ClickHouse answers an INSERT (200, no body) and records, while the POST
# is open, the domain of the kstats that sent it (ps -Z).
ship_listener() {	# port
	python3 -c '
import http.server, subprocess, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        ps = subprocess.run(["ps", "-e", "-o", "label=,comm=,args="],
                            capture_output=True, text=True).stdout.splitlines()
        with open(sys.argv[2], "a") as f:
            f.write("POST " + self.path.split("?")[0] + "\n")
            f.write("".join("PS " + l + "\n" for l in ps if l.split()[1:2] == ["kstats"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
' "$1" "$out.posts" &
	lpid=$!
	wait_for "bash -c 'exec 3<>/dev/tcp/127.0.0.1/$1'" 30
}
ship_in_domain() {
	local conf=/etc/kernelstats/ship.conf pw=/etc/kernelstats/ship.password
	: >"$out.posts"
	ship_listener 8123 || { kill "$lpid"; echo "the listener on 8123 did not start"; return 1; }
	install -m 0600 -o kstats -g kstats /dev/null "$pw" && echo systest >"$pw" &&
	cp "$conf" "$out.conf" &&
	printf 'URL=http://127.0.0.1:8123/\nARGS="--host systest --user ingest --password-file %s"\n' "$pw" >"$conf" ||
		return 1
	stat -c '%n %U %a %C' "$pw" "$conf"
	timeout 300 systemctl start kernelstats-ship.service
	kill "$lpid"
	cp "$out.conf" "$conf"
	[ "$(systemctl show -P Result kernelstats-ship.service)" = success ] ||
		{ journalctl -b -u kernelstats-ship.service --no-pager | tail -5; return 1; }
	cat "$out.posts"
	grep -q '^POST ' "$out.posts" && grep -q '^PS ' "$out.posts" &&
	! grep '^PS ' "$out.posts" | grep -v ':kstats_t:' &&
	all_typed kstats_var_lib_t /var/lib/kernelstats/state/shipped
}

# kstats ship to a port the policy does not give it (1024-65535 but 8123
# is unreserved_port_t): refused at connect, with an AVC.  A state dir with
# no record, so that every atom is sent again (no atom left: no connect).
ship_port_refused() {
	local st=/var/lib/kernelstats/systest-ship
	install -d -o kstats -g kstats -m 0750 "$st" || return 1
	new_denials "denied +\{ name_connect \}.*scontext=[^ ]*:kstats_t:.*tcontext=[^ ]*:unreserved_port_t:.*tclass=tcp_socket" \
		run_unit ship_port User=kstats Group=kstats -- \
		"/usr/bin/kstats ship --url http://127.0.0.1:18123/ --state-dir $st --host systest --timeout 5" | tee "$out.sp"
	journalctl -b -u systest-ship_port.service --no-pager -o cat | grep 'kstats ship:'
	rm -rf "$st"
	grep -q '^exit [1-9]' "$out.sp" && grep -q avc "$out.sp"
}

# A confined login user (user_u:user_r:user_t) in group kstats: the Unix
# modes let it read the pins (as test_system's member does), SELinux does
# not.  Started by systemd with its SELinux context, the working directory
# the pin directory (so the refusal is on the pins, not on bpffs' root).
user_refused() {
	id kuser >/dev/null 2>&1 || useradd -M -s /bin/sh -G kstats kuser
	stat -c '%n %A %U:%G %C' /sys/fs/bpf "$PIN"
	new_denials "scontext=user_u:user_r:user_t:.*tcontext=[^ ]*:kstats_bpf_t:" \
		run_unit user User=kuser SELinuxContext=user_u:user_r:user_t:s0 \
		WorkingDirectory=$PIN -- '/bin/sh -c "ls -l . && cat ./* >/dev/null"' | tee "$out.u"
	grep -q '^exit [1-9]' "$out.u" && grep -q avc "$out.u"
}

# The reader's domain (CAP_BPF, as its units give it) loading a program:
# the prober labelled kstats_exec_t, which systemd (init_t) runs in kstats_t.
prog_load_refused() {
	cp "$D/prog_load" /run/systest-prog_load && chcon -t kstats_exec_t /run/systest-prog_load || return 1
	new_denials "denied +\{ prog_load \}.*scontext=[^ ]*:kstats_t:.*tcontext=[^ ]*:kstats_t:.*tclass=bpf" \
		run_unit prog_load User=kstats AmbientCapabilities=CAP_BPF -- /run/systest-prog_load | tee "$out.pl"
	grep -q '^exit [1-9]' "$out.pl" && grep -q avc "$out.pl"
}

wait_for 'systemctl is-system-running | grep -qE "running|degraded"' 300 ||
	info "boot not finished: $(systemctl is-system-running)"
say "BEGIN $phase $(uname -r) systemd $(systemctl --version | sed -n '1s/systemd \([0-9]*\).*/\1/p')"
stamp "boot finished: $(systemd-analyze time --no-pager | head -1)"
info "getenforce: $(getenforce); $(sestatus | grep -E 'policy name|mode' | tr -s ' ' | tr '\n' ';')"
check "$phase: getenforce prints Enforcing" test "$(getenforce)" = Enforcing

case $phase in
install)
	# TCG runs the verifier tens of times slower than hardware (see
	# tests/system/guest.sh): the test's drop-in.
	mkdir -p /etc/systemd/system/kernelstats-loader.service.d
	printf '[Service]\nTimeoutStartSec=300\n' >/etc/systemd/system/kernelstats-loader.service.d/systest.conf
	# The test's own rule: systemd may start a confined login user.
	# (From /usr/share/selinux, which semanage_t reads; the test's disk is
	# unlabeled_t.)
	cp "$D/login.cil" /usr/share/selinux/default/systest_login.cil
	check "install: semodule -i login.cil (the test's: init_t may start user_t)" \
		semodule -i /usr/share/selinux/default/systest_login.cil
	check "install: dpkg -i (postinst: semodule -i, restorecon)" dpkg -i "$D/kernelstats.deb"
	check "install: semodule -l lists kernelstats and kernelstats_bpffs" \
		sh -c 'semodule -l | grep -x kernelstats && semodule -l | grep -x kernelstats_bpffs'
	check "install: ls -Z: the binaries, objects and state are labelled as the module says" installed_typed
	check "install: the loader started by postinst loaded every object" loader_ok
	;;
boot)
	check "boot: the loader ran at boot in kstats_loader_t (kstats_t reads the maps it made), every object this kernel runs loaded" boot_loader_domain
	check "boot: ls -Z: $PIN and every pin are kstats_bpf_t" pins_typed
	info "boot: $(head -3 "$out" | tr '\n' ' ')"
	check "boot: ls -Z: /run/kernelstats and the status file are kstats_runtime_t" \
		all_typed kstats_runtime_t /run/kernelstats /run/kernelstats/loader-status.json
	check "boot: the pull timer's service runs in kstats_t (ps -Z) and writes atoms labelled kstats_var_lib_t" pull_in_domain
	info "boot: pull: $(head -3 "$out" | tr '\n' ' ')"
	check "boot: the textfile export (kstats_textfile_t) is written and node_exporter serves it" textfile_served
	loader_restart >"$out.restart" 2>&1
	info "boot: loader restarted with crash.bpf and systestExtra.bpf: $(tr '\n' ' ' <"$out.restart" | cut -c1-700)"
	check "boot: the loader's unit runs in kstats_loader_t, the prober it executes after a crash too (ps -Z)" loader_domains
	check "boot: ls -Z: the new object's pins are kstats_bpf_t, with no policy change" extra_pins
	info "boot: new pins: $(head -4 "$out" | tr '\n' ' ')"
	check "boot: kstats ship's unit (ship.conf, a password file) reaches ClickHouse's port 8123 from kstats_t and records what was acknowledged" ship_in_domain
	info "boot: ship: $(tr '\n' ' ' <"$out" | cut -c1-600)"
	check "boot: no kernelstats domain is permissive (semanage permissive -l, seinfo --permissive)" no_permissive
	check "boot: no AVC denial for a kernelstats domain across the boots" no_domain_denials
	check "boot: a confined user_t in group kstats is refused the pins (AVC on kstats_bpf_t)" user_refused
	info "boot: user_t: $(tail -2 "$out" | tr '\n' ' ' | cut -c1-500)"
	check "boot: kstats_t cannot load a program (AVC bpf { prog_load })" prog_load_refused
	info "boot: prog_load: $(tail -2 "$out" | tr '\n' ' ' | cut -c1-500)"
	check "boot: kstats_t cannot connect to another port (AVC tcp_socket { name_connect } on unreserved_port_t)" ship_port_refused
	info "boot: ship to 18123: $(tail -2 "$out" | tr '\n' ' ' | cut -c1-500)"
	;;
*)
	say "FAIL: guest: unknown phase '$phase'"
	;;
esac
# Every denial that names the module's types, and how many there are in all.
denials | grep -E "$TYPES" | sed 's/^.*avc: *//' | cut -c1-300 | sort -u | sed 's/^/@@ INFO: avc: /'
info "$(denials | wc -l) AVC denials in all so far"
stamp "end"
say "END $phase"
