#!/usr/bin/env bash
# The loader loads objects on one thread per CPU (doc/loader.md, "Cost"):
# a run on every CPU must print the same lines (stdout, stderr), exit the
# same and write the same status file (ids and times aside) as a run on
# one CPU (taskset), which is sequential.  The objects: the built ones,
# copies that declare compaction's metric before and after it (an object
# waits for an earlier one that may claim its metric), the test objects a
# verifier rejects, that fall back to raw_tp, with an optional program,
# without their tracepoint, a truncated one and two with bad names.  Then, among them, a copy
# of compaction.bpf that crashes libbpf 1.1's parse (a struct member's BTF
# type id out of range, as a libFuzzer run found): that object alone
# fails, in both runs alike.  The prober that replaces the crashed one,
# with threads running, is the loader executed afresh, never a fork of
# them (strace).
set -u
cd "$(dirname "$0")/../.." || exit 1
T="loader parallel"
. tests/lib/shtest.sh
B=${KSTATS_BUILD:-build}
L=$B/kstats-loader

shtest_setup parallel jq taskset python3 strace
[ "$(nproc)" -ge 2 ] || skip "one CPU: the loader runs sequentially"
[ -x "$L" ] && [ -e "$B/bpf/compaction.bpf" ] || fail "setup: build $B first"
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
RUN=$TMP/run
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0

objects() {	# dir: the objects above, under names the loader accepts
	local o n
	mkdir -p "$1"
	cp "$B"/bpf/*.bpf "$1/"
	cp "$B/bpf/compaction.bpf" "$1/aCompaction.bpf"
	cp "$B/bpf/compaction.bpf" "$1/compactionCopy.bpf"
	cp "$B/bpf/compaction.bpf" "$1/zCompaction.bpf"
	for n in reject fallback optional notp; do
		o=$B/tests/bpf/loader_$n.bpf
		[ -e "$o" ] && cp "$o" "$1/test${n^}.bpf"
	done
	head -c 2000 "$B/bpf/kswapd.bpf" >"$1/truncated.bpf"
	# Refused by name, before or after reading it.
	cp "$B/bpf/kswapd.bpf" "$1/dot.ted.bpf"
	cp "$B/bpf/kswapd.bpf" "$1/under_score.bpf"
}

# One run from no pins; its exit code, lines and status file (no ids, no times).
run() {	# name objdir [command the loader runs under, with its args]
	local name=$1 dir=$2 rc
	shift 2
	rm -rf "$PIN" "$RUN"
	"$@" "$L" --obj-dir "$dir" --pin-dir "$PIN" --run-dir "$RUN" \
		>"$TMP/$name.out" 2>"$TMP/$name.err"
	rc=$?
	echo "exit $rc" >>"$TMP/$name.out"
	jq -S 'walk(if type == "object" then del(.prog_id, .map_id, .created_boottime_ns,
		.created_realtime_ns, .started_boottime_ns, .finished_boottime_ns) else . end)' \
		"$RUN/loader-status.json" >"$TMP/$name.json" 2>&1
}

crashed() { grep -q '^crash .*FAILED_OBJECT: libbpf crashed parsing it' "$TMP/$1.out"; }
same_loaded() { [ "$(grep -c LOADED "$TMP/$1.out")" = "$(grep -c LOADED "$TMP/$2.out")" ]; }

same() {	# label a b
	local f
	for f in out err json; do
		cmp -s "$TMP/$2.$f" "$TMP/$3.$f" ||
			fail "$1: $f differs: $(diff "$TMP/$2.$f" "$TMP/$3.$f" | head -5 | tr '\n' ' ')"
	done
	echo "PASS: $T: $1: the same lines, exit code and status file on one CPU and on $(nproc)"
}

objects "$TMP/objs"
run seq "$TMP/objs" taskset -c 0
run par "$TMP/objs" env
grep -q '^aCompaction .*LOADED' "$TMP/par.out" &&
	grep -q '^compaction .*SKIPPED_DUPLICATE_METRIC' "$TMP/par.out" ||
	fail "objects: aCompaction loaded and compaction skipped expected: $(head -3 "$TMP/par.out")"
same "objects" seq par

python3 tests/lib/btf_crasher.py "$B/bpf/compaction.bpf" "$TMP/objs/crash.bpf" ||
	fail "crash: cannot make the object"
# A sanitizer build's SEGV handler would turn the prober's crash into an exit.
export ASAN_OPTIONS=$ASAN_OPTIONS:handle_segv=0
run seq2 "$TMP/objs" taskset -c 0
run par2 "$TMP/objs" env
crashed par2 ||
	skip "libbpf here does not crash on the object: $(grep '^crash' "$TMP/par2.out")"
same_loaded par2 par || fail "crash: other objects lost"
same "a crashing object" seq2 par2

# A fork of running threads can wait forever on a lock one of them held
# (a CI run hung so: the new prober in ASan's malloc).  So the only fork is
# the first prober, before the threads; its replacement is execve'd.
run par3 "$TMP/objs" strace -f -qq -e trace=fork,vfork,clone,clone3,execve \
	-o "$TMP/par3.strace"
crashed par3 ||
	fail "restart: the crash was not reported under strace: $(grep '^crash' "$TMP/par3.out")"
forks=$(grep -E '^[0-9]+ +(fork|vfork|clone|clone3)\(' "$TMP/par3.strace" | grep -vc CLONE_VM)
spawned=$(grep -c 'execve("/proc/self/exe", \["kstats-loader", "--probe-server"\]' \
	"$TMP/par3.strace")
[ "$forks" = 1 ] && [ "$spawned" -ge 1 ] ||
	fail "restart: $forks forks and $spawned probers executed afresh (1 and at least 1 expected)"
same_loaded par3 par || fail "restart: other objects lost"
echo "PASS: $T: after the crash, a new prober executed afresh ($spawned), no fork of the threads"

# Started with stdin, stdout and stderr closed: the prober's socket must
# not take fds 0-2 (log lines would go into it), so the status file is the
# one of the run above.
run closed "$TMP/objs" bash -c 'exec "$@" <&- >&- 2>&-' _
cmp -s "$TMP/closed.json" "$TMP/par2.json" ||
	fail "closed stdio: the status differs: $(diff "$TMP/closed.json" "$TMP/par2.json" | head -5 | tr '\n' ' ')"
echo "PASS: $T: with stdin, stdout and stderr closed, the same status file"

# Run through the dynamic loader, /proc/self/exe is ld.so: the prober
# executed after the crash exits at once.  Its objects are not to blame:
# one warning, and libbpf parses the rest in-process.
ldso=$(ldd "$L" | awk '$1 ~ /\/ld-linux/ { print $1; exit }')
[ -x "$ldso" ] || skip "no dynamic loader named in ldd $L"
run ldso "$TMP/objs" "$ldso"
crashed ldso && [ "$(grep -c 'cannot start a prober' "$TMP/ldso.err")" = 1 ] &&
	same_loaded ldso par2 ||
	fail "prober that cannot start: $(grep -v LOADED "$TMP/ldso.out" "$TMP/ldso.err" | head -4 | tr '\n' ' ')"
echo "PASS: $T: a prober that dies before serving: one warning, the other objects load as before"
