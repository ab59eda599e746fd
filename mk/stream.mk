# Event streams (doc/streams.md): the reader and consumer threads.
STREAM_TEST_BINS := $(filter $(BUILD)/tests/kernel/test_stream%,$(TEST_BINS))

$(BUILD)/kstats $(STREAM_TEST_BINS): LDLIBS += -lpthread
