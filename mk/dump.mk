# kstats dump/status: json-c for --json and the loader status file; promtool
# (Debian: prometheus) validates --prometheus in make test.
DEB_PKGS += prometheus

$(BUILD)/kstats: LDLIBS += $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)

# The unit test of the histogram arithmetic links the code it tests.
$(BUILD)/tests/unit/test_dump_hist: $(BUILD)/puller/hist.o
$(BUILD)/tests/unit/test_dump_hist.o: CFLAGS += -Ipuller
