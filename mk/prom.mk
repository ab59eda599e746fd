# Fleet export: the Prometheus/OpenMetrics renderer's unit test links the
# code it tests; the end-to-end test runs Debian's node_exporter and
# Prometheus (tests/sh/test_prometheus_e2e.sh).
$(BUILD)/tests/unit/test_prom_render: $(BUILD)/cli/render.o $(BUILD)/cli/prom.o $(BUILD)/cli/labels.o
$(BUILD)/tests/unit/test_prom_render.o: CFLAGS += -Icli

# make rules [OBJS="a.bpf b.bpf"] [RULES=file]: the Prometheus recording and
# alerting rules of the objects' metrics (kstats dump --rules reads their
# metadata and BTF, no map), the shipped objects' by default; make install
# ships them in $(DATADIR)/prometheus (doc/fleet-export.md).
OBJS  ?= $(BPF_OBJS)
RULES ?= $(BUILD)/prometheus/kernelstats.rules.yml
RULES_OBJ_DIR = $(BUILD)/prometheus/obj
.PHONY: rules
rules: $(BUILD)/kstats $(OBJS)
	rm -rf $(RULES_OBJ_DIR)
	mkdir -p $(RULES_OBJ_DIR) $(dir $(RULES))
	cp $(OBJS) $(RULES_OBJ_DIR)/
	$(BUILD)/kstats dump --rules --obj-dir $(RULES_OBJ_DIR) >$(RULES).tmp
	mv $(RULES).tmp $(RULES)
