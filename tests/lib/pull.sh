# Sourced by the shell tests that pull with the test build of kstats
# (hooks/kstats: a fixed clock and boot id, mk/pull_hooks.mk).
# pull_at BOOT_NS:REAL_NS [ARGS...]: one pull of the objects pinned at $PIN,
# state in $TMP/state, atoms in $TMP/atoms, output appended to $TMP/log;
# fail()s with its last line.
pull_at() {
	local clock=$1
	shift
	KSTATS_CLOCK=$clock KSTATS_BOOT_ID=00000000-0000-4000-8000-000000000001 \
		"$BUILD/hooks/kstats" pull --obj-dir "$BUILD/bpf" --pin-dir "$PIN" \
		--state-dir "$TMP/state" --out-dir "$TMP/atoms" "$@" >>"$TMP/log" 2>&1 ||
		fail "kstats pull failed: $(tail -1 "$TMP/log")"
}
