# Atom schema (proto/*.proto) compiled with protoc-c into $(BUILD)/proto;
# kstats links the generated code, libprotobuf-c and json-c (loader status).
PROTOC_C   ?= protoc-c
PROTO_SRCS := $(wildcard proto/*.proto)
PROTO_HDRS := $(patsubst %.proto,$(BUILD)/%.pb-c.h,$(PROTO_SRCS))
PROTO_OBJS := $(patsubst %.proto,$(BUILD)/%.pb-c.o,$(PROTO_SRCS))
PULL_LIBS  := -lprotobuf-c

# Both outputs come from one protoc-c run.
$(BUILD)/proto/%.pb-c.c $(BUILD)/proto/%.pb-c.h: proto/%.proto
	@mkdir -p $(@D)
	$(PROTOC_C) --c_out=$(BUILD) $<

$(BUILD)/proto/%.pb-c.o: $(BUILD)/proto/%.pb-c.c $(PROTO_HDRS)
	$(CC) $(CFLAGS) -c $< -o $@

$(KSTATS_OBJS): $(PROTO_HDRS)
$(BUILD)/kstats: $(PROTO_OBJS)
$(BUILD)/kstats: LDLIBS += $(PULL_LIBS)

# Tests that decode atoms or drive the delta code directly.
PULL_TESTS := $(filter $(BUILD)/tests/unit/test_pull% $(BUILD)/tests/kernel/test_pull%,$(TEST_BINS))
$(PULL_TESTS:%=%.o): $(PROTO_HDRS)
$(PULL_TESTS:%=%.o): CFLAGS += -Icli
$(PULL_TESTS): $(PROTO_OBJS) $(patsubst %,$(BUILD)/puller/%.o,state pull_atoms atoms_file atom_check) $(patsubst %,$(BUILD)/cli/%.o,labels snapshot render diag)
$(PULL_TESTS): LDLIBS += $(PULL_LIBS)
