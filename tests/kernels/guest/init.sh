#!/bin/busybox sh
# PID 1 of the kernel lab's guest: mounts, loads the modules, runs the test
# driver, copies pulled atom files to the console, powers off.  The host
# reads "@@ " lines from the serial console (tests/kernels/run.sh).
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /tmp /run /var/lib
while read -r m; do
	insmod "/lib/modules/$m.ko" || echo "@@ INFO: insmod $m failed"
done < /lib/modules/order
echo "@@ BEGIN $(uname -r)"
echo "@@ UPTIME $(cut -d' ' -f1 /proc/uptime)"
kstats-guest --obj-dir /bpf --pin-dir /sys/fs/bpf/kernelstats --tools-dir /bin 2>&1 |
	tee /tmp/guest.out
for f in $(sed -n 's/^@@ ATOMS //p' /tmp/guest.out); do
	echo "@@ BLOB $f"
	base64 "$f" | sed 's/^/@@ B64 /'
	echo "@@ BLOB-END"
done
echo "@@ UPTIME $(cut -d' ' -f1 /proc/uptime)"
echo "@@ END"
sync
poweroff -f
