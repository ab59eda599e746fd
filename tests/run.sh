#!/usr/bin/env bash
# Runs every test (cmocka binaries in TAP mode, shell tests) and prints one
# PASS/FAIL/SKIP line per test, then "N passed, N failed, N skipped".
# A sanitizer report from any process a test starts fails that test.
# Usage: tests/run.sh BUILD_DIR [TEST...]   (make test builds build/san with
# ASan+UBSan); TESTs (e.g. test_bucket, test_pull_format) run only those.
# A test still running after KSTATS_TEST_TIMEOUT seconds (1800) is killed
# and fails, named, with its output so far.
set -u
BUILD=${1:-build/san}
shift $(($# > 0))
ONLY=" $* "
cd "$(dirname "$0")/.." || exit 1

pass=0 fail=0 skip=0 child=
TEST_TIMEOUT=${KSTATS_TEST_TIMEOUT:-1800}
[[ $TEST_TIMEOUT =~ ^[1-9][0-9]*$ ]] || {
	echo "tests/run.sh: KSTATS_TEST_TIMEOUT=$TEST_TIMEOUT: give the seconds a suite may run, 1 or more" >&2
	exit 2
}

# A run that was interrupted leaves pins, trace instances, loader run dirs
# and temp dirs, all named *-test-<pid>-*, and test users kst<pid>
# (test_privileges_tools.sh), of a dead pid.  Names without a pid are never
# removed: they may belong to a run in another tree.
cleanup_stale() {
	local d pid u
	for u in $(getent passwd | awk -F: '$1 ~ /^kst[0-9]+$/ && $3 < 1000 {print $1}'); do
		kill -0 "${u#kst}" 2>/dev/null || userdel "$u" 2>/dev/null
	done
	for d in /sys/fs/bpf/kernelstats-test-* /sys/kernel/tracing/instances/kstats-test-* \
		 /tmp/kernelstats-test-*-run /tmp/kstats-test-*; do
		[ -e "$d" ] || continue
		pid=${d#*-test-}
		pid=${pid%%[!0-9]*}
		[ -n "$pid" ] || continue
		kill -0 "$pid" 2>/dev/null && continue
		rm -rf "$d" 2>/dev/null || rmdir "$d" 2>/dev/null
	done
}

# Stops the running test's whole session (timeout(1) makes its own process
# group), then removes what it left.
interrupted() {
	[ -n "$child" ] && pkill -TERM -s "$child" && wait "$child"
	rm -rf "$work"
	cleanup_stale
	echo "interrupted: $pass passed, $fail failed, $skip skipped so far" >&2
	exit "$1"
}

# The loader refuses objects that anyone but root could change (loader/config.c),
# so a checkout owned by a user cannot be tested: say so once, not per test.
untrusted_dir() {	# prints the first directory at or above $1 that fails
	local d
	d=$(realpath "$1") || return 0
	while :; do
		if [ "$(stat -c %u "$d")" != 0 ] ||
		   { [ -n "$(find "$d" -maxdepth 0 -perm /022)" ] &&
		     [ -z "$(find "$d" -maxdepth 0 -perm -1000)" ]; }; then
			echo "$d"
			return
		fi
		[ "$d" = / ] && return
		d=$(dirname "$d")
	done
}
bad=$(untrusted_dir "$BUILD/bpf")
if [ -n "$bad" ]; then
	echo "make test: $bad is not owned by root or is writable by others, and the" \
	     "loader refuses objects there; test a checkout owned by root" \
	     "(sudo chown -R root: $(pwd))" >&2
	exit 2
fi

work=$(mktemp -d "/tmp/kstats-test-$$-run-XXXXXX") || exit 1
san=$work/san
mkdir -m 1777 "$san" || exit 1	# tests run tools as other users too
trap 'rm -rf "$work"; cleanup_stale' EXIT
trap 'interrupted 130' INT
trap 'interrupted 143' TERM

export KSTATS_BUILD=$BUILD
# apt's sources and keys and dpkg's architectures before the suite (make
# test keeps them from before its build): the last test compares.
if [ -z "${KSTATS_HOST_STATE:-}" ]; then
	KSTATS_HOST_STATE=$work/host-state.before
	tests/host_state.sh > "$KSTATS_HOST_STATE" || exit 1
fi
KSTATS_HOST_STATE=$(realpath "$KSTATS_HOST_STATE") || exit 1
export KSTATS_HOST_STATE
last=test_host_unchanged	# after every other test
# The suite compares against goldens; regenerating them is a separate, explicit step.
unset KSTATS_UPDATE_GOLDEN
export CMOCKA_MESSAGE_OUTPUT=TAP
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:log_path=$san/asan
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$san/ubsan

count() {	# verdict suite text
	echo "$1: $2: $3"
	case $1 in
	PASS) pass=$((pass + 1)) ;;
	FAIL) fail=$((fail + 1)) ;;
	SKIP) skip=$((skip + 1)) ;;
	esac
}

# Counts a cmocka binary's TAP lines, whose plan (1..N) must be met, and
# the SKIP: (or FAIL:) line of a binary the kernel cannot run.
tally_tap() {
	local suite=$1 out=$2 line n plan= seen=0 other=0
	while IFS= read -r line; do
		case $line in
		1..[0-9]*)	n=${line#1..}; plan=$((${plan:-0} + ${n%%[!0-9]*})) ;;	# per group
		"ok "*"# SKIP"*|"not ok "*"# SKIP"*)
			count SKIP "$suite" "${line#*# SKIP }"; seen=$((seen + 1)) ;;
		"not ok "*)	count FAIL "$suite" "${line#*- }"; seen=$((seen + 1)) ;;
		"ok "*)		count PASS "$suite" "${line#*- }"; seen=$((seen + 1)) ;;
		SKIP:*|FAIL:*)	count "${line%%:*}" "$suite" "${line#*: }"; other=1 ;;
		esac
	done <"$out"
	if [ -n "$plan" ] && [ "$seen" -ne "$plan" ]; then
		count FAIL "$suite" "planned $plan tests, reported $seen"
		return 0
	fi
	[ $((seen + other)) -gt 0 ]
}

# Counts a shell test's PASS:/FAIL:/SKIP: lines.
tally_sh() {
	local suite=$1 out=$2 line seen=0
	while IFS= read -r line; do
		case $line in
		PASS:*|FAIL:*|SKIP:*)
			count "${line%%:*}" "$suite" "${line#*: }"; seen=$((seen + 1)) ;;
		esac
	done <"$out"
	[ "$seen" -gt 0 ]
}

selected() {	# test name
	[ "$ONLY" = "  " ] || [[ $ONLY == *" $1 "* ]]
}

# cmocka leaves a failed test by longjmp, so what it allocated leaks: a
# LeakSanitizer report (and nothing else) from the test binary itself after
# it failed adds nothing, and is not counted again.
leak_after_failure() {	# report pid
	[ "${1##*.}" = "$2" ] && grep -q 'ERROR: LeakSanitizer' "$1" &&
		! grep -q -E 'ERROR: AddressSanitizer|runtime error' "$1"
}

# Runs one test in its own session (so an interrupt or the time limit can
# stop all of it) and counts its results; exit status, signal and
# sanitizer reports too.
run_one() {
	local kind=$1 suite=$2 out=$work/out rc failed_before=$fail f pid t0=$SECONDS
	shift 2
	# exec: with traps set, bash would fork setsid instead of becoming it.
	(trap - EXIT INT TERM; exec setsid "$@" >"$out" 2>&1 </dev/null) &
	child=$!
	pid=$child
	# Polled: bash's wait -n can miss a child that ended before it was called, and hang.
	while kill -0 "$child" 2>/dev/null && ((SECONDS - t0 < TEST_TIMEOUT)); do
		sleep 0.1
	done
	if kill -0 "$child" 2>/dev/null; then
		pkill -KILL -s "$pid"
		wait "$child" 2>/dev/null
		count FAIL "$suite" "still running after $TEST_TIMEOUT s, killed (KSTATS_TEST_TIMEOUT)"
		rc=0
	else
		wait "$child"
		rc=$?
	fi
	child=
	"tally_$kind" "$suite" "$out" || count FAIL "$suite" "reported no results"
	if [ "$rc" -gt 128 ]; then
		count FAIL "$suite" "killed by signal $((rc - 128))"
	elif [ "$rc" -ne 0 ] && [ "$fail" -eq "$failed_before" ]; then
		count FAIL "$suite" "exited with status $rc"
	fi
	for f in "$san"/*; do
		[ -e "$f" ] || continue
		if [ "$fail" -ne "$failed_before" ] && leak_after_failure "$f" "$pid"; then
			rm -f "$f"
			continue
		fi
		count FAIL "$suite" "sanitizer report ${f##*/}: $(grep -m1 -E 'ERROR|runtime error' "$f")"
		sed 's/^/    | /' "$f" | head -30
		rm -f "$f"
	done
	if [ "$fail" -ne "$failed_before" ]; then
		sed 's/^/    | /' "$out" | tail -40
	fi
	echo "# time: $suite $((SECONDS - t0)) s"	# what each suite adds to make test
}

cleanup_stale
for src in tests/unit/*.c tests/kernel/*.c; do
	t=$BUILD/${src%.c}
	selected "$(basename "$t")" || continue
	if [ -x "$t" ]; then
		run_one tap "$(basename "$t")" "$t"
	else
		count FAIL "$(basename "$t")" "$t is not built (make test-build)"
	fi
done
for t in tests/sh/*.sh; do
	n=$(basename "$t" .sh)
	[ "$n" != "$last" ] && selected "$n" || continue
	run_one sh "$n" bash "$t"
done
selected "$last" && run_one sh "$last" bash "tests/sh/$last.sh"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
