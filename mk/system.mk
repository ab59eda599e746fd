# The installed system under a real systemd (tests/system/, doc/system-test.md):
# a Debian bookworm guest built by mmdebstrap, booted under qemu TCG with
# Debian's 6.1 cloud kernel, with the package of make deb installed.
SYSTEM_CACHE ?= build/system

$(BUILD)/tests/unit/test_diag: $(BUILD)/cli/diag.o
$(BUILD)/tests/unit/test_diag.o: CFLAGS += -Icli
