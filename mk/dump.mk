# kstats dump: promtool (Debian: prometheus, in the Makefile's TEST_PKGS)
# validates --prometheus in make test.

# The unit test of the histogram arithmetic links the code it tests.
$(BUILD)/tests/unit/test_dump_hist: $(BUILD)/cli/render.o $(BUILD)/cli/labels.o
$(BUILD)/tests/unit/test_dump_hist.o: CFLAGS += -Icli
