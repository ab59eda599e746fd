#!/usr/bin/env bash
# The installed system under a real systemd (tests/system/, doc/system-test.md):
# the package of make deb in a Debian bookworm guest with systemd 252 as
# PID 1 on Debian's 6.1 cloud kernel, three boots and the power cuts.
exec "$(dirname "$0")/../system/run.sh"
