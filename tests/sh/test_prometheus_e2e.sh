#!/usr/bin/env bash
# The fleet path end to end: real compactions -> kstats dump --prometheus ->
# Debian's prometheus-node-exporter (textfile collector only) -> Debian's
# prometheus, each on a free loopback port with its own temp dir.  Then the
# HTTP API: histogram_quantile() against kstats' own p50/p99 of the same
# export (to 1e-5: the JSON has 6 digits; a 1 us error in le shows), _count
# and increase() against kstats' counts, no _sum series (no
# false mean), node_textfile_scrape_error 0.  Both servers are killed by pid
# at the end, pass or fail.  Waits poll the API with a bounded timeout.
# Then the fleet: a second Prometheus loads the shipped rules (kstats dump
# --rules of the built objects, what make rules writes) and scrapes two
# node_exporters, this host's real export and a second host's file the test
# writes.  After one more compaction here and a step in the second host's
# counts, the recorded fleet quantiles equal those computed from the two
# hosts' count deltas (each weighted by its own rate() scale, read per
# host); after kstats-loader --unload here, KstatsMetricNotLoaded goes
# pending for this host only.
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

# node_exporter VAR NAME DIR: Debian's, the textfile collector only, reading DIR.
node_exporter() {
	start "$1" "$2" /metrics prometheus-node-exporter --web.listen-address=127.0.0.1:@PORT@ \
		--collector.disable-defaults --collector.textfile --collector.textfile.directory="$3"
}
node_exporter NODE node_exporter "$TMP/textfile" || fail "prometheus-node-exporter did not start"
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

# ---- the fleet: shipped rules, two node_exporters ----
mkdir -p "$TMP/rules" "$TMP/host2" "$TMP/data2"
cp "$BUILD"/bpf/*.bpf "$TMP/rules/"
"$KSTATS" dump --rules --obj-dir "$TMP/rules" --output "$TMP/kernelstats.rules.yml" ||
	fail "kstats dump --rules failed"
rm -rf "$TMP/rules"

# host2 FILE ADD...: the real export's format with the second host's counts:
# ADD is le=events, added cumulatively from that bucket up.
host2() {
	local out=$1
	shift
	awk -v m="${M}" -v adds="$*" '
		BEGIN { n = split(adds, a, " "); for (i = 1; i <= n; i++) { split(a[i], kv, "="); add[kv[1]] = kv[2] } }
		index($0, m "_bucket{") == 1 { le = $0; sub(/.*le="/, "", le); sub(/".*/, "", le)
			if (le in add) cum += add[le]; print m "_bucket{le=\"" le "\"} " cum + 0; next }
		index($0, m "_count ") == 1 { print m "_count " cum + 0; next }
		{ print }' "$prom_file" >"$out.tmp" && mv "$out.tmp" "$out"
}
host2 "$TMP/host2/kernelstats.prom" 0.000016=5 0.000512=3
cp "$prom_file" "$TMP/host1.before"
cp "$TMP/host2/kernelstats.prom" "$TMP/host2.before"

node_exporter NODE2 node_exporter2 "$TMP/host2" || fail "the second node_exporter did not start"
cat >"$TMP/fleet.yml" <<CONF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $TMP/kernelstats.rules.yml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$NODE', '127.0.0.1:$NODE2']
CONF
start PROM prometheus2 /-/ready prometheus --config.file="$TMP/fleet.yml" \
	--storage.tsdb.path="$TMP/data2" --web.listen-address=127.0.0.1:@PORT@ ||
	fail "prometheus with the shipped rules did not start"
rules_loaded() { [ "$(curl -sf "http://127.0.0.1:$PROM/api/v1/rules" | jq '[.data.groups[].rules[]] | length')" -gt 0 ]; }
until_ok "$TIMEOUT" rules_loaded || fail "Prometheus loaded no rule of $TMP/kernelstats.rules.yml"
two_hosts() { [ "$(query "${M}_count" | jq length)" = 2 ]; }
until_ok "$TIMEOUT" two_hosts || fail "Prometheus never scraped ${M}_count from both node_exporters"
sleep 3
pass "Prometheus 2.42 loaded the shipped rules ($(curl -sf "http://127.0.0.1:$PROM/api/v1/rules" | jq '[.data.groups[].rules[]] | length')) and scrapes two node_exporters"

# The step: one more compaction here, 4 + 2 more events on the second host.
c_before=$(kcount)
compact
until_ok 30 count_above "$c_before" || fail "no new compaction counted in 30s"
export_prom "$prom_file" || fail "export after the step failed"
host2 "$TMP/host2/kernelstats.prom" 0.000016=5 0.000512=3 0.000064=4 0.004096=2
cp "$prom_file" "$TMP/host1.after"
cp "$TMP/host2/kernelstats.prom" "$TMP/host2.after"
stepped() {
	[ "$(value "${M}_count{instance=\"127.0.0.1:$NODE\"}")" = "$(kcount)" ] &&
	[ "$(value "${M}_count{instance=\"127.0.0.1:$NODE2\"}")" = 14 ]
}
until_ok "$TIMEOUT" stepped || fail "Prometheus never saw both hosts' new counts"
sleep 3

# The last evaluation of the fleet quantiles, and each host's rate() scale
# at that instant: rate(_count) / its count delta.
REC=fleet:${M}:quantile_rate5m
t=$(query "${REC}[5s]" | jq -r '[.[].values[-1][0]] | max')
[[ $t =~ ^[0-9.]+$ ]] || fail "no recorded $REC"
scale() {	# scale PORT BEFORE AFTER
	local r d
	r=$(value "rate(${M}_count{instance=\"127.0.0.1:$1\"}[5m])" "$t")
	d=$(( $(sed -n "s/^${M}_count \([0-9]*\)$/\1/p" "$3") - $(sed -n "s/^${M}_count \([0-9]*\)$/\1/p" "$2") ))
	awk -v r="$r" -v d="$d" 'BEGIN { if (d > 0) printf "%.17g", r / d; else exit 1 }'
}
f1=$(scale "$NODE" "$TMP/host1.before" "$TMP/host1.after") || fail "no new event on this host in the window"
f2=$(scale "$NODE2" "$TMP/host2.before" "$TMP/host2.after") || fail "no new event on host 2 in the window"
# expected Q: histogram_quantile's interpolation over the two hosts' bucket
# deltas (cumulative, le as exported), host i's weighted by f_i.
expected() {
	awk -v q="$1" -v f1="$f1" -v f2="$f2" -v m="${M}_bucket{le=\"" '
		function le_of(line) { sub(/.*le="/, "", line); sub(/".*/, "", line); return line }
		index($0, m) == 1 { le = le_of($0); v = $2 + 0
			if (!(le in w)) { les[++n] = le; w[le] = 0 }
			w[le] += (FILENAME ~ /host1/ ? f1 : f2) * (FILENAME ~ /after/ ? v : -v) }
		END {
			rank = q * w["+Inf"]
			for (b = 1; b <= n && w[les[b]] < rank; b++) ;
			if (les[b] == "+Inf") { printf "%.17g", les[b - 1]; exit }
			lo = b > 1 ? les[b - 1] : 0; below = b > 1 ? w[les[b - 1]] : 0
			printf "%.17g", lo + (les[b] - lo) * ((rank - below) / (w[les[b]] - below))
		}' "$TMP/host1.after" "$TMP/host1.before" "$TMP/host2.after" "$TMP/host2.before"
}
for qq in 0.5 0.9 0.99; do
	got=$(value "${REC}{quantile=\"$qq\"}" "$t")
	want=$(expected "$qq")
	within "$got" "$want" 1e-9 ||
		fail "recorded fleet quantile $qq = $got s, from both hosts' counts $want s"
	pass "recorded fleet quantile $qq = $got s = $want s from both hosts' counts (no instance label: $(query "${REC}{quantile=\"$qq\"}" "$t" | jq -c '.[0].metric'))"
done

# This host's metric stops loading: the alert is pending for it alone.
"$BUILD/kstats-loader" --unload --obj-dir "$TMP/obj" --pin-dir "$PIN" --run-dir "$TMP/run" \
	>>"$TMP/loader.log" 2>&1 || fail "kstats-loader --unload failed"
kstats dump --prometheus --output "$prom_file" CompactionDuration 2>/dev/null
[ $? = 3 ] || fail "the export after --unload did not exit 3"
pending() { [ "$(query 'ALERTS{alertname="KstatsMetricNotLoaded",alertstate="pending"}' | jq length)" -gt 0 ]; }
until_ok "$TIMEOUT" pending || fail "KstatsMetricNotLoaded never went pending after --unload"
sleep 2
got=$(query 'ALERTS{alertname="KstatsMetricNotLoaded"}' | jq -c '[.[].metric | [.instance, .alertstate, .metric]]')
[ "$got" = "[[\"127.0.0.1:$NODE\",\"pending\",\"CompactionDuration\"]]" ] ||
	fail "KstatsMetricNotLoaded: $got; want pending for 127.0.0.1:$NODE only"
pass "KstatsMetricNotLoaded pending for the host that unloaded (127.0.0.1:$NODE) only, not 127.0.0.1:$NODE2"
