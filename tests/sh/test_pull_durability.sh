#!/usr/bin/env bash
# Durability order of kstats pull, from its syscalls under strace -f -y: every
# rename onto the state, the pending state or an atoms file moves data that
# was fsynced after its last write, and the target's directory is fsynced
# after the rename and before the next such rename (or exit).  Files are
# matched by what happens to them (writes, fsyncs, renames per path), not by
# temp names, so pull's sources and temp naming may change.  Real loader,
# real compaction map (links unpinned, counts set with bpftool).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${KSTATS_BUILD:-build}
T=pull_durability
TARGETS='^(state|state\.pending|atoms-[0-9]+\.pb)$'

. tests/lib/shtest.sh
shtest_setup durable strace bpftool jq

"$BUILD/kstats-loader" --obj-dir "$BUILD/bpf" --pin-dir "$PIN" --run-dir "$TMP/run" >"$TMP/log" 2>&1 ||
	fail "kstats-loader failed"
rm -f "$PIN"/link_*
MAP=$PIN/map_compaction_compaction_duration_map

# set_bucket0 N: the map's only key holds N in bucket 0.
set_bucket0() {
	local hex b j
	b=$(printf '%016x' "$1")
	for ((j = 14; j >= 0; j -= 2)); do hex+="${b:j:2} "; done
	hex+=$(printf '00 %.0s' $(seq 248))
	# shellcheck disable=SC2086
	bpftool map update pinned "$MAP" key hex 00 00 00 00 value hex $hex ||
		fail "bpftool map update"
}

# traced_pull NAME: kstats pull under strace, trace in $TMP/NAME.trace.
# LeakSanitizer cannot run under ptrace; the other pull tests check leaks.
traced_pull() {
	ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 strace -f -qq -y -s 0 -o "$TMP/$1.trace" \
		-e trace=write,pwrite64,writev,pwritev,pwritev2,ftruncate,fallocate,fsync,fdatasync,sync,syncfs,rename,renameat,renameat2 \
		"$BUILD/kstats" pull --obj-dir "$BUILD/bpf" --pin-dir "$PIN" \
		--state-dir "$TMP/state" --out-dir "$TMP/atoms" \
		--status-file "$TMP/run/status.json" >>"$TMP/log" 2>&1 ||
		fail "kstats pull failed: $(tail -1 "$TMP/log")"
}

# An fd argument's path (strace -y: 3</dir/file>), or "" for none.
fd_path() {
	[[ $1 =~ ^[A-Z_0-9]+\<([^\>]*)\> ]] && echo "${BASH_REMATCH[1]}"
}

# check_trace FILE: one line per violation; the renamed targets into $renamed.
check_trace() {
	local line call args p src dst sdir ddir wait_dir="" wait_for=""
	local -A dirty=()	# path -> 1: written since its last fsync
	renamed=""
	while IFS= read -r line; do
		[[ $line =~ ^[0-9]+\ +(.*) ]] && line=${BASH_REMATCH[1]}	# strace -f's pid
		[[ $line =~ ^([a-z0-9_]+)\((.*)\)\ +=\ (-?[0-9]+) ]] || continue
		call=${BASH_REMATCH[1]} args=${BASH_REMATCH[2]}
		[ "${BASH_REMATCH[3]}" = -1 ] && continue
		case $call in
		write|pwrite64|writev|pwritev|pwritev2|ftruncate|fallocate)
			dirty[$(fd_path "$args")]=1 ;;
		fsync|fdatasync)
			p=$(fd_path "$args")
			dirty[$p]=0
			[ "$p" = "$wait_dir" ] && wait_dir="" ;;
		sync|syncfs)
			for p in "${!dirty[@]}"; do dirty[$p]=0; done
			wait_dir="" ;;
		rename*)
			if [[ $args =~ ^\"([^\"]*)\",\ \"([^\"]*)\" ]]; then
				sdir=$PWD ddir=$PWD src=${BASH_REMATCH[1]} dst=${BASH_REMATCH[2]}
			elif [[ $args =~ ^([^,]*),\ \"([^\"]*)\",\ ([^,]*),\ \"([^\"]*)\" ]]; then
				src=${BASH_REMATCH[2]} dst=${BASH_REMATCH[4]}
				sdir=$(fd_path "${BASH_REMATCH[1]}") ddir=$(fd_path "${BASH_REMATCH[3]}")
			else
				echo "cannot parse: $line"; continue
			fi
			[[ $src = /* ]] || src=$sdir/$src
			[[ $dst = /* ]] || dst=$ddir/$dst
			src=$(realpath -m "$src") dst=$(realpath -m "$dst")	# as strace -y prints fds
			[[ ${dst##*/} =~ $TARGETS ]] || continue
			[ -n "$wait_dir" ] &&
				echo "${wait_for##*/}: $wait_dir not fsynced before the rename onto ${dst##*/}"
			[ "${dirty[$src]-}" = 0 ] ||
				echo "${dst##*/}: renamed from ${src##*/} whose data was not fsynced after its last write"
			dirty[$dst]=${dirty[$src]-}
			unset "dirty[$src]"
			wait_dir=${dst%/*} wait_for=$dst
			renamed+=" ${dst##*/}" ;;
		esac
	done <"$1"
	[ -z "$wait_dir" ] || echo "${wait_for##*/}: $wait_dir not fsynced after the rename"
}

# check NAME EXPECTED-TARGETS (regex over the sorted renamed targets)
check() {
	check_trace "$TMP/$1.trace" >"$TMP/$1.bad"
	[ -s "$TMP/$1.bad" ] && fail "$1: $(head -3 "$TMP/$1.bad" | paste -sd ';')"
	renamed=$(tr ' ' '\n' <<<"$renamed" | sort | paste -sd ' ')
	[[ $renamed =~ $2 ]] ||
		fail "$1: renamed onto '${renamed# }', want $2; $(grep -c . "$TMP/$1.trace") traced calls, renames: $(grep rename "$TMP/$1.trace" | head -3 | paste -sd ';'); pull said: $(tail -3 "$TMP/log" | paste -sd ';')"
	echo "PASS: $T: $1: fsync before rename, directory fsync after (${renamed# })"
}

set_bucket0 7
traced_pull counts
check counts '^ ?atoms-[0-9]+\.pb state state\.pending$'
traced_pull quiet
check quiet '^ ?state$'
