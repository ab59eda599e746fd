#!/usr/bin/env bash
# The Debian package for real: make deb, lintian, then dpkg -i, -r and -P
# of it with this host's dpkg, adduser and systemd-tmpfiles, loading into
# this kernel.  Each run happens in a throwaway copy of this machine: an
# overlay over / (writes go to a tmpfs), a fresh bpffs on /sys/fs/bpf and a
# fresh /run, in its own mount and pid namespaces.  The bpffs is mounted
# 0700, as systemd mounts it.  So the host's default
# paths (make run's pins, an installed package, group kstats) neither stop
# the test nor get touched by it, and an interrupted run leaves nothing.
#
# Checked: the installed tools with no flags, the textfile export (as its
# unit runs it: root with CAP_BPF only) into node_exporter's own directory
# beside another collector's file, its refusal of a directory or symlink
# that user prometheus swapped in, the cron job as user kstats, an upgrade that keeps the pinned counts, one
# whose changed map layout waits for the next boot and is pulled meanwhile, removal
# that pulls before it unloads, purge that leaves nothing (no ACL or file in
# node_exporter's directory either), purge beside admins in group kstats,
# and refusals of a root-shaped kstats account and a symlinked state dir.
set -u
cd "$(dirname "$0")/../.." || exit 1
T=deb
PIN=/sys/fs/bpf/kernelstats
STATE=/var/lib/kernelstats
NE_DIR=/var/lib/prometheus/node-exporter
SELF=$(realpath "$0")

failed=0
say() {
	echo "$1: $T: $2"
	[ "$1" != FAIL ] || failed=1
}
skip() { say SKIP "$1"; exit 0; }
check() {	# name, then a command that must succeed
	local name=$1
	shift
	if "$@"; then say PASS "$name"; else say FAIL "$name: $*"; fi
}

# --- inside the copy (pid 1 of its namespace, chrooted to the overlay) ---

# The state of a machine the package was never installed on.
fresh() {
	dpkg-query -W -f='${Status}' kernelstats 2>/dev/null | grep -q 'ok installed\|config-files\|half' &&
		dpkg -P kernelstats >/dev/null 2>&1
	getent passwd kstats >/dev/null && userdel kstats 2>/dev/null
	sed -i '/^kstats:/d' /etc/passwd /etc/shadow
	getent group kstats >/dev/null && groupdel -f kstats 2>/dev/null
	sed -i '/^kstats:/d' /etc/group /etc/gshadow
	rm -rf "$PIN" /run/kernelstats "$STATE" /var/lib/kernelstats-textfile \
	       /etc/kernelstats /var/lib/kernelstats.created-by-package \
	       "$NE_DIR/kernelstats.prom"
}

# node_exporter's directory as Debian's prometheus-node-exporter leaves it:
# root's, inside /var/lib/prometheus owned by user prometheus, with another
# collector's file (prometheus-node-exporter-collectors' apt.prom).
node_exporter_layout() {	# owner of /var/lib/prometheus
	# made in the overlay's upper layer: a merged directory cannot be renamed
	rm -rf "$NE_DIR"
	install -d -o root -g root -m 0755 "$NE_DIR"
	chown "$1" /var/lib/prometheus
	echo 'apt_upgrades_pending{arch="",origin=""} 0' >"$NE_DIR/apt.prom"
}

other_collector_kept() {
	[ "$(cat "$NE_DIR/apt.prom")" = 'apt_upgrades_pending{arch="",origin=""} 0' ]
}

as_prometheus() { setpriv --reuid=prometheus --regid=prometheus --clear-groups "$@"; }

# User prometheus swaps node_exporter's directory (it owns the one above)
# for a symlink to a directory of its own, or for a directory of its own:
# the export refuses with one line, and writes nothing anywhere.
swap_refused() {	# symlink|directory, log
	local how=$1 log=$2 theirs=/var/lib/prometheus/theirs rc=0

	as_prometheus mv "$NE_DIR" /var/lib/prometheus/node-exporter.real || return 1
	as_prometheus mkdir "$theirs" || return 1
	if [ "$how" = symlink ]; then
		as_prometheus ln -s "$theirs" "$NE_DIR" || return 1
	else
		as_prometheus mkdir "$NE_DIR" || return 1
	fi
	textfile_export >"$log" 2>&1 || rc=$?
	[ "$rc" -ne 0 ] && [ "$(grep -c 'cannot write' "$log")" -eq 1 ] &&
		grep -q "$NE_DIR is .*; make it root's" "$log" &&
		[ -z "$(ls -A "$theirs")" ] && ! [ -e "$NE_DIR/kernelstats.prom" ] &&
		[ "$(find /var/lib/prometheus -name '*kernelstats.prom*')" = \
		  /var/lib/prometheus/node-exporter.real/kernelstats.prom ]
	rc=$?
	rm -rf "$NE_DIR" "$theirs"
	mv /var/lib/prometheus/node-exporter.real "$NE_DIR"
	return $rc
}

acl_mark() { ls -ld "$1" | cut -d' ' -f1; }	# a trailing + is an ACL

install_pkg() {	# deb, log: 0 when dpkg -i succeeded
	dpkg -i "$1" >"$2" 2>&1
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

atoms_count() {	# kstats binary: CompactionDuration events in the state dir's atoms
	local f
	for f in "$STATE"/atoms/atoms-*.pb; do
		[ -f "$f" ] && "$1" atoms "$f"
	done | awk '/^[A-Za-z]/ { m = ($1 == "CompactionDuration") }
		    m && match($0, / : [0-9]+ /) { s += substr($0, RSTART + 3, RLENGTH - 4) }
		    END { print s + 0 }'
}

as_kstats() {	# the pull units' privileges: user kstats, CAP_BPF only
	setpriv --reuid=kstats --regid=kstats --init-groups --reset-env \
		--inh-caps=+bpf --ambient-caps=+bpf --bounding-set=-all,+bpf "$@"
}

# The textfile unit's own command, as it runs it: root with CAP_BPF only
# (no CAP_DAC_OVERRIDE), group kstats.
textfile_export() {
	local cmd

	cmd=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/kernelstats-textfile.service)
	# shellcheck disable=SC2086	# the unit's words
	setpriv --reuid=0 --regid=0 --groups="$(getent group kstats | cut -d: -f3)" \
		--reset-env --inh-caps=-all --bounding-set=-all,+bpf $cmd
}

textfile_written() {
	textfile_export >/dev/null 2>&1 &&
		grep -q '^kstats_compaction_duration_seconds_count ' "$(textfile_out)"
}

textfile_out() {
	sed -n 's/^ExecStart=.* --output \([^ ]*\).*/\1/p' /lib/systemd/system/kernelstats-textfile.service
}

one_line() {	# log, pattern: exactly one kernelstats: line, matching
	[ "$(grep -c '^kernelstats: ' "$1")" -eq 1 ] && grep '^kernelstats: ' "$1" | grep -q -- "$2"
}

# Install, use, upgrade, remove, purge, with node_exporter's layout as on
# a host where prometheus-node-exporter is installed.
scenario_lifecycle() {
	local v1=$1 v2=$2 log=$3 v3=$4 out ne_before c1 c2 id1 files left

	fresh
	node_exporter_layout prometheus:prometheus 2>/dev/null || node_exporter_layout nobody
	ne_before=$(acl_mark "$NE_DIR")
	# what an earlier version's export left in a directory of its own
	install -d -o nobody -m 0755 /var/lib/kernelstats-textfile
	echo stale >/var/lib/kernelstats-textfile/kernelstats.prom
	if ! install_pkg "$v1" "$log/install.log"; then
		say FAIL "dpkg_install: $(tr '\n' ' ' <"$log/install.log")"
		return
	fi
	say PASS dpkg_install
	check install_reports_nothing bash -c "! grep -q -i -e 'Could not execute' -e unsafe -e '^kernelstats:' '$log/install.log'"
	check accounts_created bash -c 'getent group kstats >/dev/null && getent passwd kstats >/dev/null'
	check state_dir_modes test "$(stat -c '%U:%G %a' "$STATE")" = "kstats:kstats 750"
	out=$(textfile_out)
	check textfile_in_node_exporter_dir test "${out%/*}" = "$NE_DIR"
	check rules_shipped bash -c "! command -v promtool >/dev/null ||
		promtool check rules /usr/share/kernelstats/prometheus/kernelstats.rules.yml >/dev/null"
	check old_textfile_dir_removed test ! -e /var/lib/kernelstats-textfile
	check bpffs_passable test "$(stat -c %a /sys/fs/bpf)" = 711

	out=$(kstats-loader 2>&1)
	check loader_no_flags grep -q '^compaction  *LOADED' <<<"$out"
	fire_compaction
	check dump_no_flags bash -c "kstats dump CompactionDuration | grep -q 'count [1-9]'"
	check textfile_export_in_node_exporter_dir textfile_written
	check textfile_export_root_0644 test "$(stat -c '%U %a' "$NE_DIR/kernelstats.prom")" = "root 644"
	check other_collector_file_kept other_collector_kept
	if getent passwd prometheus >/dev/null; then
		check swap_symlink_by_prometheus_refused swap_refused symlink "$log/swap-link.log"
		check swap_directory_by_prometheus_refused swap_refused directory "$log/swap-dir.log"
		check export_after_swaps_restored textfile_written
	else
		say SKIP "swap_by_prometheus: no user prometheus (prometheus-node-exporter is not installed)"
	fi
	check cron_pull_without_systemd bash -c "/etc/cron.daily/kernelstats >/dev/null && ls $STATE/atoms/atoms-*.pb >/dev/null 2>&1"
	c1=$(compaction_count)
	id1=$(compaction_map_id)

	if [ -n "$v2" ]; then
		check upgrade_install install_pkg "$v2" "$log/upgrade.log"
		check upgrade_version test "$(dpkg-query -W -f='${Version}' kernelstats)" = "$(dpkg-deb -f "$v2" Version)"
		kstats-loader >/dev/null 2>&1
		check upgrade_keeps_map test "$(compaction_map_id)" = "$id1"
		c2=$(compaction_count)
		check upgrade_keeps_counts test "${c2:-0}" -ge "${c1:-1}"
	fi
	# A map whose layout changed: the old one keeps counting and is
	# pulled (as user kstats) until the next boot loads the new object.
	if [ -f "$v3" ]; then
		check layout_upgrade_install install_pkg "$v3" "$log/layout.log"
		check layout_upgrade_waits jq -e '.objects[] | select(.name == "compaction") |
			.outcome == "REFUSED_INCOMPATIBLE_PIN"' /run/kernelstats/loader-status.json
		check layout_upgrade_keeps_map test "$(compaction_map_id)" = "$id1"
		fire_compaction
		c2=$(compaction_count)
		check layout_upgrade_pull bash -c "/etc/cron.daily/kernelstats >'$log/layout-pull.log' 2>&1"
		out=$(atoms_count /usr/bin/kstats)
		check layout_upgrade_counts_pulled test "$out" -ge "${c2:-1}" -a "${c2:-0}" -gt "${c1:-0}"
	fi

	fire_compaction
	c2=$(compaction_count)
	cp /usr/bin/kstats "$log/kstats"
	check dpkg_remove bash -c "dpkg -r kernelstats >'$log/remove.log' 2>&1"
	check remove_unpins bash -c "[ ! -d $PIN ] || [ -z \"\$(ls -A $PIN)\" ]"
	check remove_removes_export bash -c "! [ -e $NE_DIR/kernelstats.prom ]"
	check remove_keeps_other_collector other_collector_kept
	out=$(atoms_count "$log/kstats")
	check remove_pulls_before_unload test "$out" -ge "${c2:-1}" -a "${c2:-0}" -gt 0

	files=$(dpkg-query -L kernelstats 2>/dev/null | while read -r f; do [ -f "$f" ] && echo "$f"; done)
	check dpkg_purge bash -c "dpkg -P kernelstats >'$log/purge.log' 2>&1"
	left=$(for f in $files; do [ -e "$f" ] && echo "$f"; done)
	check purge_removes_files test -z "$left"
	check purge_removes_state bash -c "! [ -e $STATE ] && ! [ -e /etc/kernelstats ] && ! [ -e /run/kernelstats ] && ! [ -e /var/lib/kernelstats-textfile ]"
	check purge_removes_accounts bash -c '! getent group kstats && ! getent passwd kstats'
	check purge_leaves_node_exporter_dir bash -c "[ '$(acl_mark "$NE_DIR")' = '$ne_before' ] && ! [ -e $NE_DIR/kernelstats.prom ]"
}

# Where node_exporter's directory is reachable only through root's paths
# (no prometheus-node-exporter installed yet), the export must still leave
# no ACL entry and no file there: a later system user given kstats' uid
# could write what node_exporter serves.
scenario_no_acl_left() {
	local v1=$1 log=$2 ne_before

	fresh
	node_exporter_layout root:root
	ne_before=$(acl_mark "$NE_DIR")
	install_pkg "$v1" "$log/install-b.log" || { say FAIL "no_acl: dpkg -i failed"; return; }
	check no_acl_export_written textfile_written
	check purge_export_present test -f "$NE_DIR/kernelstats.prom"
	dpkg -P kernelstats >"$log/purge-b.log" 2>&1
	check purge_leaves_no_acl test "$(acl_mark "$NE_DIR")" = "$ne_before"
	check purge_leaves_no_prom_file test ! -e "$NE_DIR/kernelstats.prom"
}

# Without node_exporter (no /var/lib/prometheus/node-exporter) nothing
# fails: the install says nothing, the unit's ExecCondition= skips the
# export, and no directory is made for it.
scenario_without_node_exporter() {
	local v1=$1 log=$2 cond

	fresh
	rm -rf "$NE_DIR"
	install_pkg "$v1" "$log/install-nonode.log" || { say FAIL "no_node_exporter: dpkg -i failed"; return; }
	check no_node_exporter_install_quiet bash -c "! grep -q '^kernelstats:' '$log/install-nonode.log'"
	cond=$(sed -n 's/^ExecCondition=//p' /lib/systemd/system/kernelstats-textfile.service)
	# shellcheck disable=SC2086	# the unit's words
	check no_node_exporter_export_skipped bash -c "! $cond && ! [ -e $NE_DIR ]"
	dpkg -P kernelstats >"$log/purge-nonode.log" 2>&1
	check no_node_exporter_purge test ! -e "$NE_DIR"
}

# An admin in group kstats, as its primary group or as a member: purge
# succeeds, removes user kstats and keeps the group, saying so once.
scenario_group_in_use() {	# deb, log, primary|member
	local v1=$1 log=$2 how=$3 admin=kstadm$$ rc=0

	fresh
	install_pkg "$v1" "$log/install-$how.log" || { say FAIL "group_$how: dpkg -i failed"; return; }
	if [ "$how" = primary ]; then
		useradd -M -N -g kstats -s /usr/sbin/nologin "$admin"
	else
		useradd -M -U -G kstats -s /usr/sbin/nologin "$admin"
	fi
	dpkg -P kernelstats >"$log/purge-$how.log" 2>&1 || rc=$?
	check "purge_with_${how}_admin_succeeds" test "$rc" -eq 0
	check "purge_with_${how}_admin_keeps_group" bash -c "getent group kstats >/dev/null && ! getent passwd kstats >/dev/null"
	check "purge_with_${how}_admin_says_so" one_line "$log/purge-$how.log" "group kstats kept: $admin"
	userdel "$admin" 2>/dev/null
	groupdel kstats 2>/dev/null
}

# A kstats account shaped like root's is refused, not adopted; so is a
# state directory that is a symlink.  Purge then leaves what it did not
# create.
scenario_refusals() {
	local v1=$1 log=$2 rc=0 target=/srv/kstats-test-target

	fresh
	echo 'kstats:x:0:0::/nonexistent:/usr/sbin/nologin' >>/etc/passwd
	install_pkg "$v1" "$log/install-root.log" || rc=$?
	check refuses_uid0_kstats test "$rc" -ne 0
	check refuses_uid0_kstats_one_line one_line "$log/install-root.log" "user kstats exists with uid 0"
	check refuses_uid0_kstats_state_untouched test ! -e "$STATE"
	dpkg -P kernelstats >/dev/null 2>&1
	check purge_keeps_foreign_kstats bash -c 'getent passwd kstats | grep -q "^kstats:x:0:0:"'
	sed -i '/^kstats:/d' /etc/passwd

	fresh
	rc=0
	install -d -o root -g root -m 0755 "$target"
	echo keep >"$target/file"
	ln -s "$target" "$STATE"
	install_pkg "$v1" "$log/install-link.log" || rc=$?
	check refuses_state_symlink test "$rc" -ne 0
	check refuses_state_symlink_one_line one_line "$log/install-link.log" "$STATE is not a directory"
	check state_symlink_target_untouched test "$(stat -c %U "$target" "$target/file" | sort -u)" = root
	dpkg -P kernelstats >/dev/null 2>&1
	check purge_leaves_symlink_target bash -c "[ -L $STATE ] && [ \"\$(cat $target/file)\" = keep ]"
	rm -rf "$STATE" "$target"
}

inner() {	# tmp dir with the .debs
	local tmp=$1 v1 v2 f

	v1=$(ls "$tmp"/kernelstats_*_"$(dpkg --print-architecture)".deb | grep -v +test2)
	v2=$(ls "$tmp"/kernelstats_*+test2_*.deb 2>/dev/null)
	mkdir -p "$tmp/log"
	rm -f /var/lib/man-db/auto-update	# no man-db trigger run per dpkg -i
	scenario_lifecycle "$v1" "$v2" "$tmp/log" "$tmp/layout.deb"
	scenario_no_acl_left "$v1" "$tmp/log"
	scenario_without_node_exporter "$v1" "$tmp/log"
	scenario_group_in_use "$v1" "$tmp/log" primary
	scenario_group_in_use "$v1" "$tmp/log" member
	scenario_refusals "$v1" "$tmp/log"
	[ "$failed" -eq 0 ] && return
	for f in "$tmp"/log/*.log; do
		sed "s#^#    ${f##*/}| #" "$f" | tail -15
	done
}

# pid 1 of new mount and pid namespaces: builds the copy, then chroots.
isolate() {	# tmp dir
	local tmp=$1 r=$1/ovl/root

	mkdir -p "$tmp/ovl"
	mount -t tmpfs -o mode=0755 kstats-test-deb "$tmp/ovl" &&
	mkdir "$tmp/ovl/upper" "$tmp/ovl/work" "$r" &&
	mount -t overlay kstats-test-deb -o "lowerdir=/,upperdir=$tmp/ovl/upper,workdir=$tmp/ovl/work" "$r" ||
		{ say SKIP "no overlayfs here: the package test runs in an overlay over /"; exit 0; }
	mount -t proc proc "$r/proc" &&
	mount --rbind /sys "$r/sys" &&
	mount -t bpf -o mode=0700 bpf "$r/sys/fs/bpf" &&	# as systemd mounts it
	mount --rbind /dev "$r/dev" &&
	mount -t tmpfs -o mode=0755 tmpfs "$r/run" ||
		{ say FAIL "cannot set up the copy's mounts"; exit 1; }
	exec chroot "$r" /bin/bash "$SELF" --inner "$tmp"
}

case ${1:-} in
--isolate) isolate "$2" ;;
--inner) inner "$2"; exit 0 ;;
esac

# --- on the host ---

[ "$(id -u)" -eq 0 ] || skip "needs root (dpkg -i)"
command -v dpkg-buildpackage >/dev/null || { say FAIL "dpkg-buildpackage missing: make deps installs debhelper"; exit 1; }
command -v unshare >/dev/null || { say FAIL "unshare missing (util-linux)"; exit 1; }

tmp=
cleanup() { [ -n "$tmp" ] && rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
tmp=$(mktemp -d /tmp/kstats-test-$$-deb-XXXXXX) || exit 1

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

# The objects ship with the BTF and line info libbpf loads, without DWARF.
objs_stripped() {
	local f n=0
	dpkg-deb -x "$v1" "$tmp/x" || return 1
	for f in "$tmp"/x/usr/lib/kernelstats/bpf/*.bpf; do
		readelf -S -W "$f" | grep -q ' \.BTF\.ext ' || return 1
		! readelf -S -W "$f" | grep -q ' \.debug_' || return 1
		n=$((n + 1))
	done
	[ "$n" -eq "$(ls bpfprogs/*.c | wc -l)" ]
}
check objects_without_dwarf objs_stripped

build_v2 || say FAIL "second build: $(tail -3 "$tmp/build2.log" | tr '\n' ' ')"

# The third: the second repacked with a compaction.bpf whose histogram map
# changed layout (tests/bpf/upgradeCompaction.c: a hash keyed by __u64).
build_v3() {
	local d=$tmp/v3 new=${KSTATS_BUILD:-build}/tests/bpf/upgradeCompaction.bpf
	local f=usr/lib/kernelstats/bpf/compaction.bpf sum

	[ -f "$new" ] || { echo "no $new: make test-build"; return 1; }
	dpkg-deb -R "$(ls "$tmp"/kernelstats_*+test2_*.deb)" "$d" || return 1
	install -m 0644 "$new" "$d/$f"
	sum=$(md5sum <"$d/$f" | cut -d' ' -f1)
	sed -i "s#^[0-9a-f]*  $f\$#$sum  $f#" "$d/DEBIAN/md5sums"
	sed -i 's/^Version: .*/&+layout/' "$d/DEBIAN/control"
	dpkg-deb -b --root-owner-group "$d" "$tmp/layout.deb" >/dev/null
}
build_v3 >"$tmp/build3.log" 2>&1 || say FAIL "layout build: $(tail -3 "$tmp/build3.log" | tr '\n' ' ')"

unshare --mount --pid --fork --kill-child --propagation private bash "$SELF" --isolate "$tmp"
rc=$?
[ "$rc" -eq 0 ] || say FAIL "the isolated run exited $rc"
