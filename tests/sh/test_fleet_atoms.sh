#!/usr/bin/env bash
# The fleet's atoms in ClickHouse (doc/fleet-atoms.md, issue 49): two of
# Debian's clickhouse-server on 127.0.0.1, their own ports and dirs under
# $BUILD, one cluster of two shards with dist/clickhouse/'s schema, cluster
# and ingest user.  kstats ship sends a real pull's atoms and generated
# hosts'; every (metric, key, day, bucket) sum read through the Distributed
# table equals protoc --decode of the atoms, the SQL p50/p99 equal kstats
# report's of the same rows, and no row is lost or doubled by a second
# ship, a SIGKILL mid-ship, a shard down, HTTP 500, a garbage answer or a
# server that never answers; each failure is one line naming the fix.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${KSTATS_BUILD:-build}
T=fleet_atoms
RA=tests/lib/report_atoms.py

. tests/lib/shtest.sh
shtest_setup fleet clickhouse-server clickhouse-client protoc python3 curl
K=$BUILD/kstats
CH=$(realpath -m "$BUILD/fleet-$$")
trap 'ch_stop_all; rm -rf "$PIN" "$TMP" "$CH"' EXIT

pass() { echo "PASS: $T: $1"; }
check() {	# check WHAT COMMAND...: PASS or FAIL: WHAT
	local what=$1
	shift
	if "$@"; then pass "$what"; else echo "FAIL: $T: $what"; fi
}

. tests/lib/clickhouse.sh
ch_cluster "$CH" || fail "$CH_ERR"
URL=http://127.0.0.1:$HTTP1/
printf '%s\n' "$PW" >"$TMP/pw"
chmod 600 "$TMP/pw"
ship() {	# ship HOST [ARGS]: kstats ship of $TMP/HOST's atoms as the ingest user
	local host=$1
	shift
	mkdir -p "$TMP/state-$host"
	"$K" ship --url "$URL" --out-dir "$TMP/$host" --state-dir "$TMP/state-$host" \
		--host "$host" --user kernelstats_ingest --password-file "$TMP/pw" "$@"
}

# A real pull on this machine (the real loader, real compaction) and
# generated hosts, each its own atoms directory.
"$BUILD/kstats-loader" --obj-dir "$BUILD/bpf" --pin-dir "$PIN" --run-dir "$TMP/run" >/dev/null ||
	fail "kstats-loader failed"
mkdir -p "$TMP/state" "$TMP/real"
for i in 1 2; do
	echo 1 >/proc/sys/vm/compact_memory
	"$K" pull --obj-dir "$BUILD/bpf" --pin-dir "$PIN" --state-dir "$TMP/state" \
		--out-dir "$TMP/real" --status-file "$TMP/none.json" >>"$TMP/log" 2>&1 ||
		fail "kstats pull: $(tail -1 "$TMP/log")"
done
# A count over 2^31 - 1 is split over atoms of one key and window (pull.h):
# one row, else the table would keep one part of it.
python3 - "$TMP/split" <<'PY' || fail "split atoms"
import os, sys
sys.path.insert(0, "tests/lib")
from report_atoms import field, payload
os.makedirs(sys.argv[1])
end = 1793502550
recs = b""
for part in (2**31 - 1, 8):
    atom = (field(1, 0, 100002) + field(2, 0, 1) + field(3, 2, b"b00t") +
            field(4, 0, (end - 86400) * 10**9) + field(5, 0, end * 10**9) +
            field(100002, 2, payload([(1, "enum:process_state")], 2, 0, [0, 0, 0, part] + [0] * 28)))
    recs += field(1, 2, atom)
open(os.path.join(sys.argv[1], "atoms-0000000001.pb"), "wb").write(recs)
PY
check "atoms split at 2^31 are one row, their sum (json-each-row)" \
	grep -q '"buckets":\[0,0,0,2147483655,0' <("$K" atoms --out-dir "$TMP/split" --format json-each-row)
HOSTS="real split"
for i in 1 2 3 4 5 6; do
	python3 $RA gen "$TMP/gen$i" --days $((3 + i)) --keys 3 --seed "$i" || fail "gen host $i"
	HOSTS+=" gen$i"
done

for h in $HOSTS; do
	ship "$h" >>"$TMP/ship.log" 2>&1 || fail "kstats ship $h: $(tail -1 "$TMP/ship.log")"
done
check "the real pull's atoms carry the kernel release (uname -r)" \
	grep -q "\"kernel\":\"$(uname -r)\"" <("$K" atoms --out-dir "$TMP/real" --format json-each-row)

# The atoms' cells as protoc decodes them; the table's through the
# Distributed table, deduplicated (FINAL), in the same form.
expect_all() {
	local h
	for h in $HOSTS; do cat "$TMP/$h"/atoms-*.pb; done >"$TMP/all.pb"
	python3 $RA expect "$TMP/all.pb" | sort >"$TMP/expect.cells"
}
table_cells() {	# table_cells [MODIFIER]: every non-zero bucket sum
	q 1 "SELECT metric, key, day, arrayStringConcat(arrayMap(x -> toString(x),
		sumForEach(buckets)), ',') FROM kernelstats.atoms $1
		GROUP BY metric, key, day FORMAT TSV" | python3 -c '
import sys
for line in sys.stdin:
    metric, key, day, sums = line.rstrip("\n").split("\t")
    for b, c in enumerate(sums.split(",")):
        if int(c):
            print("%s %s %s %d\t%s" % (metric, " ".join(sorted(key.split())) or "-", day, b, c))
' | sort
}
same_cells() {
	table_cells FINAL >"$TMP/table.cells" &&
		[ -s "$TMP/expect.cells" ] && diff -u "$TMP/expect.cells" "$TMP/table.cells" >&2
}
expect_all
nrows=$(q 1 "SELECT count() FROM kernelstats.atoms FINAL")
check "every (metric, key, day, bucket) sum through the Distributed table equals protoc --decode of 8 hosts' atoms ($(wc -l <"$TMP/expect.cells") cells, $nrows rows)" \
	same_cells
check "both shards hold rows (sharded by cityHash64(host))" \
	test "$(q 1 "SELECT count() FROM kernelstats.atoms_local")" -gt 0 -a \
	"$(q 2 "SELECT count() FROM kernelstats.atoms_local")" -gt 0

# dist/clickhouse/queries.sql's query NAME, over every day.
query() {
	python3 -c 'import sys
for stmt in open("dist/clickhouse/queries.sql").read().split(";"):
    if "-- %s:" % sys.argv[1] in stmt:
        print("\n".join(l for l in stmt.replace("today() - 30", "toDate(0)").split("\n")
                        if not l.startswith("--")))' "$1"
}
# The SQL p50/p99 of each (metric, key, kernel, day) against kstats report's
# page of that row (its per-metric p50 and p99).
quantiles_match() {
	q 1 "$(query merged)" >"$TMP/merged.rows" || return 1
	python3 - "$K" "$TMP/merged.rows" <<'PY'
import json, re, subprocess, sys
UNITS = {"µs": 1, "ms": 1e3, "s": 1e6, "B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3,
         "": 1, "k": 1e3, "M": 1e6, "G": 1e9}
def val(s):
    m = re.match(r"([\d.e+-]+)(\D*)$", s.lstrip("+"))
    return float(m.group(1)) * UNITS[m.group(2)]
rows, n = {}, 0
for line in open(sys.argv[2]):
    r = json.loads(line)
    rows.setdefault((r["day"], r["metric"], r["key"], r["kernel"]), [r["buckets"], {}])[1][r["q"]] = r["value"]
for (day, metric, key, kernel), (buckets, sql) in rows.items():
    row = json.dumps({"day": day, "metric": metric, "key": key, "buckets": buckets})
    page = subprocess.run([sys.argv[1], "report", "--rows", "-"], input=row.encode(),
                          stdout=subprocess.PIPE, check=True).stdout.decode()
    m = re.search(r"events, p50 ([^,]+), p99 ([^.]+(?:\.\d+)?[^.,]*)\. Colour", page)
    shown = (val(m.group(1)), val(m.group(2)))
    for a, b in zip((sql[0.5], sql[0.99]), shown):
        assert abs(a - b) <= 0.0005 * max(a, b) + 1e-9, (day, metric, key, kernel, sql, shown)
    n += 1
assert n > 10, n
PY
}
check "queries.sql's p50/p99 per metric, key, kernel and day equal kstats report --rows' of the same buckets" \
	quantiles_match
fleet_page() {	# the page of the rows equals the page of the hosts' directories
	local h dirs=()
	for h in $HOSTS; do dirs+=(--out-dir "$TMP/$h"); done
	q 1 "$(query page)" | "$K" report --rows - -o "$TMP/rows.html" &&
		"$K" report "${dirs[@]}" -o "$TMP/dirs.html" &&
		grep -q "<h2>DirectReclaimLatency</h2>" "$TMP/rows.html" &&
		diff <(grep -v '^<p>Read ' "$TMP/dirs.html") <(grep -v '^<p>Read ' "$TMP/rows.html") >&2
}
check "kstats report --rows - of queries.sql's page rows draws the page of the 8 hosts' atoms directories" fleet_page

# Hostile rows: one line on stderr naming the line and what a row needs, a page
# all the same (exit 1); a symlink is refused.
rows_bad() {
	local bad line n=0
	for bad in '{"day":"9999-01-01","metric":"CompactionDuration","buckets":[1]}' \
		'{"day":"2026-11-01","metric":"CompactionDuration","buckets":["1","-2"]}' \
		'{"day":"2026-11-01","metric":"NoSuchMetric","buckets":[1]}' \
		'{"day":"2026-11-01","metric":"CompactionDuration"}' 'not json' \
		"{\"key\":\"$(head -c 70000 /dev/zero | tr '\0' x)\"}"; do
		line='{"day":"2026-11-01","metric":"CompactionDuration","key":"","buckets":[1]}'
		printf '%s\n%s\n' "$line" "$bad" | "$K" report --rows - -o "$TMP/bad.html" 2>"$TMP/err"
		[ $? -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "^kstats report: skipped -:2: " "$TMP/err" &&
			grep -q "<h2>CompactionDuration</h2>" "$TMP/bad.html" || { cat "$TMP/err" >&2; return 1; }
		n=$((n + 1))
	done
	ln -s "$TMP/fleet.rows" "$TMP/rows.link" 2>/dev/null || ln -s /etc/passwd "$TMP/rows.link"
	"$K" report --rows "$TMP/rows.link" -o "$TMP/bad.html" 2>"$TMP/err"
	[ $? -eq 1 ] && grep -q "pass a regular file of rows" "$TMP/err"
}
check "report --rows: a bad day, count, metric, row, JSON or a line over 64 KiB is one line naming it; a symlink is refused" \
	rows_bad

# Shipping twice: the record says all is sent; forgetting it resends all,
# and the resent rows collapse.
again() {
	ship gen1 | grep -q "^kstats ship: 0 rows acknowledged" || return 1
	rm "$TMP/state-gen1/shipped" && ship gen1 >/dev/null || return 1
	[ "$(q 1 "SELECT count() FROM kernelstats.atoms")" -gt "$nrows" ] && same_cells
}
check "a second ship sends nothing; a resend of every row (record lost) doubles no sum (FINAL)" again

# A fake ClickHouse: MODE 500, garbage (200 with a body), raw (not HTTP),
# hang (never answers), hold (forwards to server 1, then never answers).
cat >"$TMP/fake.py" <<'PY'
import socket, sys, threading, time, urllib.request
mode, port_file, upstream = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(8)
open(port_file, "w").write(str(s.getsockname()[1]))
def serve(c):
    data = b""
    while b"\r\n\r\n" not in data:
        data += c.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    n = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
    while len(body) < n:
        body += c.recv(65536)
    if mode == "500":
        msg = b"Code: 241, e.displayText() = DB::Exception: Memory limit exceeded\n"
        c.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: %d\r\n\r\n%s" % (len(msg), msg))
    elif mode == "garbage":
        c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n<html>hi!")
    elif mode == "raw":
        c.sendall(b"\x00\x01garbage\r\n\r\n")
    elif mode == "hold":
        lines = head.decode().split("\r\n")
        hdrs = dict(l.split(": ", 1) for l in lines[1:])
        hdrs.pop("Host", None)
        req = urllib.request.Request(upstream + lines[0].split(" ")[1], data=body, headers=hdrs)
        urllib.request.urlopen(req).read()
        open(port_file + ".forwarded", "w").write("1")
    time.sleep(3600)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
fake() {	# fake MODE: its URL in FAKE
	rm -f "$TMP/fake.port"
	python3 "$TMP/fake.py" "$1" "$TMP/fake.port" \
		"http://127.0.0.1:$HTTP1" >>"$TMP/fake.log" 2>&1 &
	FAKEPID=$!
	PIDS+=($!)
	while [ ! -s "$TMP/fake.port" ]; do sleep 0.05; done
	FAKE=http://127.0.0.1:$(cat "$TMP/fake.port")/
}
new_host() {	# new_host NAME SEED: a host not shipped yet
	python3 $RA gen "$TMP/$1" --days 3 --keys 2 --seed "$2" || fail "gen $1"
	HOSTS+=" $1"
}
# refused HOST WHAT FIX [ARGS]: ship fails with one line naming FIX, no record.
refused() {
	local host=$1 what=$2 fix=$3
	shift 3
	ship "$host" "$@" >"$TMP/out" 2>"$TMP/err"
	local rc=$?
	[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q -- "$fix" "$TMP/err" &&
		[ ! -e "$TMP/state-$host/shipped" ] && return 0
	echo "$what: exit $rc: $(cat "$TMP/err")" >&2
	return 1
}
for mode in 500 garbage raw hang; do
	new_host "m$mode" "$((100 + ${#mode}))"
	fake $mode
	case $mode in
	500) fix="HTTP 500: Code: 241" ;;
	garbage) fix="is --url ClickHouse's HTTP port" ;;
	raw) fix="fix the server or --url" ;;
	hang) fix="Operation timed out" ;;
	esac
	start=$(date +%s)
	URL=$FAKE check "a server answering $mode: kstats ship exits 1 with one line ($fix), records nothing$([ $mode = hang ] && echo ", in --timeout 2")" \
		refused "m$mode" $mode "$fix" --timeout 2
	kill "$FAKEPID"
	[ $(($(date +%s) - start)) -le 5 ] || echo "FAIL: $T: a $mode server held kstats ship over --timeout 2"
	ship "m$mode" >/dev/null 2>>"$TMP/ship.log" || fail "ship m$mode after the fake server"
done

new_host mdead 150
URL=http://127.0.0.1:$(free_port)/ check "no server at --url: kstats ship exits 1 with one line, records nothing" \
	refused mdead dead "Couldn't connect to server"
ship mdead >/dev/null 2>>"$TMP/ship.log" || fail "ship mdead"

# SIGKILL mid-ship: the server has the rows, the record does not.
new_host killed 201
fake hold
URL=$FAKE ship killed --timeout 300 >/dev/null 2>&1 &
shipper=$!
for i in $(seq 200); do [ -e "$TMP/fake.port.forwarded" ] && break; sleep 0.05; done
kill -9 $shipper
{ wait $shipper; } 2>/dev/null
kill "$FAKEPID"
killed() {
	[ -e "$TMP/fake.port.forwarded" ] && [ ! -e "$TMP/state-killed/shipped" ] &&
		[ "$(q 1 "SELECT count() FROM kernelstats.atoms WHERE host = 'killed'")" -gt 0 ] &&
		ship killed >/dev/null
}
check "SIGKILL after the server took the rows: nothing recorded, the next ship resends them" killed

# One shard down: a host whose rows go to server 2, shipped through server 1.
down=""
for i in $(seq 50); do
	[ "$(q 1 "SELECT cityHash64('down$i') % 2")" = 1 ] && { down=down$i; break; }
done
new_host "$down" 301
stop_server 2
check "shard 2 down: kstats ship exits 1 with one line, records nothing" \
	refused "$down" "shard down" "not acknowledged" --timeout 20
start_server 2 || fail "$CH_ERR"
ship "$down" >/dev/null 2>>"$TMP/ship.log" || fail "ship $down after shard 2 is back: $(tail -1 "$TMP/ship.log")"

expect_all
check "after all of them: every sum equals the atoms, none lost or doubled ($(wc -l <"$TMP/expect.cells") cells)" \
	same_cells

# The rollup: rebuilt per shard, equal to the raw sums.
rollup() {
	local first last n
	first=$(q 1 "SELECT min(day) FROM kernelstats.atoms")
	last=$(q 1 "SELECT max(day) FROM kernelstats.atoms")
	for n in 1 2; do
		dist/clickhouse/rollup.sh "$first" "$last" --port "$(eval echo "\$TCP$n")" || return 1
	done
	diff <(q 1 "SELECT metric, key, kernel, day, sumForEach(buckets) FROM kernelstats.atoms
		FINAL GROUP BY metric, key, kernel, day ORDER BY metric, key, kernel, day") \
	     <(q 1 "SELECT metric, key, kernel, day, sumForEachMerge(buckets) FROM kernelstats.daily
		GROUP BY metric, key, kernel, day ORDER BY metric, key, kernel, day") >&2
}
check "the daily rollup (rollup.sh on each shard) equals the raw sums" rollup

# The ingest user inserts but cannot drop or alter, even asking for DDL
# (18.16 lets it set allow_ddl=1: it reaches only kernelstats_ingest).
ddl_refused() {
	local sql
	for sql in "DROP TABLE kernelstats.atoms_local" "DROP TABLE kernelstats.atoms" \
		"ALTER TABLE kernelstats.atoms_local DROP PARTITION '2026-11-01'" \
		"DROP DATABASE kernelstats"; do
		curl -s -u "kernelstats_ingest:$PW" --data-binary "$sql" \
			"http://127.0.0.1:$HTTP1/?allow_ddl=1" | tee -a "$TMP/ddl" | grep -q "Exception" || return 1
		curl -s -u "kernelstats_ingest:$PW" --data-binary "$sql" \
			"http://127.0.0.1:$HTTP1/" | tee -a "$TMP/ddl" | grep -q "Exception" || return 1
	done
	[ "$(q 1 "EXISTS TABLE kernelstats.atoms_local")" = 1 ] &&
		[ "$(q 1 "SELECT count() FROM kernelstats.atoms_local WHERE day = '2026-11-01'")" -gt 0 ]
}
check "the ingest user's DROP TABLE, DROP DATABASE and ALTER ... DROP PARTITION on kernelstats are refused (also with ?allow_ddl=1)" ddl_refused

bad_password_file() {
	chmod 644 "$TMP/pw"
	ship gen1 >/dev/null 2>"$TMP/err"
	local rc=$?
	chmod 600 "$TMP/pw"
	[ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "chmod 0600" "$TMP/err"
}
check "a password file others may read: exit 2, one line naming chmod 0600" bad_password_file
