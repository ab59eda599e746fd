# bench/loader: loader wall time against bpftool prog loadall (README "Loader").
.PHONY: bench-loader
bench-loader: all $(BUILD)/bench/loader/btf_parse
	@bench/loader/run.sh $(BUILD)

$(BUILD)/bench/loader/btf_parse: $(BUILD)/bench/loader/btf_parse.o
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
