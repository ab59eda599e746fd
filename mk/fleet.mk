# kstats ship posts atoms to ClickHouse with libcurl (doc/fleet-atoms.md);
# test_fleet_atoms runs Debian's clickhouse-server (TEST_PKGS).
FLEET_LIBS := $(shell pkg-config --libs libcurl 2>/dev/null || echo -lcurl)
$(BUILD)/kstats $(HOOKS_DIR)/kstats: LDLIBS += $(FLEET_LIBS)
