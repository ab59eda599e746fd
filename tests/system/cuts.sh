#!/usr/bin/env bash
# The power cuts' verdicts, from the console logs of tests/system/run.sh's
# cut boots (WORK/cut1.log .. cutN.log, then cutfinal.log; tests/system/cut.sh
# printed them).  What a cut may lose: the counts since the last completed
# pull (they die with the kernel's maps).  What it must not: a state that is
# neither valid nor detected as corrupt, an atoms file half-written,
# changed, duplicated or lost, a completed pull's file, pulls after the cut.
# Usage: tests/system/cuts.sh WORK CUTS
set -u
work=$1 cuts=$2 T=system
say() { echo "$1: $T: $2"; }
verdict() {	# name problems
	if [ -z "$2" ]; then say PASS "$1"; else say FAIL "$1:$2"; fi
}

logs=()
for ((c = 1; c <= cuts; c++)); do logs+=("$work/cut$c.log"); done
logs+=("$work/cutfinal.log")

tests/system/atoms.sh "$work/cutfinal.log" "$work/cutatoms" >"$work/cutatoms.tab"
files_of() { sed -n 's/^@@ FILE \(atoms-[^ ]*\) \(.*\)/\1 \2/p' "$1" | sort; }

booted=0 midpull=0 lost=0 state_bad= files_bad= done_bad= sum_bad= pulls_bad=
for ((i = 0; i < ${#logs[@]}; i++)); do
	log=${logs[$i]} name=$(basename "${logs[$i]}" .log)
	grep -q '^@@ CUTBOOT' "$log" || { state_bad+=" $name did not boot"; continue; }
	booted=$((booted + 1))
	# The state the previous boot left: valid, or detected as corrupt.
	st=$(sed -n 's/^@@ STATE \([a-z]*\).*/\1/p' "$log" | sort -u | tr '\n' ' ')
	case $st in
	"ok "|"corrupt "|"corrupt ok ") ;;
	*) state_bad+=" $name: state '$st'" ;;
	esac
	# The previous boot's files all here, unchanged; its completed pulls' files too.
	if [ "$i" -gt 0 ]; then
		prev=${logs[$((i - 1))]}
		missing=$(comm -23 <(files_of "$prev") <(files_of "$log"))
		[ -z "$missing" ] || files_bad+=" after $(basename "$prev" .log): lost or changed $(echo $missing)"
		for f in $(awk '/^@@ DONE / && $4 == 0 {print $5}' "$prev"); do
			files_of "$log" | grep -q "^$f " || done_bad+=" $(basename "$prev" .log): $f"
		done
	fi
	# Atoms of this boot: at least what the last completed pull saw, at most
	# what the last started pull could see.
	b=$(sed -n 's/^@@ CUTBOOT //p' "$log")
	lo=$(awk '/^@@ PRE /{pre[$3] = $4} /^@@ DONE / && $4 == 0 {lo = pre[$3]} END {print lo + 0}' "$log")
	hi=$(awk '/^@@ PRE /{hi = $4} END {print hi + 0}' "$log")
	got=$(awk -v b="$b" '$3 == b {s += $4} END {print s + 0}' "$work/cutatoms.tab")
	{ [ "$got" -ge "$lo" ] && [ "$got" -le "$hi" ]; } ||
		sum_bad+=" $name: atoms $got not in [$lo, $hi]"
	lost=$((lost + hi - got))
	last=$(grep -E '^@@ (PRE|DONE) ' "$log" | tail -1)
	case $last in "@@ PRE "*) midpull=$((midpull + 1)) ;; esac
	awk '/^@@ DONE / && $4 != 0 {exit 1}' "$log" || pulls_bad+=" $name: $(grep -m1 '^@@ DONE [0-9]* [1-9]' "$log")"
done
final=$work/cutfinal.log
fb=$(sed -n 's/^@@ CUTBOOT //p' "$final")
fwant=$(awk '/^@@ PRE /{print $4}' "$final" | tail -1)
fgot=$(awk -v b="$fb" '$3 == b {s += $4} END {print s + 0}' "$work/cutatoms.tab")
grep -q '^@@ DONE 1 0 ' "$final" || pulls_bad+=" the pull after the last cut failed"
[ "${fwant:-x}" = "$fgot" ] || sum_bad+=" after the last cut: atoms $fgot, tracefs ${fwant:-?}"

undecodable=$(awk '$2 == "UNDECODABLE" {print $1}' "$work/cutatoms.tab")
dups=$(awk '$2 ~ /^[0-9]+$/ {print $1, $2}' "$work/cutatoms.tab" | sort -u |
	awk '{n[$2]++; if (n[$2] == 2) print "pull_id " $2}')
say INFO "power cuts: $booted boots, $midpull cut between a pull's start and its end" >/dev/null
echo "# system: $cuts power cuts: $midpull landed during a pull; the cuts lost $lost compaction events (counted after the last completed pull of their boot)"
[ "$booted" -eq $((cuts + 1)) ] && say PASS "power cuts: $cuts cuts, every boot after them came up" ||
	say FAIL "power cuts: $booted of $((cuts + 1)) boots came up:$state_bad"
verdict "power cuts: the state after each cut is valid or detected as corrupt (never a silent reset)" "$state_bad"
verdict "power cuts: no atoms file lost or changed, every completed pull's file present" "$files_bad$done_bad"
verdict "power cuts: no atoms file half-written ($(wc -l <"$work/cutatoms.tab") atoms decode)" "$(echo $undecodable)"
verdict "power cuts: no pull_id in two files (no duplicated pull)" "$(echo $dups)"
verdict "power cuts: each boot's atoms hold every count its completed pulls saw, and no more than its last pull could" "$sum_bad"
verdict "power cuts: pulls go on after every cut" "$pulls_bad"
