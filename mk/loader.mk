# kstats-loader: json-c for the status file (tests read it too).
JSONC_LIBS := $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)

$(BUILD)/kstats-loader: LDLIBS += $(JSONC_LIBS)
$(BUILD)/tests/%: LDLIBS += $(JSONC_LIBS)
