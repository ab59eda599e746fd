# kernelstats: make (build), make run (demo), make test (suite). See README.md.
BUILD   ?= build
SAN     ?= 0
PREFIX  ?= /usr/local
CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

# Debian packages, by the command that needs them, each list only here
# (README: what each command installs).  Building and running (make run):
RUN_PKGS := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config \
	    libprotobuf-c-dev protobuf-c-compiler libjson-c-dev libcurl4-openssl-dev gcc make
# make test adds: cmocka, protoc (decodes atoms), jq, systemd-analyze and
# strace; the fuzzer's runtime (only a Recommends of clang); a JDK (JNI);
# Prometheus, node_exporter, curl and the Python client (the export tests);
# m4, checkpolicy and selinux-utils (the SELinux policy); python3 (tests'
# helpers); chromium (test_report reads kstats report's page back);
# Debian's policy and its tools (test_selinux installs the module into a
# throwaway store and queries it); ClickHouse's server and client
# (test_fleet_atoms runs two shards of its own).  It also builds the package and boots
# the lab and system guests.
TEST_PKGS := libcmocka-dev protobuf-compiler jq systemd strace libclang-rt-dev \
	     openjdk-17-jdk-headless prometheus prometheus-node-exporter curl \
	     python3-prometheus-client m4 checkpolicy selinux-utils python3 chromium \
	     selinux-policy-default setools policycoreutils semodule-utils \
	     clickhouse-server clickhouse-client
# make deb: debhelper builds the package, lintian checks it,
# selinux-policy-dev builds its SELinux module.
PACKAGE_PKGS := debhelper lintian selinux-policy-dev
# make test-kernels: the lab's qemu guests (amd64, arm64), the arm64 cross
# compiler, the initramfs and the kernel packages' compressions, libdrm's
# uapi headers (the guest's vgem driver), protoc (the guests' atoms).
LAB_PKGS := qemu-system-x86 qemu-system-arm gcc-aarch64-linux-gnu busybox-static \
	    cpio xz-utils zstd lz4 kmod libdrm-dev protobuf-compiler
# The system test's bookworm guest under qemu (tests/system/, make bench-boot).
SYSTEM_PKGS := mmdebstrap e2fsprogs qemu-utils qemu-system-x86 acl
# make bench adds valgrind (and strace).
BENCH_PKGS := strace valgrind

CFLAGS  := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror \
	   -Iinclude -Ibtfreader -Icli -Ipuller -I$(BUILD) $(shell pkg-config --cflags libbpf 2>/dev/null) \
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
LIB_OBJS  := $(patsubst %.c,$(BUILD)/%.o,$(wildcard btfreader/*.c))
LOADER_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard loader/*.c))
KSTATS_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard cli/*.c puller/*.c))
TEST_LIB  := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/lib/*.c))
TEST_BINS := $(patsubst %.c,$(BUILD)/%,$(wildcard tests/unit/*.c tests/kernel/*.c))
TEST_BPF  := $(patsubst %.c,$(BUILD)/%.bpf,$(wildcard tests/bpf/*.c))

.PHONY: all bpf tools deps deps-run deps-deb deps-lab deps-test run test test-build test-fresh clean
.DELETE_ON_ERROR:

all: bpf tools
bpf: $(BPF_OBJS)
tools: $(BUILD)/kstats-loader $(BUILD)/kstats

# Installs what dpkg does not have yet of the packages $(1), with apt-get
# options $(2): packages only, from the machine's own sources.
define install_pkgs
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) $$missing >/dev/null; \
	fi
endef

# Building and running take no Recommends: make run stays what it needs.
deps-run:
	$(call install_pkgs,$(RUN_PKGS),--no-install-recommends)
deps-deb: deps-run
	$(call install_pkgs,$(PACKAGE_PKGS))
deps-lab: deps-run
	$(call install_pkgs,$(LAB_PKGS))
deps-test: deps-run
	$(call install_pkgs,$(TEST_PKGS) $(PACKAGE_PKGS) $(LAB_PKGS) $(SYSTEM_PKGS))
# Everything: make test's, and the benchmarks'.
deps: deps-test
	$(call install_pkgs,$(BENCH_PKGS))

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
	rm -f $@ && ar rcs $@ $^

$(BUILD)/kstats-loader: $(LOADER_OBJS) $(BUILD)/libkstats.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/kstats: $(KSTATS_OBJS) $(BUILD)/libkstats.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Archives last: objects added by mk/ fragments may need libkstats too.
$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_LIB) $(BUILD)/libkstats.a
	$(CC) $(LDFLAGS) -o $@ $(filter-out %.a,$^) $(filter %.a,$^) $(LDLIBS) -lcmocka

# Builds from a fresh machine: deps first, so pkg-config sees libbpf.
run: deps-run
	@$(MAKE) --no-print-directory all
	@tests/demo.sh $(BUILD)

test-build: all $(TEST_BINS) $(TEST_BPF)

# apt's sources, keys and dpkg's architectures before anything runs: the
# suite's last test (test_host_unchanged) finds them as they were.
test:
	@mkdir -p build/san && tests/host_state.sh > build/san/host-state.before
	@$(MAKE) --no-print-directory deps-test
	@$(MAKE) --no-print-directory BUILD=build/san SAN=1 test-build
	@KSTATS_HOST_STATE=build/san/host-state.before tests/run.sh build/san

# make run in a fresh bookworm root (tests/fresh.sh): minutes, not in make test.
test-fresh:
	$(call install_pkgs,$(SYSTEM_PKGS) git)
	@tests/fresh.sh

clean:
	rm -rf $(BUILD) build

# Feature fragments (install, fuzz, bench, kernel lab, ...) add their own targets.
-include $(sort $(wildcard mk/*.mk))
ifneq ($(DEB_PKGS),)
$(error DEB_PKGS is split by purpose: add "$(DEB_PKGS)" to RUN_PKGS, TEST_PKGS, PACKAGE_PKGS, LAB_PKGS, SYSTEM_PKGS or BENCH_PKGS in the Makefile)
endif
# Not the kernels nor an image build's root tree (.tmp.*, tests/system/image.sh).
-include $(shell find $(BUILD) \( -path '$(BUILD)/kernels' -o -name '.tmp.*' \) -prune -o -name '*.d' -type f -print 2>/dev/null)
