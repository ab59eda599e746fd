# kernelstats: make (build), make run (demo), make test (suite). See README.md.
BUILD   ?= build
SAN     ?= 0
PREFIX  ?= /usr/local
CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

DEB_PKGS := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config \
	    libcmocka-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler jq \
	    libjson-c-dev systemd strace

CFLAGS  := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror \
	   -Iinclude -Ilibkstats -I$(BUILD) $(shell pkg-config --cflags libbpf 2>/dev/null) \
	   -MMD -MP
# One pkg-config for every binary: libkstats needs json-c (loader status).
LDLIBS  := $(shell pkg-config --libs libbpf libelf zlib json-c 2>/dev/null || echo -lbpf -lelf -lz -ljson-c)
# Packagers add theirs (debian/rules: dpkg-buildflags).
CFLAGS  += $(EXTRA_CFLAGS)
LDFLAGS += $(EXTRA_LDFLAGS)
ifeq ($(SAN),1)
CFLAGS  += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_x86 -Wall -Werror \
	      -Iinclude -I$(BUILD)

BPF_SRCS  := $(wildcard bpfprogs/*.c)
BPF_OBJS  := $(patsubst bpfprogs/%.c,$(BUILD)/bpf/%.bpf,$(BPF_SRCS))
LIB_OBJS  := $(patsubst %.c,$(BUILD)/%.o,$(wildcard libkstats/*.c))
LOADER_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard loader/*.c))
KSTATS_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard cli/*.c))
TEST_LIB  := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/lib/*.c))
TEST_BINS := $(patsubst %.c,$(BUILD)/%,$(wildcard tests/unit/*.c tests/kernel/*.c))
TEST_BPF  := $(patsubst %.c,$(BUILD)/%.bpf,$(wildcard tests/bpf/*.c))

.PHONY: all bpf tools deps run test test-build clean
.DELETE_ON_ERROR:

all: bpf tools
bpf: $(BPF_OBJS)
tools: $(BUILD)/kstats-loader $(BUILD)/kstats

# Idempotent: installs only what dpkg does not already have.
deps:
	@missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

$(BUILD)/vmlinux.h:
	@mkdir -p $(@D)
	@test -r $(VMLINUX_BTF) || { echo "no $(VMLINUX_BTF): set VMLINUX_BTF=path to a kernel with BTF" >&2; exit 1; }
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

# -g gives the BTF libbpf needs; the DWARF beside it (95% of the object) is
# never read at load time, so it goes, as in libbpf-tools: every reader of
# an object (the loader's scan, its probe child, the load) parses less.
define build_bpf
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(LLVM_STRIP) -g $@
endef

$(BUILD)/bpf/%.bpf: bpfprogs/%.c $(BUILD)/vmlinux.h $(wildcard include/*.h)
	$(build_bpf)

$(BUILD)/tests/bpf/%.bpf: tests/bpf/%.c $(BUILD)/vmlinux.h $(wildcard include/*.h)
	$(build_bpf)

# Header dependencies come from -MMD (the .d files included at the end).
$(BUILD)/tests/%.o $(BUILD)/bench/%.o: CFLAGS += -Itests/lib
$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libkstats.a: $(LIB_OBJS)
	ar rcs $@ $^

$(BUILD)/kstats-loader: $(LOADER_OBJS) $(BUILD)/libkstats.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/kstats: $(KSTATS_OBJS) $(BUILD)/libkstats.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Archives last: objects added by mk/ fragments may need libkstats too.
$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_LIB) $(BUILD)/libkstats.a
	$(CC) $(LDFLAGS) -o $@ $(filter-out %.a,$^) $(filter %.a,$^) $(LDLIBS) -lcmocka

# Builds from a fresh machine: deps first, so pkg-config sees libbpf.
run: deps
	@$(MAKE) --no-print-directory all
	@tests/demo.sh $(BUILD)

test-build: all $(TEST_BINS) $(TEST_BPF)

test: deps
	@$(MAKE) --no-print-directory BUILD=build/san SAN=1 test-build
	@tests/run.sh build/san

clean:
	rm -rf $(BUILD) build

# Feature fragments (install, fuzz, bench, kernel lab, ...) add their own targets.
-include $(sort $(wildcard mk/*.mk))
# Not the kernels nor an image build's root tree (.tmp.*, tests/system/image.sh).
-include $(shell find $(BUILD) \( -path '$(BUILD)/kernels' -o -name '.tmp.*' \) -prune -o -name '*.d' -type f -print 2>/dev/null)
