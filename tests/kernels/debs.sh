# Sourced by fetch.sh and sysroot.sh: one cache of Debian packages,
# CACHE/debs/, filled by apt-get download with the private apt
# configuration CACHE/apt/ (apt.sh), so the machine's sources and
# architectures stay as they are.  A package enters the cache only complete
# and checked (downloaded to a temporary dir on the same filesystem, then
# renamed), so an interrupted run never leaves a partial .deb that looks
# cached, and a cached package needs no network again.
# Callers start with deb_begin.

# Takes CACHE's lock (the runs that share it wait for each other), removes
# what interrupted runs left there, and makes the scratch dir $tmp.
deb_begin() {
	mkdir -p "$1"
	apt=("$(realpath "$(dirname "${BASH_SOURCE[0]}")/apt.sh")" "$(realpath "$1")/apt")
	exec 9>"$1/.lock"
	flock 9
	rm -rf "$1"/.tmp.*
	tmp=$(mktemp -d "$1/.tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
}

# Fields of a package spec "name[:arch][=version]".
deb_name() { local n=${1%%=*}; echo "${n%%:*}"; }
deb_arch() {
	local n=${1%%=*}
	case $n in *:*) echo "${n#*:}" ;; *) dpkg --print-architecture ;; esac
}
deb_version() { case $1 in *=*) echo "${1#*=}" ;; esac; }

# The cached .deb of a spec, if any; unversioned specs take any version.
deb_cached() {
	local dir=$1 spec=$2 ver f
	ver=$(deb_version "$spec")
	ver=${ver//:/%3a}	# as apt-get download writes an epoch
	# shellcheck disable=SC2086 # unquoted: no version globs any
	for f in "$dir/$(deb_name "$spec")_"${ver:-*}"_$(deb_arch "$spec").deb"; do
		[ -f "$f" ] && { echo "$f"; break; }
	done
	return 0
}

# Fails unless file is a well-formed .deb of the spec's package and arch.
deb_check() {
	local file=$1 spec=$2 got
	got=$(dpkg-deb -f "$file" Package Architecture 2>/dev/null | tr '\n' ' ') || true
	[ "$got" = "Package: $(deb_name "$spec") Architecture: $(deb_arch "$spec") " ] &&
		dpkg-deb --fsys-tarfile "$file" | tail -c 1024 >/dev/null
}

# Prints the cached .deb of spec, downloading it first if needed.
# Exit 77 when it cannot be downloaded, 1 when the download is broken.
deb_fetch() {
	local cache=$1 spec=$2 dir=$1/debs dl log f
	f=$(deb_cached "$dir" "$spec")
	[ -n "$f" ] && { echo "$f"; return 0; }
	mkdir -p "$dir"
	dl=$(mktemp -d "$tmp/dl.XXXXXX")
	log=$( (cd "$dl" && "${apt[@]}" download -q "$spec") 2>&1) ||
	log=$( ("${apt[@]}" update -qq && cd "$dl" &&
		"${apt[@]}" download -q "$spec") 2>&1) || {
		echo "cannot fetch $spec ($(tail -1 <<<"$log")); offline? put the .deb in $dir" >&2
		exit 77
	}
	for f in "$dl"/*.deb; do
		deb_check "$f" "$spec" || { echo "downloaded $spec is broken: $f" >&2; exit 1; }
		mv "$f" "$dir/"
	done
	deb_cached "$dir" "$spec"
}
