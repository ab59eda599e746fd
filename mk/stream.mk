# Event streams (README "Event streams"): the reader and consumer threads.
STREAM_TEST_BINS := $(filter $(BUILD)/tests/kernel/test_stream%,$(TEST_BINS))

$(BUILD)/kstats $(STREAM_TEST_BINS): LDLIBS += -lpthread
$(BUILD)/kstats: LDLIBS += $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)
$(filter %/test_stream_watch,$(STREAM_TEST_BINS)): LDLIBS += $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)
