# Event streams (README "Event streams"): the reader and consumer threads.
STREAM_TEST_BINS := $(filter $(BUILD)/tests/kernel/test_stream%,$(TEST_BINS))

$(BUILD)/kstats $(STREAM_TEST_BINS): LDLIBS += -lpthread

# bench/stream: records/s through the reader and two consumers (README).
$(BUILD)/bench/stream: $(BUILD)/bench/stream.o $(BUILD)/tests/lib/stream.o $(BUILD)/tests/lib/ktest.o $(BUILD)/libkstats.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lpthread

.PHONY: bench-stream
bench-stream: $(BUILD)/bench/stream $(BUILD)/tests/bpf/stream_flood.bpf
	KSTATS_BUILD=$(BUILD) $(BUILD)/bench/stream
