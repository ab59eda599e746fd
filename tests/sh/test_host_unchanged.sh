#!/usr/bin/env bash
# Nothing lasts but packages: apt's sources, keys and preferences and
# dpkg's foreign architectures are as they were before the suite (and its
# build, under make test).  tests/run.sh runs this last and names the
# snapshot in KSTATS_HOST_STATE (tests/host_state.sh's output).
set -u
cd "$(dirname "$0")/../.." || exit 1
before=${KSTATS_HOST_STATE:-}
if [ ! -r "$before" ]; then
	echo "FAIL: host unchanged: no snapshot KSTATS_HOST_STATE=$before (run it through tests/run.sh)"
	exit 0
fi
now=$(tests/host_state.sh) || { echo "FAIL: host unchanged: tests/host_state.sh failed"; exit 0; }
changed=$(diff <(grep -v '^foreign' "$before") <(grep -v '^foreign' <<<"$now"))
if [ -z "$changed" ]; then
	echo "PASS: apt sources, keys and preferences (/etc/apt) are as before the suite"
else
	echo "FAIL: /etc/apt changed during the suite:"
	sed 's/^/    /' <<<"$changed"
fi
if [ "$(grep '^foreign' "$before")" = "$(grep '^foreign' <<<"$now")" ]; then
	echo "PASS: dpkg's foreign architectures are as before the suite ($(grep '^foreign' <<<"$now" | sed 's/^[^:]*: *//; s/ *$//; s/^$/none/'))"
else
	echo "FAIL: dpkg's foreign architectures changed: $(grep '^foreign' "$before") -> $(grep '^foreign' <<<"$now")"
fi
