# Sourced by the shell tests that act as a throwaway user kst<pid> (its own
# group, not in kstats unless asked) against the real tools.
# testuser_setup NAME TAG [COMMAND...]: SKIPs without root or a COMMAND,
# makes $tmp and user $U, and removes the user, "$PIN" "$PIN"-* and $tmp at
# exit.  Group kstats is made if missing, as make install does.
testuser_setup() {
	local name=$1 tag=$2 need
	shift 2
	for need in setpriv useradd userdel groupadd "$@"; do
		command -v "$need" >/dev/null || { echo "SKIP: $name: no $need"; exit 0; }
	done
	[ "$(id -u)" = 0 ] || { echo "SKIP: $name: needs root"; exit 0; }
	U=kst$$
	tmp=$(mktemp -d "/tmp/kstats-test-$$-$tag-XXXXXX") || exit 1
	chmod 0755 "$tmp"
	trap testuser_cleanup EXIT
	trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
	trap 'exit 143' TERM
	etc_locked groupadd -f --system kstats ||
		{ echo "FAIL: setup: groupadd kstats failed"; exit 1; }
	etc_locked useradd --system --no-create-home --user-group --shell /usr/sbin/nologin "$U" ||
		{ echo "FAIL: setup: useradd $U failed"; exit 1; }
}

# testuser_load: the build in $B has the tools and compaction.bpf, and the
# loader loads $B/bpf into "$PIN" (its status in $tmp/run); else FAIL, exit.
testuser_load() {
	[ -x "$B/kstats" ] && [ -f "$B/bpf/compaction.bpf" ] ||
		{ echo "FAIL: setup: build $B first"; exit 1; }
	"$B/kstats-loader" --obj-dir "$B/bpf" --pin-dir "$PIN" --run-dir "$tmp/run" >/dev/null ||
		{ fail "setup: the loader failed on $B/bpf"; exit 1; }
}

testuser_cleanup() {
	userdel "$U" 2>/dev/null
	rm -rf "$PIN" "$PIN"-* "$tmp"
}

# CMD...: again while it exits 10, /etc/passwd or /etc/group locked by
# another process (another test's useradd), for up to 30 s.
etc_locked() {
	local i rc
	for i in $(seq 120); do
		"$@"
		rc=$?
		[ "$rc" = 10 ] || return "$rc"
		sleep 0.25
	done
	return "$rc"
}

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1"; }

# as GROUP CMD...: as $U with primary group GROUP, no other group, CAP_BPF only.
as() {
	local group=$1
	shift
	setpriv --reuid "$U" --regid "$group" --clear-groups \
		--inh-caps +bpf --ambient-caps +bpf -- "$@"
}

# run CMD...: sets rc, out (stdout), err (stderr), nerr (stderr lines).
run() {
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
	nerr=$(grep -c '' "$tmp/err")
}
