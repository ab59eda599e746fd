#!/bin/bash
# bench/boot/run.sh inside the guest: copied as guest.sh onto the disk
# labelled systest, which the base image's systest.service runs at every
# boot (tests/system/image.sh).  The phase comes from the kernel command
# line (kstats_boot.phase=).  Prints "@@ " lines on the serial console.
#   setup    dpkg -i the package (its loader runs), then installs
#            kstats-min-loader.service: min_loader on the objects and
#            programs the loader pinned, into /sys/fs/bpf (not the loader's
#            /sys/fs/bpf/kernelstats), under the loader unit's own [Service]
#            sandbox; first ordered After=kernelstats-loader.service
#   measure  both units ran at this boot: their activation times as
#            systemd-analyze blame computes them, and their CPU time
#            (CPUUsageNSec), then the order flips
#            (Before= <-> After=) for the next boot
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin SYSTEMD_PAGER='' SYSTEMD_COLORS=0
D=/mnt/systest
LOADER=kernelstats-loader.service
MIN=kstats-min-loader.service
MIN_BIN=/usr/local/lib/kstats-boot/min_loader
ORDER=/etc/systemd/system/$MIN.d/order.conf
phase=$(sed -n 's/.*kstats_boot\.phase=\([a-z]*\).*/\1/p' /proc/cmdline)

say() { echo "@@ $*"; }

# systest.service is part of the boot transaction (blame needs the boot
# finished): go on in a transient unit started 2 s later, and hold the image
# unit's poweroff off until the end of this script.
if [ "${1:-}" != --after-boot ]; then
	systemctl mask --runtime --quiet poweroff.target
	systemd-run --quiet --unit=kstats-boot --on-active=2s --timer-property=AccuracySec=1us \
		-p StandardOutput=tty -p StandardError=tty -p TTYPath=/dev/ttyS0 \
		/bin/bash "$D/guest.sh" --after-boot
	exit 0
fi

# The loader unit's [Service] section (its sandbox) minus what names the
# loader: its command and its runtime directory.
loader_service() {
	awk '/^\[/ { s = ($0 == "[Service]") } s && !/^#/ && !/^(ExecStart|RuntimeDirectory)/' \
		"/lib/systemd/system/$LOADER"
}

# min_loader's arguments: each object with the programs the loader pinned.
min_args() {	# objdir
	local o n secs
	for o in "$1"/*.bpf; do
		n=$(basename "$o" .bpf)
		secs=$(ls /sys/fs/bpf/kernelstats | sed -n "s/^prog_${n}_//p" | paste -sd,)
		[ -n "$secs" ] && printf ' %s:%s' "$o" "$secs"
	done
}

setup() {
	local objdir args
	dpkg -i "$D/kernelstats.deb" >/run/dpkg.out 2>&1 ||
		{ say "FAIL: dpkg -i: $(tail -3 /run/dpkg.out | tr '\n' ' ')"; return 1; }
	objdir=$(sed -n 's/^ExecStart=.*--obj-dir \([^ ]*\).*/\1/p' "/lib/systemd/system/$LOADER")
	args=$(min_args "$objdir")
	[ -n "$args" ] || { say "FAIL: the loader pinned no program"; return 1; }
	install -D -m 0755 "$D/min_loader" "$MIN_BIN"
	{ printf '[Unit]\nDescription=min_loader (bench/boot)\nDefaultDependencies=no\n'
	  printf 'Conflicts=shutdown.target\nBefore=shutdown.target\n'
	  printf 'After=systemd-modules-load.service\nRequiresMountsFor=/sys/fs/bpf %s\n' "$objdir"
	  loader_service
	  printf 'ExecStart=%s /sys/fs/bpf%s\n' "$MIN_BIN" "$args"
	  printf '[Install]\nWantedBy=sysinit.target\n'; } >"/etc/systemd/system/$MIN"
	mkdir -p "${ORDER%/*}"
	printf '[Unit]\nAfter=%s\n' "$LOADER" >"$ORDER"
	systemctl daemon-reload && systemctl enable --quiet "$MIN" &&
		systemctl start "$MIN" ||
		{ say "FAIL: $MIN: $(journalctl -b -u "$MIN" --no-pager | tail -3 | tr '\n' ' ')"; return 1; }
	say "INFO: objects:$args"
	say "OK setup"
}

activation_us() {	# unit: what systemd-analyze blame prints, in us
	local on off
	on=$(systemctl show -P InactiveExitTimestampMonotonic "$1")
	off=$(systemctl show -P ActiveEnterTimestampMonotonic "$1")
	echo $((off - on))
}

pins() {	# dir: its pinned programs
	set -- "$1"/prog_*
	echo $#
}

ms_of() {	# command...: its wall time in ms
	local t0
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || say "FAIL: $*"
	echo $((($(date +%s%N) - t0) / 1000000))
}

# After boot, by hand, outside any unit: the same two loads, interleaved,
# each into a fresh pin directory; so boot conditions (cold caches, the
# units started beside them) apart from the loaders' own work.
warm() {
	local loader i l=() m=()
	loader=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "/lib/systemd/system/$LOADER")
	# shellcheck disable=SC2046
	set -- $(sed -n 's/^ExecStart=//p' "/etc/systemd/system/$MIN")
	for i in 1 2 3; do
		l+=("$(ms_of "$loader" --obj-dir "${3%/*}" --pin-dir "/sys/fs/bpf/warm$i" \
			--run-dir "/run/warm$i")")
		mkdir "/sys/fs/bpf/warm-min$i"
		m+=("$(ms_of "$1" "/sys/fs/bpf/warm-min$i" "${@:3}")")
	done
	say "WARM ${l[*]} ${m[*]}"
}

# BOOT_DIAG=1 (bench/boot/run.sh): where the by-hand gap goes, after the
# measurement, each line "@@ DIAG ...": real/user/sys of the loader (and of
# the loader builds run.sh put in diag/loader-NAME) against min_loader, five
# rounds interleaved; the loader's fixed cost (every object disabled)
# against min_loader's (no object); the loader without cma.bpf, which the
# minimal loader is not given; the loader's lines; each object alone in
# both; one vmlinux BTF parse (btf_parse); strace -c -f of one run of each.
timed() {	# label command...: "@@ DIAG TIME label real user sys" (s)
	local TIMEFORMAT="%R %U %S" t label=$1
	shift
	t=$( { time "$@" >/dev/null 2>&1; } 2>&1)
	say "DIAG TIME $label $t"
}

diag() {
	local loader objdir i l a o n=0 st=$D/diag/strace
	rm -rf /sys/fs/bpf/warm[0-9] /sys/fs/bpf/warm-min[0-9]
	loader=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "/lib/systemd/system/$LOADER")
	# shellcheck disable=SC2046
	set -- $(sed -n 's/^ExecStart=//p' "/etc/systemd/system/$MIN")
	objdir=${3%/*}
	"$loader" --obj-dir "$objdir" --pin-dir /sys/fs/bpf/d0 --run-dir /run/d0 2>&1 |
		cut -c1-220 | sed 's/^/@@ DIAG OUT /'
	rm -rf /sys/fs/bpf/d0
	for i in 1 2 3 4 5; do
		for l in "$loader" "$D"/diag/loader-*; do
			[ -x "$l" ] || continue
			n=$((n + 1))
			timed "loader:${l##*/}" "$l" --obj-dir "$objdir" --pin-dir "/sys/fs/bpf/d$n" --run-dir "/run/d$n"
			rm -rf "/sys/fs/bpf/d$n"
		done
		mkdir /sys/fs/bpf/dm
		timed min "$1" /sys/fs/bpf/dm "${@:3}"
		rm -rf /sys/fs/bpf/dm
		timed loader_no_cma "$loader" --obj-dir "$objdir" --disable cma --pin-dir /sys/fs/bpf/dc --run-dir "/run/dc$i"
		rm -rf /sys/fs/bpf/dc
		timed loader_none "$loader" --obj-dir "$objdir" --disable all --pin-dir /sys/fs/bpf/dn --run-dir "/run/dn$i"
		timed min_none "$1"
	done
	for a in "${@:3}"; do	# each object alone, in both
		o=${a%%:*}
		o=${o##*/}
		mkdir -p "/run/one-${o%.bpf}" /sys/fs/bpf/om
		cp "$objdir/$o" "/run/one-${o%.bpf}/"
		timed "loader_one:${o%.bpf}" "$loader" --obj-dir "/run/one-${o%.bpf}" \
			--pin-dir /sys/fs/bpf/ol --run-dir "/run/olr-${o%.bpf}"
		timed "min_one:${o%.bpf}" "$1" /sys/fs/bpf/om "$a"
		rm -rf /sys/fs/bpf/ol /sys/fs/bpf/om
	done
	[ -x "$D/diag/btf_parse" ] && "$D/diag/btf_parse" | sed 's/^/@@ DIAG /'
	[ -x "$st" ] || return 0
	mkdir /sys/fs/bpf/sm
	LD_LIBRARY_PATH=$D/diag "$st" -f -c -o /run/sc-loader "$loader" --obj-dir "$objdir" \
		--pin-dir /sys/fs/bpf/sl --run-dir /run/sl >/dev/null 2>&1
	LD_LIBRARY_PATH=$D/diag "$st" -f -c -o /run/sc-min "$1" /sys/fs/bpf/sm "${@:3}" >/dev/null 2>&1
	rm -rf /sys/fs/bpf/sl /sys/fs/bpf/sm
	for l in loader min; do
		head -12 "/run/sc-$l" | tail -10 | sed "s/^/@@ DIAG SC $l /"
		tail -1 "/run/sc-$l" | sed "s/^/@@ DIAG SC $l /"
	done
}

measure() {
	local u order
	for u in "$LOADER" "$MIN"; do
		[ "$(systemctl show -P Result "$u")" = success ] ||
			{ say "FAIL: $u: $(systemctl show -P Result "$u")"; return 1; }
	done
	[ "$(pins /sys/fs/bpf/kernelstats)" = "$(pins /sys/fs/bpf)" ] ||
		{ say "FAIL: pinned programs differ: $(pins /sys/fs/bpf/kernelstats) vs $(pins /sys/fs/bpf)"; return 1; }
	order=$(sed -n 's/^\(After\|Before\)=.*/\1/p' "$ORDER")
	say "BLAME $(systemd-analyze blame --no-pager | grep -E " ($LOADER|$MIN)\$" | tr -s ' ' | paste -sd';')"
	say "TIME $(systemd-analyze time --no-pager | head -1)"
	say "RESULT min_$order $(activation_us "$LOADER") $(activation_us "$MIN") $(pins /sys/fs/bpf)" \
		"$(systemctl show -P CPUUsageNSec "$LOADER") $(systemctl show -P CPUUsageNSec "$MIN")"
	warm
	[ -f "$D/diag/on" ] && diag
	[ "$order" = After ] && order=Before || order=After
	printf '[Unit]\n%s=%s\n' "$order" "$LOADER" >"$ORDER"
}

for _ in $(seq 300); do
	systemctl is-system-running | grep -qE 'running|degraded' && break
	sleep 1
done
case $phase in
setup) setup ;;
measure) measure ;;
*) say "FAIL: unknown phase '$phase'" ;;
esac
say "END $phase"
systemctl unmask --runtime --quiet poweroff.target
systemctl --no-block poweroff
