# make bench: every figure of BENCHMARKS.md, measured side by side in one
# run on this machine, and BENCHMARKS.md written from that run
# (bench/report.sh; method in doc/benchmarks.md).  Not part of make test.
# Each bench-* target runs one part and prints its RESULT lines.
BENCH_BPF := $(patsubst bench/bpf/%.c,$(BUILD)/bench/bpf/%.bpf,$(wildcard bench/bpf/*.c))
BENCH_LIB := $(BUILD)/bench/lib/bstat.o
BENCH_BINS := $(addprefix $(BUILD)/bench/,handlers stream read/bench_read loader/btf_parse \
	      loader/min_loader)

$(BUILD)/bench/%.o: CFLAGS += -Ibench/lib
$(BUILD)/bench/%.o: $(wildcard bench/lib/*.h)

$(BUILD)/bench/bpf/%.bpf: bench/bpf/%.c $(BUILD)/vmlinux.h $(wildcard include/*.h)
	$(build_bpf)

$(BUILD)/bench/stream: $(BUILD)/tests/lib/stream.o $(BUILD)/tests/lib/ktest.o
$(BUILD)/bench/stream: LDLIBS += -lpthread
$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BENCH_LIB) $(BUILD)/libkstats.a
	$(CC) $(LDFLAGS) -o $@ $(filter-out %.a,$^) $(filter %.a,$^) $(LDLIBS)

.PHONY: bench bench-build bench-handlers bench-loader bench-read bench-stream
bench-build: all $(BENCH_BPF) $(BENCH_BINS) $(BUILD)/tests/bpf/stream_flood.bpf

bench: deps
	@$(MAKE) --no-print-directory bench-build
	bench/report.sh $(BUILD) BENCHMARKS.md

bench-handlers: bench-build
	$(BUILD)/bench/handlers $(BUILD)
	bench/real_events.sh $(BUILD) 50

bench-loader: bench-build
	bench/loader/run.sh $(BUILD)

bench-read: bench-build
	$(BUILD)/bench/read/bench_read $(BUILD)/kstats $(BENCH_ARGS)
	bench/read/profile.sh $(BUILD)

bench-stream: bench-build
	KSTATS_BUILD=$(BUILD) $(BUILD)/bench/stream
	bench/stream_profile.sh $(BUILD)
