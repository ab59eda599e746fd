# kstats dump: promtool
# (Debian: prometheus) validates --prometheus in make test.
DEB_PKGS += prometheus


# The unit test of the histogram arithmetic links the code it tests.
$(BUILD)/tests/unit/test_dump_hist: $(BUILD)/cli/hist.o
$(BUILD)/tests/unit/test_dump_hist.o: CFLAGS += -Icli
