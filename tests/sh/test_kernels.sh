#!/usr/bin/env bash
# The kernel matrix (tests/kernels/, doc/kernel-matrix.md): the suite's
# objects, unchanged, in qemu guests on other kernels; one line per guest test.
exec "$(dirname "$0")/../kernels/run.sh" "${KSTATS_BUILD:-build}"
