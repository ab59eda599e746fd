#!/usr/bin/env bash
# test_loader_members creates group kstats when it is missing.  Beside
# another process that holds /etc/group's lock (another test's useradd),
# it must wait for the lock, not skip.  Runs it on a private copy of /etc
# (own mount namespace) without group kstats, while the lock is held for
# 2 s by a live process, as shadow's tools hold it.
set -u
cd "$(dirname "$0")/../.." || exit 1
T=members_group_lock
BUILD=${KSTATS_BUILD:-build/san}
BIN=$BUILD/tests/kernel/test_loader_members
HOLD_S=2
export KSTATS_BUILD=$BUILD CMOCKA_MESSAGE_OUTPUT=TAP

inside() {	# private copy of /etc
	local out rc=0

	cp -a /etc/. "$1"/ && mount --bind "$1" /etc || { echo "FAIL: $T: cannot copy /etc"; exit 1; }
	sed -i '/^kstats:/d' /etc/group /etc/gshadow
	# shadow's lock: a link named group.lock holding a live pid (this shell).
	printf '%s' "$$" >/etc/group.lock
	(sleep "$HOLD_S"; rm -f /etc/group.lock) &
	out=$("$BIN" 2>&1) || rc=$?
	wait
	if grep -q '^SKIP:.*no group' <<<"$out"; then
		echo "FAIL: $T: skipped while /etc/group was locked for ${HOLD_S}s: $(grep -m1 '^SKIP' <<<"$out")"
	elif grep -q '^SKIP' <<<"$out"; then
		echo "SKIP: $T: $(grep -m1 '^SKIP' <<<"$out" | cut -d: -f2-)"
	elif [ "$rc" -ne 0 ] || grep -q '^not ok' <<<"$out"; then
		echo "FAIL: $T: test_loader_members failed (exit $rc) after waiting for the lock"
		sed 's/^/    | /' <<<"$out" | tail -20
	elif getent group kstats >/dev/null; then
		echo "PASS: $T: test_loader_members waited for /etc/group's lock, created group kstats and ran"
	else
		echo "FAIL: $T: no group kstats after the run"
	fi
}

if [ "${1:-}" = --inside ]; then
	inside "$2"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "SKIP: $T: needs root (groupadd, mount namespace)"; exit 0; }
[ -x "$BIN" ] || { echo "FAIL: $T: $BIN is not built (make test-build)"; exit 1; }
tmp=$(mktemp -d /tmp/kstats-test-$$-lock-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
unshare --mount --propagation private bash "$0" --inside "$tmp"
