# libkstats reader: test-object headers, the CLI test's json-c, bench/read.

READER_TEST_HDRS := $(wildcard tests/bpf/reader_*.h)
$(patsubst tests/bpf/%.c,$(BUILD)/tests/bpf/%.bpf,$(wildcard tests/bpf/reader_*.c)) \
$(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/kernel/test_reader*.c)): $(READER_TEST_HDRS)

# The CLI test reads kstats read --json back with json-c (kstats links it already).

# bench/read: batch reader vs get_next_key walk vs bpftool (README "Reader");
# strace counts the syscalls.  BENCH_ARGS="--entries 1000,10000 --repeat 21".
DEB_PKGS += strace
BENCH_READ := $(BUILD)/bench/read/bench_read
.PHONY: bench-read
$(BENCH_READ): $(BUILD)/bench/read/bench_read.o $(BUILD)/libkstats.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench-read: deps
	@$(MAKE) --no-print-directory $(BENCH_READ)
	$(BENCH_READ) $(BENCH_ARGS)
