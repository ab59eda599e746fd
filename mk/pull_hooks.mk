# The test build of kstats: its sources compiled again with
# -DKSTATS_TEST_HOOKS and linked with tests/hooks/ (crash points, a fixed
# clock, a fake boot id: btfreader/kstats_hooks.h), as $(BUILD)/hooks/kstats.
# Only the tests that need a hook run it; the shipped kstats has none.
# After proto.mk (sorted order): the objects need the generated headers.
HOOKS_DIR   := $(BUILD)/hooks
HOOKS_OBJS  := $(patsubst %.c,$(HOOKS_DIR)/%.o,$(wildcard cli/*.c puller/*.c) btfreader/fileio.c)
HOOKS_IMPL := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/hooks/*.c))

$(HOOKS_DIR)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DKSTATS_TEST_HOOKS -c $< -o $@

$(HOOKS_OBJS): $(PROTO_HDRS)
$(HOOKS_IMPL): CFLAGS += -DKSTATS_TEST_HOOKS

# The hooked fileio.o comes first, so the archive's copy is never linked.
$(HOOKS_DIR)/kstats: $(HOOKS_OBJS) $(HOOKS_IMPL) $(PROTO_OBJS) $(BUILD)/libkstats.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(PULL_LIBS)

# test_pull walks every crash point.
$(BUILD)/tests/kernel/test_pull.o: CFLAGS += -Itests/hooks
$(BUILD)/tests/kernel/test_pull: $(BUILD)/tests/hooks/fault_points.o

test-build mutation-build: $(HOOKS_DIR)/kstats
