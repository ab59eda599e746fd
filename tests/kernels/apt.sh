#!/usr/bin/env bash
# apt for the lab's downloads (backports kernels, arm64 libraries) through a
# private configuration under DIR: its own sources, lists, cache, empty dpkg
# status, preferences and architectures (host + arm64).  Nothing outside DIR
# changes: no apt source, foreign architecture or keyring stays on the
# machine.  The sources are the machine's own bookworm entries (their URIs
# and Signed-By), plus bookworm-backports at the bookworm URI: no mirror
# host is written in the repository.
# Usage: tests/kernels/apt.sh sources     the machine's bookworm entries, as
#                                         sources.list lines
#        tests/kernels/apt.sh mirror      the URI serving bookworm
#        tests/kernels/apt.sh DIR ARG...  apt-get ARG... with DIR's config
#                                         (apt-cache for policy, madison, show)
# Exit: 77 when no apt source names bookworm (reason on stderr), else
# apt-get's.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 sources|mirror|DIR APT-GET-ARG..." >&2; exit 1; }
suite=bookworm
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
etc=${KSTATS_APT_ETC:-/etc/apt}	# tests read other sources

# "URI SUITE KEYRING" for each enabled deb entry of a bookworm suite, from
# one-line (*.list) and deb822 (*.sources) files; KEYRING is Signed-By when
# it names a file, else Debian's keyring if present, else "-" (apt's
# trusted keys then decide, as they do for the machine).
entries() {
	local f
	for f in "$etc"/sources.list "$etc"/sources.list.d/*.list \
		 "$etc"/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		case $f in
		*.sources) awk -v RS= -F'\n' '
			{ types = uris = suites = key = ""; on = 1
			  for (i = 1; i <= NF; i++) {
				if ($i ~ /^#/ || $i !~ /:/) continue
				k = tolower(substr($i, 1, index($i, ":") - 1))
				v = substr($i, index($i, ":") + 1)
				gsub(/^[ \t]+|[ \t]+$/, "", v)
				if (k == "types") types = v
				else if (k == "uris") uris = v
				else if (k == "suites") suites = v
				else if (k == "signed-by") key = v
				else if (k == "enabled" && v == "no") on = 0
			  }
			  if (!on || (" " types " ") !~ / deb /) next
			  nu = split(uris, u, " "); ns = split(suites, s, " ")
			  for (a = 1; a <= nu; a++) for (b = 1; b <= ns; b++)
				print u[a], s[b], (key ~ /^\// ? key : "-") }' "$f" ;;
		*) sed -E 's/#.*//' "$f" | awk '
			$1 != "deb" { next }
			{ key = "-"; i = 2
			  if ($2 ~ /^\[/) {
				for (; i <= NF; i++) {
					if ($i ~ /^\[?signed-by=/) { key = $i; sub(/^\[?signed-by=/, "", key); sub(/\]$/, "", key) }
					if ($i ~ /\]$/) { i++; break }
				}
			  }
			  print $i, $(i + 1), key }' ;;
		esac
	done | awk -v s="$suite" '$2 == s || index($2, s "-") == 1' |
	while read -r uri s key; do
		[ "$key" != - ] || [ ! -r "$keyring" ] || key=$keyring
		echo "$uri $s $key"
	done | awk '!seen[$0]++'
}

# The lines of entries(), for sources.list.
lines() {
	local uri s key
	while read -r uri s key; do
		if [ "$key" = - ]; then echo "deb $uri $s main"
		else echo "deb [signed-by=$key] $uri $s main"; fi
	done
}

machine=$(entries)
main=$(awk -v s="$suite" '$2 == s {print; exit}' <<<"$machine")
if [ -z "$main" ]; then
	echo "no apt source of this machine names $suite (/etc/apt/sources.list*): add one" \
	     "to fetch the lab's Debian packages, or put the .deb files in the cache" >&2
	exit 77
fi
case $1 in
sources) lines <<<"$machine"; exit 0 ;;
mirror) echo "${main%% *}"; exit 0 ;;
esac

dir=$(realpath -m "$1")
shift
case $dir in *[\"\\]*) echo "$0: $dir: a path without quotes or backslashes, please" >&2; exit 1 ;; esac
mkdir -p "$dir/sources.list.d" "$dir/preferences.d" "$dir/state/lists/partial" \
	 "$dir/cache/archives/partial"
: >> "$dir/state/status"
{
	lines <<<"$machine"
	grep -q " $suite-backports " <<<"$machine" ||
		lines <<<"$(sed "s/ $suite / $suite-backports /" <<<"$main")"
} > "$dir/sources.list"
host=$(dpkg --print-architecture)
cat > "$dir/apt.conf" <<EOF
Dir::Etc::SourceList "$dir/sources.list";
Dir::Etc::SourceParts "$dir/sources.list.d";
Dir::Etc::Preferences "$dir/preferences";
Dir::Etc::PreferencesParts "$dir/preferences.d";
Dir::State "$dir/state";
Dir::State::status "$dir/state/status";
Dir::Cache "$dir/cache";
APT::Architecture "$host";
APT::Architectures { "$host"; "arm64"; };
APT::Sandbox::User "root";
EOF
case $1 in
policy|madison|show) exec apt-cache -c "$dir/apt.conf" "$@" ;;
*) exec apt-get -c "$dir/apt.conf" "$@" ;;
esac
