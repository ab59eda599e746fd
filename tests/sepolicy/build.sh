#!/usr/bin/env bash
# Compiles sepolicy/ against the test base policy, as AOSP's build does:
# m4 into OUT/policy.conf, checkpolicy into OUT/policy.bin (checking every
# neverallow), then checks sepolicy/file_contexts against that policy.
# Usage: tests/sepolicy/build.sh OUTDIR [MODULE_DIR]
#   MODULE_DIR defaults to sepolicy/ (the tests pass a modified copy).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: tests/sepolicy/build.sh OUTDIR [MODULE_DIR]}
mod=${2:-$(cd "$here/../../sepolicy" && pwd)}
mkdir -p "$out"
m4 -s --fatal-warnings \
	"$here/global_macros" "$here/te_macros" \
	"$here/security_classes" "$here/initial_sids" "$here/access_vectors" \
	"$here/mls" "$here/base.te" "$mod/kernelstats.te" \
	"$here/users" "$here/initial_sid_contexts" "$here/fs_use" \
	"$here/genfs_contexts" "$mod/genfs_contexts" >"$out/policy.conf"
checkpolicy -M -c 33 -o "$out/policy.bin" "$out/policy.conf"
sefcontext_compile -p "$out/policy.bin" -o "$out/file_contexts.bin" \
	"$mod/file_contexts"
