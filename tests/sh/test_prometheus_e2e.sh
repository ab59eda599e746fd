#!/usr/bin/env bash
# The fleet path end to end: real compactions -> kstats dump --prometheus ->
# Debian's prometheus-node-exporter (textfile collector only) -> Debian's
# prometheus, each on a free loopback port with its own temp dir.  Then the
# HTTP API: histogram_quantile() against kstats' own p50/p99 of the same
# export (to 1e-5: the JSON has 6 digits; a 1 us error in le shows), _count
# and increase() against kstats' counts, no _sum series (no
# false mean), node_textfile_scrape_error 0.  Both servers are killed by pid
# at the end, pass or fail.  Waits poll the API with a bounded timeout.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${KSTATS_BUILD:-build}
T=prometheus_e2e
KSTATS=$PWD/$BUILD/kstats
M=kstats_compaction_duration_seconds
TIMEOUT=120
TMP=$(mktemp -d /tmp/kstats-test-$$-prom-XXXXXX)
PIN=/sys/fs/bpf/kernelstats-test-$$-prom
pids=()

stop_servers() {
	local p n
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do
		for ((n = 0; n < 100; n++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	pids=()
}
trap 'stop_servers; rm -rf "$TMP" "$PIN"' EXIT
trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
trap 'exit 143' TERM

skip() { echo "SKIP: $T: $*"; exit 0; }
fail() {
	echo "FAIL: $T: $*"
	for f in "$TMP"/*.log; do [ -s "$f" ] && sed "s|^|    ${f##*/}: |" "$f" | tail -5; done
	exit 1
}
pass() { echo "PASS: $T: $*"; }

# until TIMEOUT CMD...: runs CMD until it succeeds, at most TIMEOUT seconds.
until_ok() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start VAR NAME URL CMD... (CMD contains @PORT@): on a free port, set in
# VAR, until URL answers; a port taken meanwhile means another try.  Not
# in a subshell: the EXIT trap must know every pid.
start() {
	local var=$1 name=$2 url=$3 try port pid
	shift 3
	for ((try = 0; try < 5; try++)); do
		port=$((20000 + RANDOM % 40000))
		port_free "$port" || continue
		"${@//@PORT@/$port}" >"$TMP/$name.log" 2>&1 &
		pid=$!
		pids+=("$pid")
		if until_ok "$TIMEOUT" eval "kill -0 $pid 2>/dev/null && curl -sf -o /dev/null 'http://127.0.0.1:$port$url'"; then
			kill -0 "$pid" 2>/dev/null && { printf -v "$var" %s "$port"; return 0; }
		fi
		grep -q "address already in use" "$TMP/$name.log" || return 1
	done
	return 1
}

kstats() { "$KSTATS" "$1" --obj-dir "$TMP/obj" --pin-dir "$PIN" --status-file "$TMP/none.json" "${@:2}"; }

# export FILE: writes the Prometheus text to FILE and kstats' own JSON of
# the same counts to $TMP/kstats.json (two JSON reads around the export
# that agree: another suite's compactions may land in between).
export_prom() {
	local n
	for ((n = 0; n < 50; n++)); do
		kstats dump --json CompactionDuration >"$TMP/a.json" &&
		kstats dump --prometheus --output "$1" CompactionDuration &&
		kstats dump --json CompactionDuration >"$TMP/kstats.json" || return 1
		[ "$(jq -c '.metrics[].histograms' "$TMP/a.json")" = \
		  "$(jq -c '.metrics[].histograms' "$TMP/kstats.json")" ] && return 0
	done
	return 1
}

kcount() { jq -r '.metrics[0].histograms[0].count // 0' "${1:-$TMP/kstats.json}"; }

count_above() {	# N: kstats counts more than N compactions
	kstats dump --json CompactionDuration >"$TMP/now.json" && [ "$(kcount "$TMP/now.json")" -gt "$1" ]
}

compact() { echo 1 >/proc/sys/vm/compact_memory; }

# query PROMQL [TIME]: the API's result array.
query() {
	curl -sfG "http://127.0.0.1:$PROM/api/v1/query" --data-urlencode "query=$1" \
		${2:+--data-urlencode "time=$2"} | jq -c '.data.result'
}
value() { query "$@" | jq -r '.[0].value[1] // "none"'; }
scraped() { [ "$(value "$1")" = "$2" ]; }

# within A B REL: |A - B| <= REL * |B|
within() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(d <= r * m) }'; }

for b in prometheus prometheus-node-exporter curl jq; do
	command -v "$b" >/dev/null || skip "$b is not installed (make deps installs it)"
done
[ "$(id -u)" -eq 0 ] || skip "needs root (loads BPF programs)"
[ -w /proc/sys/vm/compact_memory ] || skip "no /proc/sys/vm/compact_memory (kernel without CONFIG_COMPACTION)"

mkdir -p "$TMP/obj" "$TMP/textfile" "$TMP/data"
cp "$BUILD/bpf/compaction.bpf" "$TMP/obj/"
"$BUILD/kstats-loader" --obj-dir "$TMP/obj" --pin-dir "$PIN" --run-dir "$TMP/run" >"$TMP/loader.log" 2>&1 ||
	fail "kstats-loader failed"
compact
until_ok 30 count_above 0 || skip "compact_memory fired no mm_compaction_begin/end in 30s"

# Control: what node_exporter does with a TYPE histogram that has no _sum.
printf '# HELP control_seconds control\n# TYPE control_seconds histogram\n%s\n%s\n' \
	'control_seconds_bucket{le="+Inf"} 1' 'control_seconds_count 1' >"$TMP/textfile/control.prom"
prom_file=$TMP/textfile/kernelstats.prom
export_prom "$prom_file" || fail "kstats dump --prometheus failed or never read the same counts twice"
c1=$(kcount)

start NODE node_exporter /metrics prometheus-node-exporter --web.listen-address=127.0.0.1:@PORT@ \
	--collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$TMP/textfile" || fail "prometheus-node-exporter did not start"
cat >"$TMP/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$NODE']
CONF
start PROM prometheus /-/ready prometheus --config.file="$TMP/prometheus.yml" \
	--storage.tsdb.path="$TMP/data" --web.listen-address=127.0.0.1:@PORT@ ||
	fail "prometheus did not start"

until_ok "$TIMEOUT" scraped "${M}_count" "$c1" ||
	fail "${M}_count never became kstats' count $c1 (now $(value "${M}_count"))"
curl -sf "http://127.0.0.1:$NODE/metrics" >"$TMP/node.txt" || fail "cannot read node_exporter /metrics"
grep -q "^${M}_bucket{le=\"+Inf\"} $c1\$" "$TMP/node.txt" &&
	! grep -q "^kstats_[a-z_]*_sum" "$TMP/node.txt" ||
	fail "node_exporter re-exposed the textfile wrongly: $(grep "^${M}_\(sum\|count\)" "$TMP/node.txt")"
grep -q '^control_seconds_sum 0$' "$TMP/node.txt" ||
	fail "control: node_exporter no longer adds _sum 0 to a histogram (kstats could export TYPE histogram)"
pass "node_exporter passes _bucket and _count through and synthesizes no _sum (it does for a TYPE histogram)"

# Some more compactions, and the export of their counts.
compact
until_ok 30 count_above "$c1" || fail "no new compaction counted in 30s"
export_prom "$prom_file" || fail "second export failed"
c2=$(kcount)
until_ok "$TIMEOUT" scraped "${M}_count" "$c2" || fail "${M}_count never became $c2"

# The samples: the last one with c1 and the first with c2, in ms.
query "${M}_count[10m]" | jq -r --arg c1 "$c1" --arg c2 "$c2" \
	'.[0].values | map(select(.[1] == $c1)) | last | .[0] * 1000 | round' >"$TMP/t1"
query "${M}_count[10m]" | jq -r --arg c2 "$c2" \
	'.[0].values | map(select(.[1] == $c2)) | first | .[0] * 1000 | round' >"$TMP/t2"
t1=$(cat "$TMP/t1") t2=$(cat "$TMP/t2")
[[ $t1 =~ ^[0-9]+$ && $t2 =~ ^[0-9]+$ && $t2 -gt $t1 ]] || fail "no samples of $c1 then $c2 ($t1, $t2)"
at=$((t2 / 1000)).$(printf %03d $((t2 % 1000)))

got=$(value "${M}_count" "$at")
[ "$got" = "$c2" ] || fail "_count $got, kstats counts $c2"
got=$(value "${M}_bucket{le=\"+Inf\"}" "$at")
[ "$got" = "$c2" ] || fail "+Inf bucket $got, kstats counts $c2"
pass "_count and the +Inf bucket equal kstats' count $c2"

# A range from exactly the last c1 sample to the first c2 sample: no extrapolation.
got=$(value "increase(${M}_count[$((t2 - t1))ms])" "$at")
within "$got" $((c2 - c1)) 1e-9 || fail "increase() $got, kstats counted $((c2 - c1)) more"
got=$(value "sum(increase(${M}_bucket{le=\"+Inf\"}[$((t2 - t1))ms]))" "$at")
within "$got" $((c2 - c1)) 1e-9 || fail "increase() of the +Inf bucket $got, want $((c2 - c1))"
pass "increase() = $got = kstats' $c2 - $c1"

for q in 0.5 0.99; do
	key=p${q#0.}
	[ "$key" = p5 ] && key=p50
	want=$(jq -r ".metrics[0].histograms[0].$key / 1e6" "$TMP/kstats.json")
	got=$(value "histogram_quantile($q, ${M}_bucket)" "$at")
	within "$got" "$want" 1e-5 || fail "histogram_quantile($q) = $got s, kstats $key = $want s"
	pass "histogram_quantile($q) = $got s, kstats $key = $want s"
done

[ "$(query "{__name__=~\"kstats_.*_sum\"}" "$at")" = "[]" ] &&
	[ "$(query "rate(${M}_sum[1m]) / rate(${M}_count[1m])" "$at")" = "[]" ] ||
	fail "a _sum series exists: the mean would be wrong"
pass "no _sum series: the mean query returns nothing, never a false 0"

got=$(value node_textfile_scrape_error "$at")
[ "$got" = 0 ] || fail "node_textfile_scrape_error is $got"
pass "node_textfile_scrape_error 0"
