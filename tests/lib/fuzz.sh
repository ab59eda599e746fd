# Sourced by tests/sh/fuzz_*.sh: one bounded libFuzzer run under ASan, UBSan
# and LeakSanitizer, with the options of mk/fuzz.mk; crashes are kept.
# Usage: fuzz_run NAME BIN SECONDS WHAT [libFuzzer args and corpus dirs...]
fuzz_run() {
	local name=$1 bin=$2 secs=$3 what=$4 build rc runs opts
	shift 4
	build=$(dirname "$(dirname "$bin")")
	opts=$(sed -n 's/^FUZZ_OPTS *:= *//p' "$(dirname "${BASH_SOURCE[0]}")/../../mk/fuzz.mk")
	if [ ! -x "$bin" ]; then
		echo "FAIL: $name: $bin missing; run make test (or make $bin)"
		return 1
	fi
	# Global: the EXIT trap removes it after the function returns.
	# Global: the EXIT trap removes it after the function has returned.
	work=$(mktemp -d "/tmp/kstats-test-$$-$name-XXXXXX") || return 1
	trap 'rm -rf "$work"' EXIT
	trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
	trap 'exit 143' TERM
	mkdir "$work/corpus"
	# shellcheck disable=SC2086
	"$bin" $opts -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="$work/" "$work/corpus" "$@" >"$work/log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
		echo "PASS: $name: $runs inputs, no crash, leak or UB$what"
		return 0
	fi
	mkdir -p "$build/fuzz/crashes"
	cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* \
		"$build/fuzz/crashes/" 2>/dev/null
	echo "FAIL: $name: exit $rc; inputs kept in $build/fuzz/crashes (rerun: $bin FILE)"
	grep -m5 -E "ERROR|SUMMARY|runtime error" "$work/log"
	return 1
}
