# libkstats reader: test-object headers, the CLI test's json-c, bench/read.

READER_TEST_HDRS := $(wildcard tests/bpf/reader_*.h)
$(patsubst tests/bpf/%.c,$(BUILD)/tests/bpf/%.bpf,$(wildcard tests/bpf/reader_*.c)) \
$(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/kernel/test_reader*.c)): $(READER_TEST_HDRS)

# The CLI test reads kstats read --json back with json-c (kstats links it already).
$(BUILD)/tests/kernel/test_reader_cli: LDLIBS += $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)
