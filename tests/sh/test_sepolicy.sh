#!/usr/bin/env bash
# The SELinux policy compiles against the test base policy, its
# file_contexts name only defined types, and each deliberately violating
# rule, added to a temp copy of the module, fails on a neverallow.
set -u
cd "$(dirname "$0")/../.." || exit 1

for tool in m4 checkpolicy sefcontext_compile; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: sepolicy: $tool not installed (make deps)"
		exit 0
	fi
done
tmp=$(mktemp -d /tmp/kstats-test-$$-sepolicy-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT	# the EXIT trap cleans up; bash runs it on exit only
trap 'exit 143' TERM

if out=$(tests/sepolicy/build.sh "$tmp/good" 2>&1); then
	echo "PASS: policy compiles, neverallows hold, file_contexts valid"
else
	echo "FAIL: policy does not compile: $(tail -3 <<<"$out" | tr '\n' ' ')"
fi

# Builds a copy of sepolicy/ with one rule appended to kernelstats.te.
build_with() {
	rm -rf "$tmp/mod" && cp -r sepolicy "$tmp/mod"
	printf '\n%s\n' "$1" >>"$tmp/mod/kernelstats.te"
	tests/sepolicy/build.sh "$tmp/out" "$tmp/mod" 2>&1
}

# A rule that breaks no neverallow compiles: failures below are the rules'.
if out=$(build_with 'allow kstats kstats_runtime_file:file getattr;'); then
	echo "PASS: a harmless added rule still compiles"
else
	echo "FAIL: a harmless added rule breaks the build: $(tail -2 <<<"$out" | tr '\n' ' ')"
fi

# violation WHAT 'allow S T:C P;': must fail on a neverallow of the module,
# reported against exactly that rule.
violation() {
	local what=$1 rule=$2 out s tc p t expect
	read -r _ s tc p <<<"${rule%;}"
	t=${tc%%:*}
	[ "$t" = self ] && t=$s
	expect="of $tmp/mod/kernelstats.te .* violated by allow $s $t:${tc#*:} { $p };"
	if out=$(build_with "$rule"); then
		echo "FAIL: $what: '$rule' compiled"
	elif grep -q "neverallow on line [0-9]* $expect" <<<"$out"; then
		echo "PASS: neverallow: $what"
	else
		echo "FAIL: $what: '$rule' failed, but not on a neverallow: $(tail -2 <<<"$out" | tr '\n' ' ')"
	fi
}

violation "the reader writes a map" 'allow kstats kstats_loader:bpf map_write;'
violation "the reader creates a map" 'allow kstats self:bpf map_create;'
violation "another domain loads programs" 'allow untrusted_app self:bpf prog_load;'
violation "another domain runs the loader's programs" 'allow shell kstats_loader:bpf prog_run;'
violation "another domain pins into the pin directory" 'allow shell fs_bpf_kernelstats:file create;'
violation "another domain re-owns a pin" 'allow init fs_bpf_kernelstats:file setattr;'
violation "the reader opens a pin for writing" 'allow kstats fs_bpf_kernelstats:file write;'
violation "the reader bypasses file modes" 'allow kstats self:capability dac_read_search;'
violation "the reader gets maps by id (CAP_SYS_ADMIN)" 'allow kstats self:capability sys_admin;'
violation "BPF code is written at run time" 'allow init kstats_bpf_file:file write;'
violation "a file is relabelled as BPF code" 'allow shell kstats_bpf_file:file relabelto;'
violation "the loader reads state written by others" 'allow kstats_loader kstats_data_file:file read;'
violation "another domain becomes the loader" 'allow shell kstats_loader:process transition;'

# The labels are checked against the policy too: an undefined type fails.
rm -rf "$tmp/mod" && cp -r sepolicy "$tmp/mod"
echo '/usr/bin/kstats-typo u:object_r:kstats_typo_exec:s0' >>"$tmp/mod/file_contexts"
if out=$(tests/sepolicy/build.sh "$tmp/out" "$tmp/mod" 2>&1); then
	echo "FAIL: file_contexts with an undefined type was accepted"
elif grep -q 'invalid context u:object_r:kstats_typo_exec:s0' <<<"$out"; then
	echo "PASS: file_contexts types are checked against the policy"
else
	echo "FAIL: bad file_contexts failed for another reason: $(tail -2 <<<"$out" | tr '\n' ' ')"
fi

# The Android rc's run dir is the one the policy labels, and the loader
# gets no write on tmpfs directories at large (issue 50, items 10).
rundir=$(grep -o -- '--run-dir [^ ]*' dist/android/kernelstats.rc | cut -d' ' -f2)
ctx=$(selabel_lookup -b file -f "$tmp/good/file_contexts.bin" -k "$rundir/loader-status.json" 2>&1)
if [ -n "$rundir" ] && [[ $ctx == *":kstats_runtime_file:"* ]]; then
	echo "PASS: kernelstats.rc's --run-dir $rundir is labelled kstats_runtime_file"
else
	echo "FAIL: kernelstats.rc's --run-dir '$rundir' is not the policy's run dir: $ctx"
fi
if out=$(sesearch -A -s kstats_loader -t tmpfs -c dir -p write,add_name "$tmp/good/policy.bin" 2>&1) &&
	[ -z "$out" ]; then
	echo "PASS: the loader may write in no tmpfs directory but its own run dir"
else
	echo "FAIL: the loader may write tmpfs directories: $out"
fi

# Android has no kstats ship (sepolicy/README.md): no kernelstats domain
# may open a network socket; only Debian's module connects to ClickHouse.
net=':(tcp|udp|rawip|sctp|packet|netlink_[a-z_]*)_socket |:(node|netif|packet) '
if ! rules=$(sesearch -A "$tmp/good/policy.bin" 2>&1) || ! grep -q '^allow kstats ' <<<"$rules"; then
	echo "FAIL: sesearch cannot list the AOSP policy's rules: $(head -2 <<<"$rules" | tr '\n' ' ')"
elif out=$(grep -E '^allow kstats(_loader)? ' <<<"$rules" | grep -E "$net"); then
	echo "FAIL: the AOSP policy gives a kernelstats domain the network: $(head -2 <<<"$out" | tr '\n' ' ')"
else
	echo "PASS: Android has no ship: no kernelstats domain may use a network socket"
fi
