#!/usr/bin/env bash
# tests/kernels/apt.sh, the lab's private apt: the machine's bookworm
# entries read from deb822 and one-line sources (KSTATS_APT_ETC: sources
# written here), backports added at the bookworm URI, and apt-get (a fake
# that logs its arguments) given only the private configuration.
set -u
cd "$(dirname "$0")/../.." || exit 1
apt=$PWD/tests/kernels/apt.sh
tmp=$(mktemp -d /tmp/kstats-test-$$-apt-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
deb=/usr/share/keyrings/debian-archive-keyring.gpg

check() {	# name, then a command that must succeed
	local name=$1
	shift
	if "$@"; then echo "PASS: $name"; else echo "FAIL: $name: $*"; fi
}

etc=$tmp/etc
mkdir -p "$etc/sources.list.d" "$tmp/bin"
cat > "$etc/sources.list.d/main.sources" <<'X'
Types: deb deb-src
# a comment
URIs: http://mirror.example/debian http://second.example/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /etc/apt/keyrings/m.gpg

Types: deb
URIs: http://off.example/debian
Suites: bookworm-backports
Enabled: no

Types: deb
URIs: http://trixie.example/debian
Suites: trixie
X
cat > "$etc/sources.list" <<'X'
deb [arch=amd64 signed-by=/etc/apt/keyrings/s.gpg] http://sec.example/debian-security bookworm-security main # note
# deb http://commented.example/debian bookworm main
deb-src http://src.example/debian bookworm main
deb http://plain.example/debian bookworm-updates main
X
[ -r $deb ] && k="[signed-by=$deb] " || k=
expect="deb [signed-by=/etc/apt/keyrings/s.gpg] http://sec.example/debian-security bookworm-security main
deb ${k}http://plain.example/debian bookworm-updates main
deb [signed-by=/etc/apt/keyrings/m.gpg] http://mirror.example/debian bookworm main
deb [signed-by=/etc/apt/keyrings/m.gpg] http://mirror.example/debian bookworm-updates main
deb [signed-by=/etc/apt/keyrings/m.gpg] http://second.example/debian bookworm main
deb [signed-by=/etc/apt/keyrings/m.gpg] http://second.example/debian bookworm-updates main"
got=$(KSTATS_APT_ETC=$etc "$apt" sources 2>&1)
check "bookworm entries of deb822 and one-line sources in order, with their Signed-By" [ "$got" = "$expect" ]
[ "$got" = "$expect" ] || diff <(echo "$expect") <(echo "$got") | sed 's/^/    /'
check "the mirror is the machine's bookworm URI" \
	[ "$(KSTATS_APT_ETC=$etc "$apt" mirror)" = http://mirror.example/debian ]

printf '#!/bin/sh\necho "$0 $*" >> %s/log\n' "$tmp" > "$tmp/bin/apt-get"
cp "$tmp/bin/apt-get" "$tmp/bin/apt-cache"
chmod +x "$tmp/bin/apt-get" "$tmp/bin/apt-cache"
KSTATS_APT_ETC=$etc PATH=$tmp/bin:$PATH "$apt" "$tmp/lab" update -qq
check "apt-get gets the private configuration only" \
	[ "$(cat "$tmp/log")" = "$tmp/bin/apt-get -c $tmp/lab/apt.conf update -qq" ]
check "its sources: the machine's, and backports at the bookworm URI" \
	[ "$(cat "$tmp/lab/sources.list")" = "$expect
deb [signed-by=/etc/apt/keyrings/m.gpg] http://mirror.example/debian bookworm-backports main" ]
check "its lists, cache, status and preferences are its own" \
	[ "$(grep -c "\"$tmp/lab/" "$tmp/lab/apt.conf")" = 7 ]
check "it knows arm64" grep -q '^APT::Architectures { "[a-z0-9]*"; "arm64"; };' "$tmp/lab/apt.conf"
KSTATS_APT_ETC=$etc PATH=$tmp/bin:$PATH "$apt" "$tmp/lab" policy foo
check "policy goes to apt-cache" grep -q "apt-cache -c $tmp/lab/apt.conf policy foo" "$tmp/log"

echo "deb http://sid.example/debian sid main" > "$etc/sources.list"
rm "$etc/sources.list.d/main.sources"
out=$(KSTATS_APT_ETC=$etc PATH=$tmp/bin:$PATH "$apt" "$tmp/lab2" update 2>&1)
rc=$?
check "no bookworm source: exit 77, says so" \
	[ $rc = 77 -a -n "$(grep 'names bookworm' <<<"$out")" ]
check "and runs no apt-get" [ "$(grep -c update "$tmp/log")" = 1 ]
