# Kernel matrix: the suite inside qemu guests running other kernels, amd64
# and arm64 (doc/kernel-matrix.md).  The guest gets static builds of the
# same sources and the same $(BUILD)/bpf objects, which are not rebuilt.
KERNELS_CACHE ?= build/kernels
STATIC_BUILD := $(BUILD)/static
ARM64_BUILD := $(BUILD)/static-arm64
ARM64_SYSROOT := $(abspath $(KERNELS_CACHE))/sysroot-arm64
ARM64_LIBDIR := $(ARM64_SYSROOT)/usr/lib/aarch64-linux-gnu
GUEST_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/kernels/guest/*.c))

.PHONY: static-tools static-tools-arm64 static-bins test-kernels

# No sanitizers here: their runtimes exist only as shared libraries.
static-tools:
	@$(MAKE) --no-print-directory BUILD=$(STATIC_BUILD) SAN=0 LDFLAGS=-static static-bins

# Cross-built against the arm64 packages' static libraries, unpacked into a
# sysroot.  Offline with nothing cached, the arm64 guest skips with the reason.
static-tools-arm64:
	@rc=0; err=$$(tests/kernels/sysroot.sh $(KERNELS_CACHE) arm64 2>&1) || rc=$$?; \
	mkdir -p $(ARM64_BUILD); rm -f $(ARM64_BUILD)/unavailable; \
	if [ $$rc = 77 ]; then echo "$$err" | tee $(ARM64_BUILD)/unavailable >&2; exit 0; fi; \
	[ $$rc = 0 ] || { echo "$$err" >&2; exit $$rc; }; \
	PKG_CONFIG_LIBDIR=$(ARM64_LIBDIR)/pkgconfig PKG_CONFIG_SYSROOT_DIR=$(ARM64_SYSROOT) \
	$(MAKE) --no-print-directory BUILD=$(ARM64_BUILD) SAN=0 LDFLAGS=-static \
		CC="aarch64-linux-gnu-gcc -I$(ARM64_SYSROOT)/usr/include -L$(ARM64_LIBDIR)" \
		static-bins

static-bins: $(BUILD)/kstats-loader $(BUILD)/kstats $(BUILD)/kstats-guest
	@:

$(GUEST_OBJS): $(wildcard tests/kernels/guest/*.h)

$(BUILD)/kstats-guest: $(GUEST_OBJS) $(BUILD)/tests/lib/ktest.o $(BUILD)/libkstats.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

test-build: static-tools static-tools-arm64

test-kernels: deps-lab
	@$(MAKE) --no-print-directory all static-tools static-tools-arm64
	@KERNELS_CACHE=$(KERNELS_CACHE) tests/kernels/run.sh $(BUILD)
