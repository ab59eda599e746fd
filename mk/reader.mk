# libkstats reader: the test objects' headers.

READER_TEST_HDRS := $(wildcard tests/bpf/reader_*.h)
$(patsubst tests/bpf/%.c,$(BUILD)/tests/bpf/%.bpf,$(wildcard tests/bpf/reader_*.c)) \
$(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/kernel/test_reader*.c)): $(READER_TEST_HDRS)
