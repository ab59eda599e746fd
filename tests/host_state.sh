#!/usr/bin/env bash
# What must outlast no kernelstats command but packages: apt's sources,
# trusted keys and preferences under ROOT/etc/apt (each path with its type
# and content hash) and dpkg's foreign architectures, as text for diff.
# tests/run.sh keeps it from before the suite; test_host_unchanged compares.
# Usage: tests/host_state.sh [ROOT]   (default /)
set -euo pipefail
root=${1:-/}
cd "$root/etc/apt"
paths=()
for p in sources.list sources.list.d trusted.gpg trusted.gpg.d keyrings preferences \
	 preferences.d; do
	[ -e "$p" ] || [ -L "$p" ] && paths+=("$p")
done
find "${paths[@]}" -printf '%y %p %l\n' | sort |
while read -r type path link; do
	case $type in
	f) echo "$path $(sha256sum < "$path" | cut -c1-64)" ;;
	*) echo "$path $type $link" ;;
	esac
done
echo "foreign architectures: $(dpkg --admindir="$root/var/lib/dpkg" --print-foreign-architectures | tr '\n' ' ')"
