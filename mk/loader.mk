# kstats-loader: json-c for the status file (tests read it too).
JSONC_LIBS := $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)

$(BUILD)/kstats-loader: LDLIBS += $(JSONC_LIBS)
$(BUILD)/tests/%: LDLIBS += $(JSONC_LIBS)

# bench/loader: loader wall time against bpftool prog loadall (README "Loader").
.PHONY: bench-loader
bench-loader: all $(BUILD)/bench/loader/btf_parse
	@bench/loader/run.sh $(BUILD)

$(BUILD)/bench/loader/btf_parse: $(BUILD)/bench/loader/btf_parse.o
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
