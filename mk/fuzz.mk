# libFuzzer on the BTF layout resolver (btfreader/layout.c).
#   make fuzz [FUZZ_CORPUS=dir] [FUZZ_ARGS=...]  runs until stopped
#   make test                                     runs it 20 s (tests/sh/fuzz.sh)
FUZZ_CC     ?= $(CLANG)
FUZZ_DIR    := $(BUILD)/fuzz
FUZZ_BIN    := $(FUZZ_DIR)/fuzz_layout
FUZZ_SEEDS  := $(FUZZ_DIR)/seeds
FUZZ_CORPUS ?= $(FUZZ_DIR)/corpus
FUZZ_FLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	       -Ibtfreader $(shell pkg-config --cflags libbpf 2>/dev/null)
# Options shared with the bounded runs in tests/sh/fuzz.sh.
FUZZ_OPTS   := -max_len=65536 -timeout=10 -rss_limit_mb=2048

.PHONY: fuzz
$(FUZZ_BIN): fuzz/fuzz_layout.c btfreader/layout.c btfreader/kstats_reader.h btfreader/map_internal.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) fuzz/fuzz_layout.c btfreader/layout.c -o $@ $(LDLIBS)

$(FUZZ_DIR)/make_seeds: fuzz/make_seeds.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LDLIBS)

# Seeds: every kind built in memory, plus the .BTF of each compiled object.
$(FUZZ_SEEDS)/.stamp: $(FUZZ_DIR)/make_seeds $(BPF_OBJS) $(TEST_BPF)
	@rm -rf $(@D) && mkdir -p $(@D)
	$(FUZZ_DIR)/make_seeds $(@D)
	@for o in $(BPF_OBJS) $(TEST_BPF); do \
		llvm-objcopy --dump-section .BTF=$(@D)/$$(basename $$o .bpf).btf $$o $(@D)/.tmp || exit 1; \
	done; rm -f $(@D)/.tmp
	@touch $@

test-build: $(FUZZ_BIN) $(FUZZ_SEEDS)/.stamp

fuzz: $(FUZZ_BIN) $(FUZZ_SEEDS)/.stamp
	@mkdir -p $(FUZZ_CORPUS)
	$(FUZZ_BIN) $(FUZZ_OPTS) $(FUZZ_ARGS) $(FUZZ_CORPUS) $(FUZZ_SEEDS)
