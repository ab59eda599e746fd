#!/usr/bin/env bash
# The Debian package for real: make deb, lintian, dpkg -i, the installed
# tools with no flags (loader loads the installed objects, dump shows a real
# compaction histogram), an upgrade to a second build that keeps the pinned
# counts, then dpkg -P and nothing left behind.  Whatever happens, the trap
# purges the package and restores the machine.
set -u
cd "$(dirname "$0")/../.." || exit 1
T=deb
PIN=/sys/fs/bpf/kernelstats
tmp=
installed=0

say() { echo "$1: $T: $2"; }
skip() { say SKIP "$1"; exit 0; }

[ "$(id -u)" -eq 0 ] || skip "needs root (dpkg -i)"
command -v dpkg-buildpackage >/dev/null || { say FAIL "dpkg-buildpackage missing: make deps installs debhelper"; exit 1; }
dpkg-query -W -f='${Status}' kernelstats 2>/dev/null | grep -q 'ok installed' &&
	skip "the kernelstats package is installed here; dpkg -P kernelstats first"
for d in "$PIN" /run/kernelstats /var/lib/kernelstats /etc/kernelstats; do
	[ -e "$d" ] && skip "$d exists (make run or make install?); the package test owns the default paths, remove it first"
done

had_group=$(getent group kstats >/dev/null && echo 1 || echo 0)
had_user=$(getent passwd kstats >/dev/null && echo 1 || echo 0)

cleanup() {
	[ "$installed" -eq 1 ] && dpkg -P kernelstats >/dev/null 2>&1
	[ -d "$PIN" ] && rm -rf "$PIN"
	rm -rf /run/kernelstats /var/lib/kernelstats /etc/kernelstats \
	       /var/lib/kernelstats.created-by-package
	[ "$had_user" -eq 0 ] && getent passwd kstats >/dev/null && userdel kstats
	[ "$had_group" -eq 0 ] && getent group kstats >/dev/null && groupdel kstats
	[ -n "$tmp" ] && rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tmp=$(mktemp -d /tmp/kstats-test-$$-deb-XXXXXX) || exit 1
check() {	# name, then a command that must succeed
	local name=$1
	shift
	if "$@"; then say PASS "$name"; else say FAIL "$name: $*"; fi
}

# The second version: the same tree with a newer changelog entry, built
# again without cleaning (only the version differs).
build_v2() {
	local src=$tmp/src
	{ sed -n '1s/(\([^)]*\))/(\1+test2)/p' debian/changelog
	  printf '\n  * Test upgrade.\n\n -- kernelstats <kernelstats@example.org>  %s\n\n' "$(date -R)"
	  cat debian/changelog; } >"$src/debian/changelog.new" &&
	mv "$src/debian/changelog.new" "$src/debian/changelog" &&
	(cd "$src" && dpkg-buildpackage -us -uc -b -nc -jauto) >"$tmp/build2.log" 2>&1
}

compaction_count() {	# the CompactionDuration count of kstats dump --json
	kstats dump --json CompactionDuration 2>/dev/null |
		jq '[.metrics[] | select(.metric == "CompactionDuration") | .histograms[].count] | add // 0'
}

compaction_map_id() {
	bpftool -j map show pinned "$PIN/map_compaction_compaction_duration_map" 2>/dev/null | jq .id
}

fire_compaction() {
	local i
	for i in 1 2 3; do echo 1 >/proc/sys/vm/compact_memory; done
}

if ! make -s --no-print-directory deb DEB_DIR="$tmp" >"$tmp/build.log" 2>&1; then
	say FAIL "make deb: $(tail -3 "$tmp/build.log" | tr '\n' ' ')"
	exit 1
fi
v1=$(ls "$tmp"/kernelstats_*_"$(dpkg --print-architecture)".deb)
check make_deb test -f "$v1"

lint=$(lintian "$v1" 2>&1 | grep -v 'running with root privileges')
no_errors() { ! grep -q '^E:' <<<"$lint"; }
check lintian_no_errors no_errors
[ -n "$lint" ] && echo "$lint" | sed 's/^/    lintian| /'

dpkg -i "$v1" >"$tmp/install.log" 2>&1 && installed=1
check dpkg_install test "$installed" -eq 1
[ "$installed" -eq 1 ] || { sed 's/^/    | /' "$tmp/install.log"; exit 1; }
check accounts_created bash -c 'getent group kstats >/dev/null && getent passwd kstats >/dev/null'
check state_dir_modes test "$(stat -c '%U:%G %a' /var/lib/kernelstats)" = "kstats:kstats 750"

out=$(kstats-loader 2>&1)
check loader_no_flags grep -q '^compaction  *LOADED' <<<"$out"
fire_compaction
check dump_no_flags bash -c "kstats dump CompactionDuration | grep -q 'count [1-9]'"
c1=$(compaction_count)
id1=$(compaction_map_id)

if build_v2; then
	v2=$(ls "$tmp"/kernelstats_*+test2_*.deb)
	check upgrade_install bash -c "dpkg -i '$v2' >'$tmp/upgrade.log' 2>&1"
	check upgrade_version test "$(dpkg-query -W -f='${Version}' kernelstats)" = "$(dpkg-deb -f "$v2" Version)"
	kstats-loader >/dev/null 2>&1
	check upgrade_keeps_map test "$(compaction_map_id)" = "$id1"
	c2=$(compaction_count)
	check upgrade_keeps_counts test "${c2:-0}" -ge "${c1:-1}"
else
	say FAIL "second build: $(tail -3 "$tmp/build2.log" | tr '\n' ' ')"
fi

files=$(dpkg-query -L kernelstats | while read -r f; do [ -f "$f" ] && echo "$f"; done)
dpkg -P kernelstats >"$tmp/purge.log" 2>&1 && installed=0
check dpkg_purge test "$installed" -eq 0
left=$(for f in $files; do [ -e "$f" ] && echo "$f"; done)
check purge_removes_files test -z "$left"
check purge_unpins bash -c "[ ! -d $PIN ] || [ -z \"\$(ls -A $PIN)\" ]"
check purge_removes_state bash -c '! [ -e /var/lib/kernelstats ] && ! [ -e /etc/kernelstats ] && ! [ -e /run/kernelstats ]'
# (Another test run creating the group meanwhile would show here too.)
accounts=$(getent group kstats >/dev/null && echo 1 || echo 0)$(getent passwd kstats >/dev/null && echo 1 || echo 0)
check purge_accounts_as_before test "group,user: $accounts" = "group,user: $had_group$had_user"
