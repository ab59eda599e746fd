# Kernel matrix: the suite inside qemu guests running other kernels
# (README.md "Kernel matrix").  The guest gets static builds of the same
# sources and the same $(BUILD)/bpf objects, which are not rebuilt.
DEB_PKGS += qemu-system-x86 busybox-static cpio xz-utils zstd libdrm-dev

STATIC_BUILD := $(BUILD)/static
GUEST_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/kernels/guest/*.c))

.PHONY: static-tools static-bins test-kernels

# No sanitizers here: their runtimes exist only as shared libraries.
static-tools:
	@$(MAKE) --no-print-directory BUILD=$(STATIC_BUILD) SAN=0 LDFLAGS=-static static-bins

static-bins: $(BUILD)/kstats-loader $(BUILD)/kstats $(BUILD)/kstats-guest
	@:

$(GUEST_OBJS): $(wildcard tests/kernels/guest/*.h)

$(BUILD)/kstats-guest: $(GUEST_OBJS) $(BUILD)/tests/lib/ktest.o $(BUILD)/libkstats.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

test-build: static-tools

test-kernels: deps
	@$(MAKE) --no-print-directory all static-tools
	@tests/kernels/run.sh $(BUILD)
