# Sourced by the guests' test scripts (tests/system/guest.sh,
# tests/selinux/guest.sh): the "@@ " lines on the serial console that the
# host's run.sh reads, and the steps' times.  The caller sets $out.
say() { echo "@@ $*"; }
pass() { say "PASS: $1"; }
fail() { say "FAIL: $1: $2"; }
# The guest's clock (seconds since boot, emulated time): "@@ T <s> <what>"
# lines after each step, which run.sh sums into the boot's cost line.
up() { cut -d' ' -f1 /proc/uptime; }
t_last=$(up)
stamp() {	# what
	local now
	now=$(up)
	say "T $(awk -v a="$t_last" -v b="$now" 'BEGIN {printf "%.1f", b - a}') $now $1"
	t_last=$now
}
check() {	# name, then a command that must succeed
	local name=$1
	shift
	if "$@" >"$out" 2>&1; then
		pass "$name"
	else
		fail "$name" "$* -> $(tail -6 "$out" | tr '\n' ' ' | cut -c1-600)"
	fi
	stamp "${name%%:*}: ${*:1:2}"
}
# Waits up to $2 s for a command to succeed, trying every 0.2 s.
wait_for() {
	local cmd=$1 end=$((SECONDS + $2))
	while ! eval "$cmd" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}
