#!/usr/bin/env bash
# The fleet's atoms in ClickHouse at scale (issue 49), on the two-shard
# cluster of tests/lib/clickhouse.sh (Debian's 18.16, this machine).  A
# host's day is 6 metrics x 5 keys (CompactionDuration has no key: 26 rows,
# tests/lib/report_atoms.py).  Prints bench/lib/bstat.h RESULT lines:
#  - kstats ship: SHIP_HOSTS hosts, each its own kstats ship (one gzip'd
#    POST), 4 at a time, as the ingest user; rows per second; and one host
#    with a year of atoms waiting (365 files, POSTs of 8 MiB of rows);
#  - clickhouse-client inserting the same rows (kstats atoms --format
#    json-each-row, one row per line) in one INSERT with the same settings;
#  - a whole day of HOSTS hosts (default 10^5) through clickhouse-client,
#    10^5 rows an INSERT;
#    bytes on disk per host-day once merged;
#  - the merged query (p50/p99 per metric, key, kernel) of that day, raw
#    (FINAL) and from the rollup (after rollup.sh on each shard), seconds.
# Usage: bench/fleet.sh BUILD [HOSTS] [SHIP_HOSTS]
set -eu
BUILD=${1:-build}
HOSTS=${2:-100000}
SHIP_HOSTS=${3:-1000}
cd "$(dirname "$0")/.."
K=$BUILD/kstats
DIR=$(realpath -m "$BUILD/bench-fleet-$$")
fail() { echo "bench/fleet.sh: $1" >&2; exit 1; }
command -v clickhouse-server >/dev/null || fail "clickhouse-server is not installed (make deps)"
. tests/lib/clickhouse.sh
trap 'ch_stop_all; rm -rf "$DIR"' EXIT
mkdir -p "$DIR/state"
ch_cluster "$DIR/ch" || fail "$CH_ERR"
now() { date +%s.%N; }
result() { printf 'RESULT\tfleet.%s\t%s\t%s\n' "$1" "$2" "$3"; }
query() {	# dist/clickhouse/queries.sql's NAME, of day DAY
	python3 -c 'import sys
for stmt in open("dist/clickhouse/queries.sql").read().split(";"):
    if "-- %s:" % sys.argv[1] in stmt:
        print("\n".join(l for l in stmt.replace("day >= today() - 30", "day = %r" % sys.argv[2])
                        .split("\n") if not l.startswith("--")))' "$1" "$2"
}

python3 tests/lib/report_atoms.py gen "$DIR/one" --days 1 --keys 5 --metrics 6
"$K" atoms --out-dir "$DIR/one" --format json-each-row >"$DIR/one.rows"
per_host=$(wc -l <"$DIR/one.rows")
day=$(python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["day"])' <"$DIR/one.rows")
printf '%s\n' "$PW" >"$DIR/pw"
chmod 600 "$DIR/pw"
hosts_rows() {	# hosts_rows PREFIX N: N hosts' rows of the day
	python3 - "$DIR/one.rows" "$1" "$2" <<'PY'
import json, random, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rnd = random.Random(1)
out = sys.stdout
for h in range(int(sys.argv[3])):
    for r in rows:
        # Hosts differ: each bucket scaled by 0.5-1.5 (the disk figure is
        # not that of one histogram repeated).
        row = dict(r, host="%s%d" % (sys.argv[2], h),
                   buckets=[int(b * rnd.uniform(0.5, 1.5)) for b in r["buckets"]])
        out.write(json.dumps(row, separators=(",", ":")) + "\n")
PY
}
ingest() {	# clickhouse-client into the ingest table, as kstats ship inserts
	clickhouse-client --port "$TCP1" --user kernelstats_ingest --password "$PW" \
		--insert_distributed_sync=1 --prefer_localhost_replica=0 \
		-q "INSERT INTO kernelstats_ingest.atoms FORMAT JSONEachRow"
}

echo "# kstats ship: $SHIP_HOSTS hosts of $per_host rows, 4 at a time"
t0=$(now)
seq "$SHIP_HOSTS" | xargs -P4 -I{} sh -c 'mkdir -p "$1/state/$2" &&
	"$3" ship --url "http://127.0.0.1:$4/" --out-dir "$1/one" --state-dir "$1/state/$2" \
		--host "ship$2" --user kernelstats_ingest --password-file "$1/pw" >/dev/null' \
	- "$DIR" {} "$K" "$HTTP1" || fail "kstats ship failed"
t1=$(now)
hosts_rows client "$SHIP_HOSTS" >"$DIR/ship.rows"
t2=$(now)
ingest <"$DIR/ship.rows" || fail "clickhouse-client INSERT failed"
t3=$(now)
rows=$((SHIP_HOSTS * per_host))
result ship_hosts_rows_per_s rows/s "$(echo "$rows / ($t1 - $t0)" | bc -l)"
result client_hosts_rows_per_s rows/s "$(echo "$rows / ($t3 - $t2)" | bc -l)"

echo "# kstats ship: one host with a year of atoms waiting"
python3 tests/lib/report_atoms.py gen "$DIR/year" --days 365 --keys 5 --metrics 6
"$K" atoms --out-dir "$DIR/year" --format json-each-row | sed 's/"host":"[^"]*"/"host":"yearc"/' \
	>"$DIR/year.rows"
mkdir -p "$DIR/state/year"
t0=$(now)
"$K" ship --url "http://127.0.0.1:$HTTP1/" --out-dir "$DIR/year" --state-dir "$DIR/state/year" \
	--host year --user kernelstats_ingest --password-file "$DIR/pw" >/dev/null ||
	fail "kstats ship of a year failed"
t1=$(now)
ingest <"$DIR/year.rows" || fail "clickhouse-client INSERT of a year failed"
t2=$(now)
rows=$(wc -l <"$DIR/year.rows")
result ship_year_rows_per_s rows/s "$(echo "$rows / ($t1 - $t0)" | bc -l)"
result client_year_rows_per_s rows/s "$(echo "$rows / ($t2 - $t1)" | bc -l)"

echo "# a day of $HOSTS hosts ($((HOSTS * per_host)) rows) through clickhouse-client"
# In INSERTs of 10^5 rows: one of millions outgrows the ingest profile's memory.
hosts_rows host "$HOSTS" | split -l 100000 - "$DIR/day.rows."
t0=$(now)
for f in "$DIR"/day.rows.*; do
	ingest <"$f" || fail "clickhouse-client INSERT of the day failed"
done
t1=$(now)
rm -f "$DIR"/day.rows.*
result day_insert_s s "$(echo "$t1 - $t0" | bc -l)"
bytes=0
for n in 1 2; do
	q "$n" "OPTIMIZE TABLE kernelstats.atoms_local PARTITION '$day' FINAL"
	bytes=$((bytes + $(q "$n" "SELECT sum(bytes_on_disk) FROM system.parts
		WHERE active AND database = 'kernelstats' AND table = 'atoms_local'")))
done
host_days=$(q 1 "SELECT count() FROM (SELECT DISTINCT host, day FROM kernelstats.atoms)")
result bytes_per_host_day bytes "$(echo "$bytes / $host_days" | bc -l)"
TIMEFORMAT=%R
raw=$({ time q 1 "$(query merged "$day")" >/dev/null; } 2>&1)
t0=$(now)
for n in 1 2; do
	dist/clickhouse/rollup.sh "$day" "$day" --port "$(eval echo "\$TCP$n")"
done
t1=$(now)
rollup=$({ time q 1 "$(query rollup "$day")" >/dev/null; } 2>&1)
result query_raw_s s "$raw"
result rollup_build_s s "$(echo "$t1 - $t0" | bc -l)"
result query_rollup_s s "$rollup"
