# make bench: every performance figure of BENCHMARKS.md, side by side in one
# run on this machine.  Not part of make test.
BENCH_BPF := $(patsubst bench/bpf/%.c,$(BUILD)/bench/bpf/%.bpf,$(wildcard bench/bpf/*.c))

$(BUILD)/bench/bpf/%.bpf: bench/bpf/%.c $(BUILD)/vmlinux.h $(wildcard include/*.h)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench/handlers: $(BUILD)/bench/handlers.o $(BUILD)/libkstats.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

.PHONY: bench bench-handlers
bench: deps
	@$(MAKE) --no-print-directory bench-handlers bench-loader bench-read bench-stream

bench-handlers: all $(BENCH_BPF) $(BUILD)/bench/handlers
	@echo "== handler cost (BPF_PROG_TEST_RUN, in-kernel time from bpf_stats) =="
	@$(BUILD)/bench/handlers $(BUILD) 2>/dev/null
	@echo "== real-event overhead (compaction workload) =="
	@bench/real_events.sh $(BUILD) 50 2>/dev/null
