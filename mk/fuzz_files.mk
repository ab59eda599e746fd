# libFuzzer on the file parsers: the pull state (puller/state.c) and the
# loader status (btfreader/loader_status.c).  make test runs each briefly
# (tests/sh/fuzz.sh); `make fuzz-state` / `make fuzz-status` run one
# until stopped.  FUZZ_CC, FUZZ_FLAGS and FUZZ_OPTS come from fuzz.mk.
FUZZ_FILE_BINS := $(FUZZ_DIR)/fuzz_state $(FUZZ_DIR)/fuzz_status

$(FUZZ_DIR)/fuzz_state: fuzz/fuzz_state.c puller/state.c btfreader/fileio.c btfreader/layout.c \
			puller/pull.h puller/delta.h btfreader/kstats_fileio.h $(BUILD)/proto/kernelstats_atoms.pb-c.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -D_GNU_SOURCE -Iinclude -Icli -Ipuller -I$(BUILD) fuzz/fuzz_state.c puller/state.c \
		btfreader/fileio.c btfreader/layout.c -o $@ $(LDLIBS)

$(FUZZ_DIR)/fuzz_status: fuzz/fuzz_status.c btfreader/loader_status.c btfreader/fileio.c \
			 btfreader/tool.c btfreader/kstats_status.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -D_GNU_SOURCE fuzz/fuzz_status.c btfreader/loader_status.c \
		btfreader/fileio.c btfreader/tool.c -o $@ $(LDLIBS)

test-build: $(FUZZ_FILE_BINS)

.PHONY: fuzz-state fuzz-status
fuzz-state fuzz-status: fuzz-%: $(FUZZ_DIR)/fuzz_%
	@mkdir -p $(FUZZ_DIR)/corpus-$*
	$< $(FUZZ_OPTS) $(FUZZ_ARGS) $(FUZZ_DIR)/corpus-$* fuzz/seeds/$*
