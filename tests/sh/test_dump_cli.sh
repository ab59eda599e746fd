#!/usr/bin/env bash
# kstats CLI without the kernel: --help on every command, usage errors and
# their exit codes, and the man page (renders cleanly, documents every
# option each --help lists, and the same exit codes).
set -u
BUILD=${KSTATS_BUILD:-build}
KSTATS=$BUILD/kstats
MAN=doc/kstats.1
tmp=$(mktemp -d /tmp/kstats-test-$$-cli-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
trap 'exit 143' TERM

# check NAME WANT_STATUS WANT_STDERR_SUBSTRING -- ARGS...
check() {
	local name=$1 want=$2 msg=$3 rc
	shift 4
	"$KSTATS" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL: $name: exit $rc, want $want: $(head -c 300 "$tmp/err")"
	elif [ -n "$msg" ] && ! grep -qF -- "$msg" "$tmp/err"; then
		echo "FAIL: $name: stderr lacks '$msg': $(head -c 300 "$tmp/err")"
	else
		echo "PASS: $name"
	fi
}

for cmd in dump status read; do
	if "$KSTATS" "$cmd" --help >"$tmp/help" 2>&1 && grep -q "^Usage: kstats $cmd" "$tmp/help"; then
		echo "PASS: $cmd --help"
	else
		echo "FAIL: $cmd --help: $(head -c 200 "$tmp/help")"
	fi
done
"$KSTATS" --help >"$tmp/help" && grep -q "^  status " "$tmp/help" &&
	grep -q "5 permission denied" "$tmp/help" &&
	echo "PASS: kstats --help lists status and exit 5" ||
	echo "FAIL: kstats --help lacks status or exit 5"

check "dump: unknown option" 2 "Usage: kstats dump" -- dump --bogus
check "dump: --json with --openmetrics" 2 "--json, --prometheus, --openmetrics and --rules exclude each other" -- dump --json --openmetrics
check "dump: --prometheus with --openmetrics" 2 "--json, --prometheus, --openmetrics and --rules exclude each other" -- dump --prometheus --openmetrics
check "dump: --rules with --interval" 2 "--rules reads no map: drop --interval" -- dump --rules --interval 1
check "dump: --count without --interval" 2 "--count needs --interval" -- dump --count 2
check "dump: --interval 0" 2 "--interval takes seconds in (0, 86400], not '0'" -- dump --interval 0
check "dump: --interval abc" 2 "not 'abc'" -- dump --interval abc
check "dump: --count -1" 2 "--count takes a positive number, not '-1'" -- dump --interval 1 --count -1
# One number syntax with kstats-loader (issue 28): strtod and strtol took these.
check "dump: --interval 1e1" 2 "--interval takes seconds in (0, 86400], not '1e1'" -- dump --interval 1e1
check "dump: --interval 0x10" 2 "not '0x10'" -- dump --interval 0x10
check "dump: --count +2" 2 "--count takes a positive number, not '+2'" -- dump --interval 1 --count +2
check "dump: --count 2^64" 2 "not '18446744073709551616'" -- dump --interval 1 --count 18446744073709551616
check "dump: bad --obj-dir" 2 "cannot read object directory $tmp/none: No such file or directory; pass --obj-dir" -- dump --obj-dir "$tmp/none"
mkdir "$tmp/empty"
check "dump: --obj-dir without objects" 2 "no histogram in the objects of $tmp/empty; pass --obj-dir" -- dump --obj-dir "$tmp/empty"
check "status: unknown option" 2 "Usage: kstats status" -- status --bogus
check "status: --stats 0" 2 "--stats takes seconds in (0, 3600], not '0'" -- status --stats 0
check "status: extra argument" 2 "unexpected argument 'x'" -- status x
check "unknown command" 2 "unknown command 'frobnicate'" -- frobnicate

# Output paths: one line that names the path and the fix; nothing written.
OBJS=$BUILD/bpf
check "dump: --output newdir/" 1 "cannot write $tmp/newdir/: '$tmp/newdir/' names no file, a directory; pass a file path, such as '$tmp/newdir/FILE'" -- dump --rules --obj-dir "$OBJS" --output "$tmp/newdir/"
[ ! -e "$tmp/newdir" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && echo "PASS: dump: --output newdir/ writes no file newdir, says so in one line" ||
	echo "FAIL: dump: --output newdir/: $(ls -d "$tmp/newdir" 2>&1), $(cat "$tmp/err")"
check "dump: --output existingdir" 1 "cannot write $tmp/empty: '$tmp/empty' is a directory; pass a file path, such as '$tmp/empty/FILE'" -- dump --rules --obj-dir "$OBJS" --output "$tmp/empty"
check "dump: --output ''" 1 "cannot write : '' names no file; pass a file path" -- dump --rules --obj-dir "$OBJS" --output ''
check "report: -o existingdir/" 1 "cannot write $tmp/empty/: '$tmp/empty/' names no file, a directory; pass a file path" -- report --out-dir "$tmp/empty" -o "$tmp/empty/"

# Interrupted writes leave no temp file; a later run removes only its own.
H=$BUILD/hooks/kstats
mkdir "$tmp/wdir"
only() {	# only DIR NAMES...: DIR holds exactly NAMES (hidden ones too)
	local dir=$1
	shift
	[ "$(ls -A "$dir" | sort | tr '\n' ' ')" = "$(printf '%s\n' "$@" | sort | tr '\n' ' ')" ]
}
KSTATS_FAULT=output-term "$H" dump --rules --obj-dir "$OBJS" --output "$tmp/wdir/k.yml" 2>/dev/null
rc=$?
[ $rc -eq 143 ] && only "$tmp/wdir" k.yml && grep -q KstatsPullLate "$tmp/wdir/k.yml" &&
	echo "PASS: SIGTERM during dump --output: the file written whole, no temp file left" ||
	echo "FAIL: SIGTERM during dump --output: exit $rc, left: $(ls -A "$tmp/wdir")"
KSTATS_FAULT=output-term "$H" report --out-dir "$tmp/empty" -o "$tmp/wdir/r.html" 2>/dev/null
rc=$?
[ $rc -eq 143 ] && only "$tmp/wdir" k.yml r.html &&
	echo "PASS: SIGTERM during report -o: no temp file left" ||
	echo "FAIL: SIGTERM during report -o: exit $rc, left: $(ls -A "$tmp/wdir")"
KSTATS_FAULT=output-temp "$H" report --out-dir "$tmp/empty" -o "$tmp/wdir/r.html" 2>/dev/null
stale=$(cd "$tmp/wdir" && ls -A | grep '^\.r\.html\.......\.tmp$')
touch "$tmp/wdir/.r.html.abcdef.tmp" "$tmp/wdir/.other.html.abcdef.tmp" "$tmp/wdir/.r.html.abcdefg.tmp" \
	"$tmp/wdir/.r.html.zzzzzz.tmp"
chown 65534 "$tmp/wdir/.r.html.abcdef.tmp" 2>/dev/null || rm "$tmp/wdir/.r.html.abcdef.tmp"
flock -x "$tmp/wdir/.r.html.zzzzzz.tmp" sleep 30 &
locker=$!
sleep 0.3
others=$(cd "$tmp/wdir" && ls -A | grep -v "^$stale\$" | sort | tr '\n' ' ')
"$KSTATS" report --out-dir "$tmp/empty" -o "$tmp/wdir/r.html" 2>/dev/null
[ -n "$stale" ] && [ "$(cd "$tmp/wdir" && ls -A | sort | tr '\n' ' ')" = "$others" ] &&
	echo "PASS: a later report -o removes the temp file a SIGKILL left ($stale), not others' nor a locked one" ||
	echo "FAIL: stale temp files: killed writer's '$stale'; left: $(ls -A "$tmp/wdir" | tr '\n' ' ')"
kill "$locker" 2>/dev/null
wait "$locker" 2>/dev/null

if ! command -v groff >/dev/null; then
	echo "SKIP: man page: groff is not installed"
	exit 0
fi
if warn=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1) && [ -z "$warn" ]; then
	echo "PASS: man page renders without warnings"
else
	echo "FAIL: man page: $warn"
fi
# Every long option of every --help appears in the man page.
missing=
for cmd in dump status read; do
	for opt in $("$KSTATS" "$cmd" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -qF -- "$(printf '%s' "$opt" | sed 's/-/\\-/g')" "$MAN" ||
			missing="$missing $cmd:$opt"
	done
done
[ -z "$missing" ] && echo "PASS: man page documents every option" ||
	echo "FAIL: man page lacks:$missing"
# The exit codes of kstats.h are the ones the man page documents.
codes=$(grep -o 'KSTATS_EXIT_[A-Z_]* [0-9]' cli/kstats.h | awk '{print $2}' | sort | tr '\n' ' ')
man_codes=$(sed -n '/^\.SH "EXIT STATUS"/,/^\.SH FILES/p' "$MAN" | grep -A1 '^\.TP' |
	grep -o '^\.B [0-9]' | awk '{print $2}' | sort | tr '\n' ' ')
[ "$codes" = "$man_codes" ] && echo "PASS: man page exit codes match kstats.h" ||
	echo "FAIL: exit codes: kstats.h '$codes', man page '$man_codes'"
