# Sourced by the shell tests that run the real tools as root; $T names the test.
# shtest_setup TAG [COMMAND...]: SKIPs without root or a COMMAND, makes $TMP,
# names the pin dir $PIN, and removes both at exit.
skip() { echo "SKIP: $T: $1"; exit 0; }
fail() { echo "FAIL: $T: $1"; exit 1; }

shtest_setup() {
	local tag=$1 tool
	shift
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	for tool in "$@"; do
		command -v "$tool" >/dev/null || skip "$tool is not installed (make deps)"
	done
	PIN=/sys/fs/bpf/kernelstats-test-$$-$tag
	TMP=$(mktemp -d "/tmp/kstats-test-$$-$tag-XXXXXX") || exit 1
	trap 'rm -rf "$PIN" "$TMP"' EXIT
	trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
	trap 'exit 143' TERM
}
