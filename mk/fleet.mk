# kstats ship posts atoms to ClickHouse with libcurl (doc/fleet-atoms.md);
# test_fleet_atoms runs Debian's clickhouse-server (TEST_PKGS).
# The static guest builds (mk/kernels.mk) have no libcurl: kstats ship is
# left out of them (cmd_ship is weak).
ifneq ($(filter -static,$(LDFLAGS)),)
$(BUILD)/puller/ship.o: CFLAGS += -DKSTATS_NO_CURL
else
FLEET_LIBS := $(shell pkg-config --libs libcurl 2>/dev/null || echo -lcurl)
# (pull_hooks.mk, read after this file, builds $(BUILD)/hooks/kstats.)
$(BUILD)/kstats $(BUILD)/hooks/kstats: LDLIBS += $(FLEET_LIBS)
endif

# BENCHMARKS.md's fleet section (bench/fleet.sh): a day of 10^5 hosts.
.PHONY: bench-fleet
bench-fleet: all
	bench/fleet.sh $(BUILD) $(BENCH_FLEET_HOSTS)
