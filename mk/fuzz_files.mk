# libFuzzer on the file parsers: the pull state (cli/state.c) and the
# loader status (libkstats/loader_status.c).  make test runs each briefly
# (tests/sh/fuzz.sh); `make fuzz-state` / `make fuzz-status` run one
# until stopped.  FUZZ_CC, FUZZ_FLAGS and FUZZ_OPTS come from fuzz.mk.
FUZZ_FILE_BINS := $(FUZZ_DIR)/fuzz_state $(FUZZ_DIR)/fuzz_status

$(FUZZ_DIR)/fuzz_state: fuzz/fuzz_state.c cli/state.c libkstats/fileio.c \
			cli/pull.h libkstats/kstats_fileio.h $(BUILD)/proto/kernelstats_atoms.pb-c.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -D_GNU_SOURCE -Iinclude -Icli -I$(BUILD) fuzz/fuzz_state.c cli/state.c \
		libkstats/fileio.c -o $@ $(LDLIBS)

$(FUZZ_DIR)/fuzz_status: fuzz/fuzz_status.c libkstats/loader_status.c libkstats/fileio.c \
			 libkstats/kstats_status.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -D_GNU_SOURCE fuzz/fuzz_status.c libkstats/loader_status.c \
		libkstats/fileio.c -o $@ $(LDLIBS)

test-build: $(FUZZ_FILE_BINS)

.PHONY: fuzz-state fuzz-status
fuzz-state fuzz-status: fuzz-%: $(FUZZ_DIR)/fuzz_%
	@mkdir -p $(FUZZ_DIR)/corpus-$*
	$< $(FUZZ_OPTS) $(FUZZ_ARGS) $(FUZZ_DIR)/corpus-$* fuzz/seeds/$*
