#!/usr/bin/env bash
# kstats dump --rules: Prometheus rules generated from the objects alone.
#  - the shipped objects' rules pass promtool check rules, one fleet bucket
#    rate per metric of the catalog;
#  - test-only objects (tests/bpf/dumpLabels.c, dumpEnum.c) get rules with
#    no hand edit, per key label the very labels the export gives their
#    maps (tests/golden/dump/all.prom, written from real pins);
#  - promtool test rules, with input series in the export's exact format
#    (names and le values taken from a real export): recorded fleet and per
#    key quantiles equal values computed by hand below, every alert fires
#    for the host that fails and stays silent for the one that does not.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${KSTATS_BUILD:-build}
T=prom_rules
KSTATS=$PWD/$BUILD/kstats
GOLDEN=tests/golden/dump/all.prom
TMP=$(mktemp -d /tmp/kstats-test-$$-rules-XXXXXX)
trap 'rm -rf "$TMP"' EXIT

skip() { echo "SKIP: $T: $*"; exit 0; }
fail() { echo "FAIL: $T: $*"; exit 1; }
pass() { echo "PASS: $T: $*"; }

command -v promtool >/dev/null || skip "promtool is not installed (make deps installs prometheus)"

mkdir -p "$TMP/obj" "$TMP/new"
cp "$BUILD"/bpf/*.bpf "$TMP/obj/"
"$KSTATS" dump --rules --obj-dir "$TMP/obj" --output "$TMP/obj/kernelstats.rules.yml" ||
	fail "kstats dump --rules failed"
promtool check rules "$TMP/obj/kernelstats.rules.yml" >"$TMP/check.log" 2>&1 ||
	fail "promtool check rules: $(cat "$TMP/check.log")"
pass "promtool check rules: $(grep -o 'SUCCESS.*' "$TMP/check.log")"

# The catalog, as an export with nothing pinned names it (kstats_metric_loaded 0).
"$KSTATS" dump --prometheus --obj-dir "$TMP/obj" --pin-dir "$TMP/nopins" \
	--status-file "$TMP/none" --state-dir "$TMP/none" 2>/dev/null >"$TMP/empty.prom"
want=$(grep -c '^kstats_metric_loaded{' "$TMP/empty.prom")
got=$(grep -c '^  *- record: fleet:.*_bucket:rate5m$' "$TMP/obj/kernelstats.rules.yml")
[ "$want" -gt 0 ] && [ "$got" = "$want" ] ||
	fail "$got fleet bucket rules for $want metrics of the catalog"
pass "one fleet bucket rate per metric of the catalog ($got)"

# An object named with a byte that is not UTF-8: the text \xNN, the file valid.
mkdir -p "$TMP/latin1"
cp "$TMP/obj/compaction.bpf" "$TMP/latin1/compaction"$'\xe9'".bpf"
"$KSTATS" dump --prometheus --obj-dir "$TMP/latin1" --pin-dir "$TMP/nopins" \
	--status-file "$TMP/none" --state-dir "$TMP/none" 2>/dev/null >"$TMP/latin1.prom"
promtool check metrics <"$TMP/latin1.prom" >"$TMP/check.log" 2>&1 &&
	grep -qF 'kstats_metric_loaded{metric="CompactionDuration",object="compaction\\xe9"} 0' "$TMP/latin1.prom" ||
	fail "object compaction\\xe9: $(cat "$TMP/check.log"; grep object= "$TMP/latin1.prom" | head -2)"
pass "an object named compaction\\xe9 (not UTF-8): object=\"compaction\\\\xe9\", promtool check metrics accepts the file"
got=$("$KSTATS" dump --rules --obj-dir "$TMP/obj" CompactionDuration | grep -o 'record: [^ ]*\|metric: .*' | sort -u | tr '\n' ' ')
[ "$got" = "metric: 'CompactionDuration' record: fleet:kstats_compaction_duration_seconds:quantile_rate5m record: fleet:kstats_compaction_duration_seconds_bucket:rate5m " ] ||
	fail "kstats dump --rules CompactionDuration: $got"
pass "a named metric gets its rules only"

# A metric named with YAML and template syntax: escaped one way (doc/fleet-export.md).
mkdir -p "$TMP/hostile"
python3 - "$TMP/obj/compaction.bpf" "$TMP/hostile/compaction.bpf" <<'PY' || fail "patch the metric name"
import sys
d = open(sys.argv[1], "rb").read()
assert d.count(b"CompactionDuration") == 1
open(sys.argv[2], "wb").write(d.replace(b"CompactionDuration", b"C: a'b#c{{ .x }}dd"))
PY
"$KSTATS" dump --rules --obj-dir "$TMP/hostile" --output "$TMP/hostile.rules.yml" ||
	fail "kstats dump --rules with a hostile metric name failed"
promtool check rules "$TMP/hostile.rules.yml" >"$TMP/check.log" 2>&1 ||
	fail "promtool check rules (hostile name): $(cat "$TMP/check.log")"
python3 - "$TMP/hostile.rules.yml" <<'PY' || fail "the hostile name is not escaped as documented"
import sys, yaml
alerts = [r for g in yaml.safe_load(open(sys.argv[1]))["groups"] for r in g["rules"]
          if r.get("alert") == "KstatsLatencyP99High"]
want = 'C: a\'b#c{{ "{{" }} .x }}dd'
assert len(alerts) == 1 and alerts[0]["labels"]["metric"] == want, alerts
assert alerts[0]["annotations"]["summary"].startswith(want + " p99 above 1 s"), alerts
PY
pass "a metric named C: a'b#c{{ .x }}dd: YAML that promtool accepts, quotes doubled, {{ written so no template expands it"

# New metrics: test-only objects beside the shipped ones, no edit anywhere.
cp "$TMP"/obj/*.bpf "$BUILD/tests/bpf/dumpLabels.bpf" "$BUILD/tests/bpf/dumpEnum.bpf" "$TMP/new/"
"$KSTATS" dump --rules --obj-dir "$TMP/new" --output "$TMP/new.rules.yml" ||
	fail "kstats dump --rules failed with the test objects"
promtool check rules "$TMP/new.rules.yml" >"$TMP/check.log" 2>&1 ||
	fail "promtool check rules (test objects): $(cat "$TMP/check.log")"
n=0
for m in $(grep '^kstats_test_[a-z_]*_bucket{' "$GOLDEN" | sed 's/_bucket{.*//' | sort -u); do
	# the export's key labels of m, and the labels its per-key rules sum by
	exported=$(grep "^${m}_bucket{" "$GOLDEN" | sed 's/.*{\(.*\)}.*/\1/' | tr ',' '\n' |
		   sed 's/=.*//' | grep -vx le | sort -u | tr '\n' ' ')
	ruled=$(grep -o "sum by (le, [a-z_0-9]*) (rate(${m}_bucket\[" "$TMP/new.rules.yml" |
		sed 's/sum by (le, \([^)]*\)).*/\1/' | sort -u | tr '\n' ' ')
	grep -q "record: fleet:${m}:quantile_rate5m" "$TMP/new.rules.yml" ||
		fail "no fleet quantile rule for the new metric $m"
	[ "$exported" = "$ruled" ] || fail "$m: the export labels '$exported', the rules sum by '$ruled'"
	n=$((n + 1))
done
[ "$n" -ge 5 ] || fail "only $n test metrics in $GOLDEN"
grep -q 'alert: KstatsLatencyP99High' "$TMP/new.rules.yml" &&
	grep -q "metric: 'TestPairLatency'$" "$TMP/new.rules.yml" ||
	fail "no p99 alert for the new latency metric TestPairLatency"
! grep -q "metric: 'TestPoolSizes'$" "$TMP/new.rules.yml" ||
	fail "a p99 latency alert for the size metric TestPoolSizes"
pass "$n test-only metrics got fleet and per-key rules with the export's labels, no hand edit"

# ---- promtool test rules: the series as node_exporter serves the export ----
lat_les=$(grep '^kstats_test_system_wide_seconds_bucket{' "$GOLDEN" | sed 's/.*le="\([^"]*\)".*/\1/')
[ "$(echo "$lat_les" | wc -l)" = 32 ] || fail "no 32 le values in $GOLDEN"
CMP=kstats_compaction_duration_seconds
PAIR=kstats_test_pair_latency_seconds

# series NAME LABELS HOT_LE VALUES: the 32 cumulative buckets and _count of a
# histogram whose every event since boot fell into bucket HOT_LE (le as
# exported); VALUES is the counter's promtool expansion ('0+60x40': 1/s).
series() {
	local name=$1 labels=$2 hot=$3 values=$4 le hit=0
	for le in $lat_les; do
		[ "$le" = "$hot" ] && hit=1
		printf "      - series: '%s_bucket{%sle=\"%s\"}'\n        values: '%s'\n" \
			"$name" "$labels" "$le" "$([ $hit = 1 ] && echo "$values" || echo 0x40)"
	done
	printf "      - series: '%s_count{%s}'\n        values: '%s'\n" "$name" "${labels%,}" "$values"
}
A='instance="a:9100",job="node",'
# q Q LO HI TOTAL BELOW IN: histogram_quantile's linear interpolation, by
# hand: rank Q*TOTAL, minus the BELOW events under LO, as a share of the IN
# events of (LO, HI]; printed exactly (promtool compares bit for bit).
q() { awk -v q="$1" -v lo="$2" -v hi="$3" -v t="$4" -v b="$5" -v n="$6" \
	'BEGIN { printf "%.17g", lo + (hi - lo) * ((q * t - b) / n) }'; }
B='instance="b:9100",job="node",'

# By hand: host a counts 1/s in (32, 64] us, host b 1/s in (64, 128] us.
# Fleet, 2/s: rank q*2; 0.5 -> 1 = all of (32,64]: 64 us; 0.9 -> 1.8 =
# 0.8 into (64,128]: 64 + 64*0.8 = 115.2 us; 0.99 -> 64 + 64*0.98 = 126.72 us.
# Per node (node 0 is host a's, node 1 host b's): 0.5 -> 32+32*0.5 = 48 us,
# 32+32*0.9 = 60.8 us, 32+32*0.99 = 63.68 us; node 1: 64+64*0.5 = 96 us,
# 64+64*0.9 = 121.6 us, 64+64*0.99 = 127.36 us.
# Slow host a (p99 alert): 1/s in (1.048576, 2.097152] s: p99 2.08 s > 1 s.
# Host a's metric stops loading at 6 min; host c's never loaded (a kernel
# without its attach point): no alert for c.
{
	cat <<EOF
rule_files:
  - new.rules.yml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
EOF
	series "$CMP" "$A" 0.000064 '0+60x40'
	series "$CMP" "$B" 0.000128 '0+60x40'
	series "$PAIR" "${A}node=\"0\",state=\"FOREGROUND\"," 0.000064 '0+60x40'
	series "$PAIR" "${B}node=\"1\",state=\"FOREGROUND\"," 0.000128 '0+60x40'
	cat <<EOF
    promql_expr_test:
      - expr: fleet:${CMP}:quantile_rate5m
        eval_time: 10m
        exp_samples:
          - labels: 'fleet:${CMP}:quantile_rate5m{quantile="0.5"}'
            value: $(q 0.5 0.000032 0.000064 2 0 1)
          - labels: 'fleet:${CMP}:quantile_rate5m{quantile="0.9"}'
            value: $(q 0.9 0.000064 0.000128 2 1 1)
          - labels: 'fleet:${CMP}:quantile_rate5m{quantile="0.99"}'
            value: $(q 0.99 0.000064 0.000128 2 1 1)
      - expr: fleet:${CMP}_bucket:rate5m{le=~"0.000032|0.000064|0.000128|[+]Inf"}
        eval_time: 10m
        exp_samples:
          - labels: 'fleet:${CMP}_bucket:rate5m{le="0.000032"}'
            value: 0
          - labels: 'fleet:${CMP}_bucket:rate5m{le="0.000064"}'
            value: 1
          - labels: 'fleet:${CMP}_bucket:rate5m{le="0.000128"}'
            value: 2
          - labels: 'fleet:${CMP}_bucket:rate5m{le="+Inf"}'
            value: 2
      - expr: node:${PAIR}:quantile_rate5m
        eval_time: 10m
        exp_samples:
          - labels: 'node:${PAIR}:quantile_rate5m{node="0",quantile="0.5"}'
            value: $(q 0.5 0.000032 0.000064 1 0 1)
          - labels: 'node:${PAIR}:quantile_rate5m{node="0",quantile="0.9"}'
            value: $(q 0.9 0.000032 0.000064 1 0 1)
          - labels: 'node:${PAIR}:quantile_rate5m{node="0",quantile="0.99"}'
            value: $(q 0.99 0.000032 0.000064 1 0 1)
          - labels: 'node:${PAIR}:quantile_rate5m{node="1",quantile="0.5"}'
            value: $(q 0.5 0.000064 0.000128 1 0 1)
          - labels: 'node:${PAIR}:quantile_rate5m{node="1",quantile="0.9"}'
            value: $(q 0.9 0.000064 0.000128 1 0 1)
          - labels: 'node:${PAIR}:quantile_rate5m{node="1",quantile="0.99"}'
            value: $(q 0.99 0.000064 0.000128 1 0 1)
      - expr: state:${PAIR}:quantile_rate5m{quantile="0.5"}
        eval_time: 10m
        exp_samples:
          - labels: 'state:${PAIR}:quantile_rate5m{state="FOREGROUND",quantile="0.5"}'
            value: $(q 0.5 0.000032 0.000064 2 0 1)
  - interval: 1m
    input_series:
EOF
	series "$CMP" "$A" 2.097152 '0+60x40'
	series "$CMP" "$B" 0.000128 '0+60x40'
	series "$PAIR" "${A}node=\"0\",state=\"FOREGROUND\"," 2.097152 '0+60x40'
	cat <<EOF
      - series: 'kstats_metric_loaded{${A}metric="CompactionDuration",object="compaction"}'
        values: '1x5 0x35'
      - series: 'kstats_metric_loaded{instance="c:9100",job="node",metric="CompactionDuration",object="compaction"}'
        values: '0x40'
      - series: 'kstats_metric_loaded{${B}metric="CompactionDuration",object="compaction"}'
        values: '1x40'
      - series: 'kstats_metric_read_error{${A}metric="CompactionDuration",object="compaction"}'
        values: '1x40'
      - series: 'kstats_metric_read_error{${B}metric="CompactionDuration",object="compaction"}'
        values: '0x40'
      - series: 'node_textfile_mtime_seconds{${A}file="/var/lib/prometheus/node-exporter/kernelstats.prom"}'
        values: '0x40'
      - series: 'node_textfile_mtime_seconds{${B}file="/var/lib/prometheus/node-exporter/kernelstats.prom"}'
        values: '0+60x40'
    alert_rule_test:
EOF
	# expect AT ALERT [LABELS SUMMARY DESCRIPTION]...: host a's alerts at AT
	expect() {
		printf '      - eval_time: %s\n        alertname: %s\n        exp_alerts:\n' "$1" "$2"
		shift 2
		while [ $# -ge 3 ]; do
			printf "          - exp_labels: {severity: warning, instance: \"a:9100\", %s}\n            exp_annotations:\n              summary: '%s'\n              description: 'Run on a:9100: %s'\n" "$1" "$2" "$3"
			shift 3
		done
	}
	cmp='job: node, metric: CompactionDuration, object: compaction'
	# pending (for: not over): none yet; then firing, for host a only
	expect 12m KstatsMetricNotLoaded
	expect 25m KstatsMetricNotLoaded "$cmp" 'CompactionDuration stopped loading on a:9100' \
		'kstats status (why compaction is not loaded), then systemctl restart kernelstats-loader'
	expect 12m KstatsMetricUnreadable
	expect 25m KstatsMetricUnreadable "$cmp" 'the export cannot read CompactionDuration on a:9100' \
		'journalctl -u kernelstats-textfile.service (why), kstats status'
	expect 12m KstatsLatencyP99High
	expect 25m KstatsLatencyP99High \
		'metric: CompactionDuration' 'CompactionDuration p99 above 1 s on a:9100' \
		'kstats dump --interval 60 CompactionDuration (which keys, minute by minute)' \
		'metric: TestPairLatency' 'TestPairLatency p99 above 1 s on a:9100' \
		'kstats dump --interval 60 TestPairLatency (which keys, minute by minute)'
	expect 8m KstatsExportStale
	expect 12m KstatsExportStale \
		'job: node, file: /var/lib/prometheus/node-exporter/kernelstats.prom' \
		'kernelstats.prom of a:9100 is older than 5 minutes' \
		'systemctl status kernelstats-textfile.timer kernelstats-textfile.service'
	cat <<EOF
  - interval: 1m
    input_series:
      - series: 'kstats_pull_last_success_timestamp_seconds{${A%,}}'
        values: '0x1800'
      - series: 'kstats_pull_last_success_timestamp_seconds{${B%,}}'
        values: '0+60x1800'
    alert_rule_test:
EOF
	expect 26h KstatsPullLate
	expect 28h KstatsPullLate 'job: node' 'no daily pull succeeded on a:9100 for over 26 hours' \
		'journalctl -u kernelstats-pull.service, then systemctl start kernelstats-pull.service'
	cat <<EOF
  - interval: 1m
    input_series:
      - series: 'kstats_ship_last_success_timestamp_seconds{${A%,}}'
        values: '0x1800'
      - series: 'kstats_ship_last_success_timestamp_seconds{${B%,}}'
        values: '0+60x1800'
    alert_rule_test:
EOF
	expect 26h KstatsShipLate
	expect 28h KstatsShipLate 'job: node' 'a:9100 shipped no atoms to ClickHouse for over 26 hours' \
		'journalctl -u kernelstats-ship.service (the server answer), kstats status'
} >"$TMP/rules_test.yml"
(cd "$TMP" && promtool test rules rules_test.yml) >"$TMP/test.log" 2>&1 ||
	fail "promtool test rules: $(head -40 "$TMP/test.log")"
pass "promtool test rules: fleet and per-key quantiles equal the hand-computed values"
pass "promtool test rules: every alert (not loaded, unreadable, p99 x2, stale, pull late, ship late) fires for host a only, after its for:"
