# kstats dump/status: json-c for --json and the loader status file; promtool
# (Debian: prometheus) validates --openmetrics in make test.
DEB_PKGS += prometheus

$(BUILD)/kstats: LDLIBS += $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)
