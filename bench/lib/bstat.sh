# Shell twin of bench/lib/bstat.h for the script benchmarks; source it.
# bstat_result KEY UNIT FILE   one value per line -> the RESULT line
# bstat_ratio KEY NUM DEN      per-line NUM/DEN (same rounds) -> RESULT line

bstat_result() {
	sort -g "$3" | awk -v k="$1" -v u="$2" '{ v[NR] = $1 }
		END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      printf "RESULT\t%s\t%s\t%.6g\t%.6g\t%.6g\t%d\n", k, u, v[1], m, v[NR], NR }'
}

bstat_ratio() {
	local tmp
	tmp=$(mktemp)
	paste "$2" "$3" | awk '{ print $1 / $2 }' >"$tmp"
	bstat_result "$1" x "$tmp"
	rm -f "$tmp"
}

bstat_now_us() { echo $(( $(date +%s%N) / 1000 )); }
