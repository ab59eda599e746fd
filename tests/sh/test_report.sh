#!/usr/bin/env bash
# kstats report read back by a real browser (Debian's chromium, headless):
# every cell's count in the DOM equals the atoms as protoc --decodes them
# (tests/lib/report_atoms.py, which also writes atoms on the wire by itself),
# two hosts add up, the screenshot is a picture; a page from real pulls
# (the real loader, real compaction events, the pull tests' pull_at); bad
# files listed, an empty directory, and kstats atoms --heatmap; the page's
# bounds (one cell budget, newest days first, distinct key-days, empty ranges).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${KSTATS_BUILD:-build}
T=report
RA=tests/lib/report_atoms.py

. tests/lib/shtest.sh
. tests/lib/pull.sh
shtest_setup report protoc python3 chromium
K=$BUILD/kstats

pass() { echo "PASS: $T: $1"; }
check() {	# check WHAT COMMAND...: PASS or FAIL: WHAT
	local what=$1
	shift
	if "$@"; then pass "$what"; else echo "FAIL: $T: $what"; fi
}

browse() {	# browse PAGE MODE (--dump-dom >OUT | --screenshot=PNG)
	local prof
	prof=$(mktemp -d "$TMP/chromium-XXXXXX")
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$prof" --window-size=1280,1600 "$2" \
		"file://$(realpath "$1")" 2>>"$TMP/chromium.log"
}

# same_cells PAGE FILES...: the DOM's cells, read back, equal the atoms'.
same_cells() {
	local page=$1
	shift
	browse "$page" --dump-dom >"$TMP/dom.html" || return 1
	python3 $RA dom "$TMP/dom.html" >"$TMP/dom.cells" 2>"$TMP/dom.err" &&
		python3 $RA expect "$@" >"$TMP/expect.cells" || return 1
	[ -s "$TMP/expect.cells" ] && [ ! -s "$TMP/dom.err" ] &&
		diff -u "$TMP/expect.cells" "$TMP/dom.cells" >&2
}

# Two hosts: h1 has no file on day 5 (2026-11-06), h2 only days 0-4.
python3 $RA gen "$TMP/h1" --days 8 --keys 3 --gap 5 --seed 1 || fail "gen h1"
python3 $RA gen "$TMP/h2" --days 5 --keys 2 --seed 2 || fail "gen h2"
"$K" report --out-dir "$TMP/h1" --out-dir "$TMP/h2" -o "$TMP/page.html" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && [ ! -s "$TMP/err" ] || fail "kstats report: exit $rc: $(head -2 "$TMP/err")"
n=$(python3 $RA expect "$TMP"/h1/*.pb "$TMP"/h2/*.pb | wc -l)
check "every cell's count read back from chromium's DOM equals protoc --decode of both hosts' atoms ($n cells)" \
	same_cells "$TMP/page.html" "$TMP"/h1/*.pb "$TMP"/h2/*.pb
# Merged, not side by side: a cell of day 0 holds both hosts' events.
merged() {
	python3 $RA expect "$TMP"/h1/atoms-0000000001.pb >"$TMP/one.cells"
	! diff -q "$TMP/one.cells" <(grep 2026-11-01 "$TMP/expect.cells") >/dev/null &&
		grep -q "Read 2 hosts (atoms directories), 12 files, " "$TMP/dom.html"
}
check "two hosts add up per cell; the page says 2 hosts, 12 files" merged
# --rows (issue 49): the hosts the rows name, counted once each; rows that name none
# (queries.sql's page rows) claim no host count.
rows_hosts() {
	local n
	{ "$K" atoms --out-dir "$TMP/h1" --format json-each-row &&
		"$K" atoms --out-dir "$TMP/h2" --format json-each-row |
		sed 's/"host":"[^"]*"/"host":"h2"/'; } >"$TMP/hosts.rows" || return 1
	n=$(wc -l <"$TMP/hosts.rows")
	"$K" report --rows "$TMP/hosts.rows" -o "$TMP/rows.html" &&
		grep -q "^<p>Read $n rows of 2 hosts (--rows), " "$TMP/rows.html" &&
		sed 's/"host":"[^"]*",//' "$TMP/hosts.rows" | "$K" report --rows - -o "$TMP/rows.html" &&
		grep -q "^<p>Read $n rows (--rows, no host column), " "$TMP/rows.html" &&
		! grep -q " hosts\? (" "$TMP/rows.html"
}
check "report --rows: the page says the hosts the rows name (2), and no host count for rows without one" rows_hosts
self_contained() {
	! grep -qiE '<script|<link|<img|<iframe|https?:|src=' "$TMP/page.html" &&
		grep -q '<svg' "$TMP/page.html" && grep -q '<style>' "$TMP/page.html" &&
		grep -q '<h3>pool_name=&lt;b&gt;pool&amp;1 pool_id=1</h3>' "$TMP/dom.html" &&
		! grep -q '<b>' "$TMP/dom.html"
}
check "self-contained: inline SVG and CSS, no script, link, image or URL; a key named <b>pool&1 is text, not markup" self_contained
marks() {
	grep -q '<title>2026-11-06: no pull</title>' "$TMP/dom.html" &&
		! grep -q '<title>2026-11-05: no pull</title>' "$TMP/dom.html" &&
		grep -q "<title>2026-11-01: reset: counts since the map's creation</title>" "$TMP/dom.html" &&
		grep -q '<title>2026-11-03: anomalies' "$TMP/dom.html" &&
		[ "$(grep -c 'class="q50"' "$TMP/dom.html")" -eq "$(grep -c '<h3>' "$TMP/dom.html")" ] &&
		[ "$(grep -c 'class="q99"' "$TMP/dom.html")" -eq "$(grep -c '<h3>' "$TMP/dom.html")" ]
}
check "the day without a pull is a gap, reset and anomalies are marked, p50 and p99 drawn on every heatmap" marks
totals() {	# each metric's summary line: its events, summed from the atoms
	local m want
	for m in $(cut -d' ' -f1 "$TMP/expect.cells" | sort -u); do
		want=$(awk -v m="$m" '$1 == m { s += $NF } END { print s }' "$TMP/expect.cells")
		grep -A1 "<h2>$m</h2>" "$TMP/dom.html" | grep -q "days covered (2026-11-01 to 2026-11-08), $want events, p50 " ||
			{ echo "$m: no summary with $want events" >&2; return 1; }
	done
}
check "per metric: days covered, total events (summed from the atoms), p50, p99" totals
picture() {
	local n
	browse "$TMP/page.html" --screenshot="$TMP/shot.png" >/dev/null || return 1
	n=$(python3 $RA colours "$TMP/shot.png") || return 1
	echo "screenshot: $n colours, $(stat -c %s "$TMP/shot.png") bytes" >&2
	[ "$n" -ge 50 ]
}
check "the screenshot is a picture: at least 50 distinct colours" picture

# Many keys: the least busy are summed into one heatmap, nothing is lost.
python3 $RA gen "$TMP/many" --days 60 --keys 30 --seed 4 || fail "gen many"
"$K" report --out-dir "$TMP/many" -o "$TMP/many.html" || fail "report of 30 keys"
folded() {
	grep -q '<title>KswapdLatency (other keys) 2026-11-01 ' "$TMP/many.html" &&
		[ "$(stat -c %s "$TMP/many.html")" -lt 5000000 ] && grep -q '<h3>KswapdLatency: [0-9]* other keys, summed</h3>' "$TMP/many.html" &&
		KEYS_SUMMED=1 same_cells "$TMP/many.html" "$TMP"/many/*.pb
}
check "60 days of 6 metrics x 30 keys: the least busy keys summed into one heatmap a metric, every metric's cells still sum to the atoms, under 5 MB" folded

# Days in a row without a pull are one gap (a clock in 1970 would make
# thousands).
python3 $RA gen "$TMP/runs" --days 6 --metrics 1 --gap 2 --gap 3 || fail "gen runs"
"$K" report --out-dir "$TMP/runs" -o "$TMP/runs.html"
check "two days in a row without a pull: one gap, titled with both days" \
	eval '[ "$(grep -c "class=gap" "$TMP/runs.html")" -eq 1 ] &&
		grep -q "<title>2026-11-03 to 2026-11-04: no pull</title>" "$TMP/runs.html"'

# --since and --until keep their days only.
"$K" report --out-dir "$TMP/h1" --since 2026-11-02 --until 2026-11-03 -o "$TMP/range.html"
range() {
	grep -o '<title>[A-Za-z]* [^<]*events</title>' "$TMP/range.html" |
		grep -o ' 2026-11-[0-9]* ' | sort -u | tr -d ' ' | paste -sd' ' |
		grep -qx '2026-11-02 2026-11-03'
}
check "--since 2026-11-02 --until 2026-11-03: cells of those days only" range
"$K" report --since 2026-13-01 >/dev/null 2>"$TMP/err"
rc=$?
check "--since 2026-13-01: exit 2, the form named" \
	eval '[ $rc -eq 2 ] && grep -q "give a UTC day as YYYY-MM-DD" "$TMP/err"'

# An empty range says so; --since after --until is refused.
"$K" report --out-dir "$TMP/h1" --since 2027-01-01 -o "$TMP/none.html" 2>"$TMP/err"
rc=$?
check "--since past every atom: exit 1, one line, and the page says the range is empty (not 'Nothing yet')" \
	eval '[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
		grep -q "atoms read are outside --since and --until; widen the range" "$TMP/err" &&
		grep -q "Nothing in the range: the [0-9]* atoms read are all outside" "$TMP/none.html" &&
		! grep -q "Nothing yet" "$TMP/none.html"'
"$K" report --out-dir "$TMP/h1" --since 2026-11-05 --until 2026-11-02 >/dev/null 2>"$TMP/err"
rc=$?
check "--since after --until: exit 2, one line naming both" \
	eval '[ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
		grep -q "^kstats report: --since 2026-11-05 is after --until 2026-11-02; " "$TMP/err"'

# The page's bounds: every cell counts, the busiest key's and the sum's too.
python3 $RA gen "$TMP/decade" --days 10000 --keys 1 || fail "gen decade"
"$K" report --out-dir "$TMP/decade" -o "$TMP/decade.html" 2>"$TMP/err"
rc=$?
check "6 metrics of one key over 10,000 days: about 5 MB (not 36), the newest days drawn, the page says which days it left out" \
	eval '[ $rc -eq 0 ] && [ "$(stat -c %s "$TMP/decade.html")" -lt 5500000 ] &&
		grep -q "days covered ([0-9-]* to 2054-03-18)" "$TMP/decade.html" &&
		grep -q "Not drawn: the days from 2026-11-01 to before 20[0-9-]*, past the page" "$TMP/decade.html"'
python3 $RA gen "$TMP/k60" --days 7 --keys 60 --seed 4 || fail "gen k60"
"$K" report --out-dir "$TMP/k60" -o "$TMP/k60.html" || fail "report of 60 keys"
check "7 days x 60 keys: folding converges, most keys drawn on their own (not one key and the sum)" \
	eval '[ "$(grep -c "<h3>" "$TMP/k60.html")" -gt 150 ] &&
		grep -q "<h3>KswapdLatency: [0-9]* other keys, summed</h3>" "$TMP/k60.html"'

# At the limits, older days give way; the limits count distinct key-days.
python3 $RA gen "$TMP/z1" --days 730 --keys 200 --metrics 2 --seed 1 &&
	python3 $RA gen "$TMP/z2" --days 730 --keys 200 --metrics 2 --seed 2 --start 2028-11-01 ||
	fail "gen z1 z2"
"$K" report --out-dir "$TMP/z1" --out-dir "$TMP/z2" -o "$TMP/z12.html" 2>"$TMP/err"
rc=$?
check "1460 days x 200 keys, past 256 Ki key-days: the newest day still drawn, the oldest files named as past the limits (exit 1)" \
	eval '[ $rc -eq 1 ] && grep -q "z1/atoms-0000000001.pb: [0-9]* atoms past the limits of 4096 keys and 262144 key-days" "$TMP/err" &&
		grep -q "atoms, [0-9-]* to 2030-10-31\." "$TMP/z12.html" &&
		! grep -q "z2/atoms-0000000730.pb: .* past the limits" "$TMP/err"'
cp -r "$TMP/z1" "$TMP/z1b" && cp -r "$TMP/z1" "$TMP/z1c" || fail "cp z1"
"$K" report --out-dir "$TMP/z1" --out-dir "$TMP/z1b" --out-dir "$TMP/z1c" -o "$TMP/z3.html" 2>"$TMP/err"
rc=$?
check "3 hosts x 730 days x 200 keys, 146,730 distinct key-days: every atom drawn, none past the limits" \
	eval '[ $rc -eq 0 ] && [ ! -s "$TMP/err" ] &&
		grep -q "Read 3 hosts (atoms directories), 2190 files, 440190 atoms" "$TMP/z3.html"'

# Bad input: skipped with one line each, listed on the page, the rest drawn.
cp -r "$TMP/h2" "$TMP/bad"
head -c 300 /dev/urandom | tr '\012' x >"$TMP/bad/atoms-0000000011.pb"
printf '\012\377\377\377\377\017' >"$TMP/bad/atoms-0000000012.pb"
mkfifo "$TMP/bad/atoms-0000000013.pb"
ln -s "$TMP/h1/atoms-0000000001.pb" "$TMP/bad/atoms-0000000014.pb"
truncate -s 65M "$TMP/bad/atoms-0000000015.pb"
timeout 60 "$K" report --out-dir "$TMP/bad" --out-dir "$TMP/nonexistent" -o "$TMP/bad.html" 2>"$TMP/err"
rc=$?
bad_listed() {
	local f
	[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 6 ] || return 1
	for f in 11 12 13 14 15; do
		grep -q "<li>$TMP/bad/atoms-00000000$f.pb: " "$TMP/bad.html" || return 1
	done
	grep -q "<li>$TMP/nonexistent: cannot read: " "$TMP/bad.html" &&
		grep -q "atoms-0000000013.pb: a symlink or not a regular file" "$TMP/err" &&
		grep -q "atoms-0000000015.pb: over 64 MiB" "$TMP/err" &&
		grep -q "Read 2 hosts (atoms directories), 5 files" "$TMP/bad.html" &&
		same_cells "$TMP/bad.html" "$TMP"/h2/*.pb
}
check "bad input (garbage, broken framing, FIFO, symlink, 65 MiB, a missing dir): exit 1, one line each on stderr and on the page, the good files drawn" bad_listed

# Bounded: 5000 keys of one metric, past the 4096 a page holds.
python3 $RA gen "$TMP/keys" --days 1 --metrics 3 --keys 5000 || fail "gen keys"
"$K" report --out-dir "$TMP/keys" -o "$TMP/keys.html" 2>"$TMP/err"
rc=$?
check "5000 keys: the atoms past 4096 keys are skipped with one line naming the limit, the rest drawn (exit 1)" \
	eval '[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
		grep -q "atoms-0000000001.pb: 5905 atoms past the limits of 4096 keys" "$TMP/err" &&
		grep -q "DirectReclaimLatency: [0-9]* other keys, summed" "$TMP/keys.html"'

mkdir "$TMP/empty"
"$K" report --out-dir "$TMP/empty" -o "$TMP/empty.html" 2>"$TMP/err"
rc=$?
empty() {
	[ $rc -eq 0 ] && browse "$TMP/empty.html" --dump-dom >"$TMP/empty.dom" &&
		grep -q "Nothing yet: no atoms in $TMP/empty" "$TMP/empty.dom" &&
		! grep -q '<svg class="hm"' "$TMP/empty.dom"
}
check "an empty directory: exit 0, a page that says there is nothing yet" empty

# The terminal: 40 days do not fit 80 columns, the last 23 do.
python3 $RA gen "$TMP/long" --days 40 --keys 2 --metrics 3 || fail "gen long"
NO_COLOR=1 script -qec "$K atoms --heatmap --out-dir $TMP/long" /dev/null >"$TMP/tty.txt"
"$K" atoms --heatmap --out-dir "$TMP/long" >"$TMP/pipe.txt"
script -qec "$K atoms --heatmap --out-dir $TMP/long" /dev/null >"$TMP/colour.txt"
heatmap() {
	python3 - "$TMP/pipe.txt" <<'PY' || return 1
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert max(len(l) for l in lines) <= 80, "wider than 80 columns"
heads = [l for l in lines if l == "           18 19 20 21 22 23 24 25 26 27 28 29 30 01 02 03 04 05 06 07 08 09 10"]
assert len(heads) == 5, "not 5 heatmaps ending on 2026-12-10: %d" % len(heads)
assert any("█" in l for l in lines) and any("░" in l for l in lines)
PY
	grep -q '^           2026-11                                2026-12  ' "$TMP/pipe.txt" && grep -A1 '^DirectReclaimLatency process_state=STATE_NATIVE$' "$TMP/pipe.txt" | grep -q '^          40 days, ' &&
		! grep -q $'\033' "$TMP/pipe.txt" && ! grep -q $'\033' "$TMP/tty.txt" &&
		grep -q '░' "$TMP/tty.txt" && grep -q $'\033\[38;5;' "$TMP/colour.txt"
}
check "atoms --heatmap: at most 80 columns, the last 23 days with dates, shades on a pipe and with NO_COLOR, 256 colours on a tty" heatmap

# Real pulls: the real loader, real compaction events, a pull a day.
"$BUILD/kstats-loader" --obj-dir "$BUILD/bpf" --pin-dir "$PIN" --run-dir "$TMP/run" >/dev/null ||
	fail "kstats-loader failed"
boot=$(awk '{ printf "%d", $1 * 1e9 }' /proc/uptime)
for d in 0 1 2; do
	echo 1 >/proc/sys/vm/compact_memory
	pull_at $((boot + (d + 1) * 86400000000000)):$((1793577600 + d * 86400))000000000 \
		--status-file "$TMP/none.json"
done
ls "$TMP"/atoms/atoms-*.pb >/dev/null 2>&1 || skip "no compaction events on this kernel: no atoms pulled"
"$K" report --out-dir "$TMP/atoms" -o "$TMP/real.html" 2>"$TMP/err" || fail "report of real pulls: $(head -1 "$TMP/err")"
n=$(python3 $RA expect "$TMP"/atoms/*.pb | wc -l)
check "real pulls ($(ls "$TMP"/atoms | wc -l) files, $n cells): every cell in the DOM equals protoc --decode of the atoms" \
	same_cells "$TMP/real.html" "$TMP"/atoms/*.pb
