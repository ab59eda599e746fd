#!/bin/bash
# PID 1 of the power-cut boots (init=/usr/local/sbin/systest-cut, no
# systemd): mounts what the tools need, reports what the last cut left,
# loads the compaction object, then fires compactions and pulls as user
# kstats (CAP_BPF only, like kernelstats-pull.service) until the host kills
# qemu.  Lines:
#   @@ CUTBOOT <boot_id>            @@ FILE <name> <sha256>   (before any pull)
#   @@ STATE ok|missing|corrupt ..  @@ PRE <seq> <events> [<uptime>] (before pull seq)
#   @@ DONE <seq> <rc> <newest file>
# With systest.cut=final it pulls once, prints every atoms file and powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /run
mount -t bpf bpf /sys/fs/bpf
mount -t tracefs tracefs /sys/kernel/tracing
exec >/dev/ttyS0 2>&1
ATOMS=/var/lib/kernelstats/atoms
STATE=/var/lib/kernelstats/state
mode=$(sed -n 's/.*systest\.cut=\([a-z0-9]*\).*/\1/p' /proc/cmdline)
events() { grep -c ' mm_compaction_end:' /sys/kernel/tracing/trace; }
pull() {
	setpriv --reuid=kstats --regid=kstats --init-groups --inh-caps=+bpf \
		--ambient-caps=+bpf -- kstats pull "$@"
}
newest() { ls "$ATOMS" | sort | tail -1; }
stamp() { echo "@@ T 0 $(cut -d' ' -f1 /proc/uptime) $1"; }

echo "@@ CUTBOOT $(cat /proc/sys/kernel/random/boot_id)"
stamp init
for f in "$ATOMS"/atoms-*.pb "$ATOMS"/.*; do
	[ -f "$f" ] && echo "@@ FILE ${f##*/} $(sha256sum <"$f" | cut -c1-64)"
done
if [ -f "$STATE/state" ]; then
	echo "@@ STATE ok $(head -c 60 "$STATE/state" | head -1)"
else
	echo "@@ STATE missing"
fi
for f in "$STATE"/state.corrupt-*; do
	[ -e "$f" ] && echo "@@ STATE corrupt ${f##*/}"
done
# Only the object whose counts the checks follow: the pull's crash safety
# does not depend on how many maps it reads (unpinned ones are skipped), and
# under TCG every object costs seconds of verifier time.  The systemd boots
# load them all.
others=$(cd /usr/lib/kernelstats/bpf && ls *.bpf | sed 's/\.bpf$//' | grep -vx compaction | paste -sd,)
kstats-loader --disable "$others" >/dev/null 2>&1 || echo "@@ INFO: kstats-loader exited $?"
stamp loaded
seq=0
if [ "$mode" = final ]; then
	echo 1 >/proc/sys/vm/compact_memory
	echo "@@ PRE 1 $(events)"
	pull >/run/pull.out 2>&1
	echo "@@ DONE 1 $? $(newest)"
	sed 's/^/@@ INFO: pull: /' /run/pull.out
	for f in "$ATOMS"/atoms-*.pb; do
		echo "@@ BLOB atoms ${f##*/}"
		base64 -w 76 "$f" | sed 's/^/@@ B64 /'
		echo "@@ BLOB-END"
	done
	echo "@@ END"
	sync
	echo o >/proc/sysrq-trigger
	sleep 10
fi
echo "@@ LOOP"
while :; do
	echo 1 >/proc/sys/vm/compact_memory
	seq=$((seq + 1))
	echo "@@ PRE $seq $(events) $(cut -d' ' -f1 /proc/uptime)"
	pull >/run/pull.out 2>&1
	rc=$?
	echo "@@ DONE $seq $rc $(newest)"
	stamp "pull $seq"
	[ "$rc" = 0 ] || sed 's/^/@@ INFO: pull: /' /run/pull.out
done
