# Fleet export: the Prometheus/OpenMetrics renderer's unit test links the
# code it tests; the end-to-end test runs Debian's node_exporter and
# Prometheus (tests/sh/test_prometheus_e2e.sh).
$(BUILD)/tests/unit/test_prom_render: $(BUILD)/cli/render_openmetrics.o $(BUILD)/cli/hist.o
$(BUILD)/tests/unit/test_prom_render.o: CFLAGS += -Icli
