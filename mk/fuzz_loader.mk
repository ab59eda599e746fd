# libFuzzer on the loader's reading of its previous status file (loader/result.c).
#   make fuzz-loader-status [FUZZ_ARGS=...]   runs until stopped
#   make test                                 runs it 10 s (tests/sh/fuzz_loader_status.sh)
FUZZ_STATUS_BIN  := $(FUZZ_DIR)/fuzz_loader_status
FUZZ_STATUS_SRCS := fuzz/fuzz_loader_status.c \
		    loader/result.c loader/pin.c loader/log.c btfreader/tool.c btfreader/fileio.c btfreader/pins.c \
		    btfreader/loader_status.c btfreader/layout.c

.PHONY: fuzz-loader-status
$(FUZZ_STATUS_BIN): $(FUZZ_STATUS_SRCS) loader/loader.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -D_GNU_SOURCE -Iinclude -Ibtfreader -Iloader \
		$(FUZZ_STATUS_SRCS) -o $@ \
		$(LDLIBS)

test-build: $(FUZZ_STATUS_BIN)

fuzz-loader-status: $(FUZZ_STATUS_BIN)
	@mkdir -p $(FUZZ_DIR)/status-corpus
	$(FUZZ_STATUS_BIN) $(FUZZ_OPTS) -close_fd_mask=2 $(FUZZ_ARGS) \
		$(FUZZ_DIR)/status-corpus fuzz/loader_status_seeds

# libFuzzer on loader.conf (loader/config.c): make fuzz-loader-config runs it
# until stopped; make test runs it 10 s (tests/sh/fuzz_loader_config.sh).
FUZZ_CONFIG_BIN  := $(FUZZ_DIR)/fuzz_loader_config
FUZZ_CONFIG_SRCS := fuzz/fuzz_loader_config.c loader/config.c btfreader/fileio.c btfreader/layout.c

.PHONY: fuzz-loader-config
$(FUZZ_CONFIG_BIN): $(FUZZ_CONFIG_SRCS) loader/loader.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -D_GNU_SOURCE -Iinclude -Ibtfreader -Iloader \
		$(FUZZ_CONFIG_SRCS) -o $@ $(LDLIBS)

test-build: $(FUZZ_CONFIG_BIN)

fuzz-loader-config: $(FUZZ_CONFIG_BIN)
	@mkdir -p $(FUZZ_DIR)/config-corpus
	$(FUZZ_CONFIG_BIN) $(FUZZ_OPTS) $(FUZZ_ARGS) $(FUZZ_DIR)/config-corpus dist
