#!/usr/bin/env bash
# kstats report at scale (issue 41): a year of atoms, 365 daily files of 6
# metrics x 30 keys (CompactionDuration has no key: 1 series; enum keys past
# their schema's enumerators are future values), written on the wire by
# tests/lib/report_atoms.py; then ROUNDS runs of kstats report on them,
# wall time each, and the page's size.  Targets: under 1 s, under 5 MB.
# Prints bench/lib/bstat.h RESULT lines.  Usage: bench/report_page.sh BUILD [ROUNDS]
set -eu
BUILD=${1:-build}
ROUNDS=${2:-7}
cd "$(dirname "$0")/.."
. bench/lib/bstat.sh
DIR=$(mktemp -d /tmp/kstats-bench-report-XXXXXX)
trap 'rm -rf "$DIR"' EXIT

python3 tests/lib/report_atoms.py gen "$DIR/atoms" --days 365 --metrics 6 --keys 30
atoms=$("$BUILD/kstats" atoms --out-dir "$DIR/atoms" | grep -c '^[A-Za-z]* (atom ')
echo "# kstats report: $ROUNDS rounds over $(ls "$DIR/atoms" | wc -l) files, $atoms atoms"
# Wall and CPU (user + system) time: on a busy machine the wall time is
# mostly waiting for a CPU.
TIMEFORMAT='%R %U %S'
for _ in $(seq "$ROUNDS"); do
	{ time "$BUILD/kstats" report --out-dir "$DIR/atoms" -o "$DIR/page.html"; } 2>"$DIR/t"
	awk '{ print $1 * 1000 >>"'"$DIR/ms"'"; print ($2 + $3) * 1000 >>"'"$DIR/cpu"'" }' "$DIR/t"
	stat -c %s "$DIR/page.html" | awk '{ print $1 / 1e6 }' >>"$DIR/mb"
done
printf 'RESULT\treport.atoms\tatoms\t%d\n' "$atoms"
printf 'RESULT\treport.heatmaps\theatmaps\t%d\n' "$(grep -c '<h3>' "$DIR/page.html")"
printf 'RESULT\treport.cells\tcells\t%d\n' "$(grep -c '<rect x=' "$DIR/page.html")"
bstat_result report.ms ms "$DIR/ms"
bstat_result report.cpu_ms ms "$DIR/cpu"
bstat_result report.mb MB "$DIR/mb"
