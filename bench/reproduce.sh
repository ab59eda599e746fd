#!/usr/bin/env bash
# make bench's reproduction check (doc/benchmarks.md): each headline ratio of
# this run against the same ratio in the BENCHMARKS.md it replaces.  A run
# reproduces the previous one when its median lies within the previous
# run's min–max and within 1.5× of the previous median.  The previous
# figures come from the comment lines this script appends to each
# BENCHMARKS.md: "<!-- headline KEY MIN MEDIAN MAX -->" and
# "<!-- run DATE COMMIT -->".
# Usage: bench/reproduce.sh PREVIOUS_OUT RESULTS KEY...
#   RESULTS: this run's RESULT lines (bench/lib/bstat.h).  Prints a markdown
#   section, then this run's comment lines.
set -eu -o pipefail
prev=$1 results=$2
shift 2
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
# The document being replaced is not a change of the code measured.
[ -z "$(git status --porcelain --untracked-files=no -- . ":!$prev" 2>/dev/null)" ] ||
	commit="$commit+changes"
prev_run=$(sed -n 's/^<!-- run \(.*\) -->$/\1/p' "$prev" 2>/dev/null | head -1)

echo "## Reproduction"
echo
if [ -z "$prev_run" ]; then
	echo "The BENCHMARKS.md this run replaced holds no headline figures to compare"
	echo "with (it predates this check); the next \`make bench\` compares with this run."
else
	echo "Each headline ratio of this run against the run it replaced ($prev_run;"
	echo "this run: commit $commit). Reproduced: this median within the previous"
	echo "min–max and within 1.5× of the previous median. Where the code changed"
	echo "between the two commits, a difference can be the change, not noise."
	echo
	echo "| ratio | previous | this run | reproduced |"
	echo "|---|---|---|---|"
	for key in "$@"; do
		awk -F'\t' -v k="$key" -v p="$(grep -F "<!-- headline $key " "$prev" | head -1)" '
			$2 == k && NF >= 6 { lo = $4; med = $5; hi = $6; found = 1 }
			END {
				if (!found) exit
				if (p == "") { printf "| %s | n/a | %.2f | new |\n", k, med; exit }
				split(p, f, " ")	# <!-- headline KEY MIN MEDIAN MAX -->
				ok = med >= f[4] && med <= f[6] && med <= 1.5 * f[5] && med * 1.5 >= f[5]
				printf "| %s | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) | %s |\n", k, f[5], f[4],
				       f[6], med, lo, hi, ok ? "yes" : "**no**"
			}' "$results"
	done
fi
echo
echo "<!-- run $(date -u +%Y-%m-%dT%H:%MZ) $commit -->"
for key in "$@"; do
	awk -F'\t' -v k="$key" '$2 == k && NF >= 6 {
		printf "<!-- headline %s %s %s %s -->\n", k, $4, $5, $6; exit }' "$results"
done
