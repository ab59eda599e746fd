#!/usr/bin/env bash
# JNI reader (doc/jni.md): tests/jni/JniReaderTest.java in a real JVM, with
# -Xcheck:jni, against compaction.bpf loaded into a private pin dir, a
# tracefs instance counting mm_compaction_end, and a map without BTF; then
# as uid 65534 for the permission error.  An ASan build of the .so runs
# with libasan preloaded into java.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${KSTATS_BUILD:-build}
T=jni
JAR=$PWD/$BUILD/kstats.jar
SO=$PWD/$BUILD/libkstats_jni.so
CLASSES=$PWD/$BUILD/jni/tests
PIN=/sys/fs/bpf/kernelstats-test-$$-jni
TRACE=/sys/kernel/tracing/instances/kstats-test-$$-jni
TMP=$(mktemp -d /tmp/kstats-test-$$-jni-XXXXXX)
trap 'rm -rf "$TMP" "$PIN"; [ -d "$TRACE" ] && rmdir "$TRACE"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! command -v java >/dev/null; then
	echo "SKIP: $T: no java (make deps installs openjdk-17-jdk-headless)"; exit 0
fi
if [ ! -f "$CLASSES/.stamp" ] || [ ! -f "$SO" ]; then
	echo "SKIP: $T: $BUILD/kstats.jar and the test are not built (no javac when make ran)"; exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "SKIP: $T: needs root to load and compact"; exit 0; }

JAVA=(java -Xcheck:jni -XX:-UsePerfData -Dkstats.jni.library="$SO" -cp "$JAR:$CLASSES")
# An ASan build of the .so needs the runtime loaded first; the JVM handles
# SIGSEGV itself and keeps memory that ASan would call leaked.
if ldd "$SO" | grep -q libasan; then
	JAVA=(env LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
	      ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0:handle_segv=0:allow_user_segv_handler=1:use_sigaltstack=0"
	      "${JAVA[@]}")
fi

others=$(ls "$BUILD/bpf" | sed -n 's/\.bpf$//p' | grep -vx compaction | paste -sd,)
out=$("$BUILD/kstats-loader" --obj-dir "$BUILD/bpf" --pin-dir "$PIN" --run-dir "$TMP/run" \
	--disable "$others" 2>&1)
if ! echo "$out" | grep -q '^compaction *LOADED'; then
	echo "SKIP: $T: compaction.bpf did not load: $(echo "$out" | grep '^compaction')"; exit 0
fi
args=(kstats="$PWD/$BUILD/kstats" obj="$PWD/$BUILD/bpf/compaction.bpf"
      map=compaction_duration_map pindir="$PIN")
reload=(loader="$PWD/$BUILD/kstats-loader" objdir="$PWD/$BUILD/bpf" rundir="$TMP/run"
	disable="$others")
bpftool map create "$PIN/nobtf" type hash key 4 value 8 entries 4 name nobtf 2>/dev/null &&
	args+=(nobtf="$PIN/nobtf")
if [ -f "$BUILD/tests/bpf/reader_layouts.bpf" ] && [ -f "$BUILD/jni/libjnilayouts.so" ]; then
	args+=(layouts="$PWD/$BUILD/tests/bpf/reader_layouts.bpf"
	       layoutslib="$PWD/$BUILD/jni/libjnilayouts.so")
fi
if mkdir "$TRACE" 2>/dev/null && echo mono >"$TRACE/trace_clock" &&
   echo 1 >"$TRACE/events/compaction/mm_compaction_end/enable"; then
	args+=(trace="$TRACE")
fi

# Prints the test's lines; a crash or a -Xcheck:jni warning fails.
run_java() {
	local rc
	"$@" >"$TMP/out" 2>&1
	rc=$?
	grep -E '^(PASS|FAIL|SKIP):' "$TMP/out"
	if grep -qE 'WARNING in native method|FATAL ERROR in native method' "$TMP/out"; then
		echo "FAIL: $T: -Xcheck:jni: $(grep -m1 -E 'in native method' "$TMP/out")"
	fi
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL:' "$TMP/out"; then
		echo "FAIL: $T: java exited with status $rc: $(grep -v -E '^(PASS|SKIP):' "$TMP/out" | head -5)"
	fi
}

run_java "${JAVA[@]}" JniReaderTest "${args[@]}" "${reload[@]}"
if command -v setpriv >/dev/null; then
	run_java setpriv --reuid=65534 --regid=65534 --clear-groups \
		"${JAVA[@]}" JniReaderTest "${args[@]}" perm=1
else
	echo "SKIP: $T: permission denied: setpriv is not installed"
fi
