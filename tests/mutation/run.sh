#!/usr/bin/env bash
# make test-mutation: applies each mutant of tests/mutation/mutants.txt, one
# at a time, to a scratch copy of the tree (never this one), builds it and
# runs the mutant's tests with tests/run.sh.  A mutant the tests fail on is
# killed; one they pass survived.  Exit 0 only when every mutant is killed;
# 2 when a mutant's "from" text is not exactly once in its file (code moved:
# update the mutant), the tree does not build or its tests fail unmutated.
# Usage: tests/mutation/run.sh [NAME...]   (default: every mutant)
# Env: MUTATION_SAN=1 builds with ASan+UBSan like make test (slower);
# MUTATION_LIST=FILE reads another list.
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
LIST=${MUTATION_LIST:-tests/mutation/mutants.txt}
SAN=${MUTATION_SAN:-0}
ONLY=" $* "

die() { echo "test-mutation: $*" >&2; exit 2; }

# Parses $LIST into parallel arrays; each block ends at a blank line.
names=() files=() froms=() tos=() tests=()
parse() {
	local line key val n=0 name="" file="" from="" to="" tst=""
	flush() {
		[ -z "$name$file$from$to$tst" ] && return
		[ -n "$name" ] && [ -n "$file" ] && [ -n "$from" ] && [ -n "$to" ] && [ -n "$tst" ] ||
			die "$LIST:$n: mutant '$name' needs name, file, from, to and tests"
		names+=("$name") files+=("$file") froms+=("$from") tos+=("$to") tests+=("$tst")
		name="" file="" from="" to="" tst=""
	}
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		case $line in
		\#*) continue ;;
		"") flush; continue ;;
		esac
		key=${line%%:*}
		val=${line#*:}
		val=${val#"${val%%[! 	]*}"}	# leading blanks
		case $key in
		name) name=$val ;; file) file=$val ;; from) from=$val ;; to) to=$val ;;
		tests) tst=$val ;;
		*) die "$LIST:$n: unknown key '$key'" ;;
		esac
	done <"$LIST"
	flush
}

# apply FILE FROM TO: replaces the one occurrence of FROM in FILE.
apply() {
	local text rest
	text=$(<"$1") || return 2
	[[ $text == *"$2"* ]] || { echo "not found"; return 2; }
	rest=${text#*"$2"}
	[[ $rest == *"$2"* ]] && { echo "found more than once"; return 2; }
	printf '%s\n' "${text/"$2"/"$3"}" >"$1"
}

parse
[ ${#names[@]} -gt 0 ] || die "$LIST has no mutants"
for want in $ONLY; do
	[[ " ${names[*]} " == *" $want "* ]] || die "no mutant named $want in $LIST"
done
[ "$(id -u)" -eq 0 ] || die "needs root (kernel tests)"

# Every pattern first: a stale one is an error before any build.
stale=0
for i in "${!names[@]}"; do
	[ -f "${files[i]}" ] || { echo "STALE: ${names[i]}: no file ${files[i]}"; stale=1; continue; }
	text=$(<"${files[i]}")
	if [[ $text != *"${froms[i]}"* ]]; then
		echo "STALE: ${names[i]}: '${froms[i]}' is not in ${files[i]}"; stale=1
	elif rest=${text#*"${froms[i]}"}; [[ $rest == *"${froms[i]}"* ]]; then
		echo "STALE: ${names[i]}: '${froms[i]}' is more than once in ${files[i]}"; stale=1
	fi
done
[ "$stale" = 0 ] || die "update $LIST: the code moved"

WORK=$(mktemp -d "/tmp/kstats-test-$$-mutation-XXXXXX") || die "mktemp"
chmod 755 "$WORK"	# tests run the tools as other users too
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
SRC=$WORK/src
mkdir "$SRC" || die "mkdir"
git ls-files -co --exclude-standard -z | grep -zv '^build/' |
	tar -C "$ROOT" --null -T - -cf - | tar -C "$SRC" -xf - || die "copying the tree"

build() {	# BUILD_DIR
	make -C "$SRC" --no-print-directory BUILD="$1" SAN="$SAN" -j2 mutation-build \
		>"$WORK/build.log" 2>&1
}

start=$(date +%s)
echo "baseline: building the unmutated copy"
build build/base || { tail -20 "$WORK/build.log"; die "the unmutated tree does not build"; }
picked() { [ "$ONLY" = "  " ] || [[ $ONLY == *" ${names[$1]} "* ]]; }
all_tests=$(for i in "${!names[@]}"; do picked "$i" && echo "${tests[i]}"; done |
	tr ' ' '\n' | sort -u | paste -sd ' ')
# shellcheck disable=SC2086
(cd "$SRC" && tests/run.sh build/base $all_tests) >"$WORK/base.log" 2>&1 ||
	{ grep -E '^FAIL' "$WORK/base.log"; die "the unmutated tree fails: $all_tests"; }
echo "baseline: $(tail -1 "$WORK/base.log") ($all_tests) in $(($(date +%s) - start)) s"

killed=0 survived=0 broken=0
for i in "${!names[@]}"; do
	picked "$i" || continue
	t0=$(date +%s)
	f=$SRC/${files[i]}
	cp -p "$f" "$WORK/orig"
	rm -rf "$SRC/build/mut"
	cp -a "$SRC/build/base" "$SRC/build/mut"
	# The copied .d files name build/base's objects: without this, a header's mutant
	# would never be compiled in.
	find "$SRC/build/mut" -name '*.d' -exec sed -i 's#build/base/#build/mut/#g' {} +
	apply "$f" "${froms[i]}" "${tos[i]}" >/dev/null || die "${names[i]}: cannot apply"
	if ! build build/mut; then
		verdict=BROKEN broken=$((broken + 1))	# proves nothing: fix the mutant
		sed 's/^/    | /' "$WORK/build.log" | grep -m3 -i error
	# shellcheck disable=SC2086
	elif (cd "$SRC" && tests/run.sh build/mut ${tests[i]}) >"$WORK/run.log" 2>&1; then
		verdict=SURVIVED survived=$((survived + 1))
	else
		verdict=KILLED killed=$((killed + 1))
	fi
	cp -p "$WORK/orig" "$f"		# its old mtime: build/base stays current
	echo "$verdict: ${names[i]} (${files[i]}; ${tests[i]}) $(($(date +%s) - t0)) s"
	[ "$verdict" = KILLED ] && grep -m2 '^FAIL' "$WORK/run.log" | sed 's/^/    | /'
done
echo "$killed killed, $survived survived, $broken broken in $(($(date +%s) - start)) s"
[ $((survived + broken)) -eq 0 ]
