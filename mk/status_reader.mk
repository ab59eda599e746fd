# The typed loader-status reader (btfreader/loader_status.c) uses json-c:
# its unit test links it.
$(BUILD)/tests/unit/test_loader_status: LDLIBS += $(shell pkg-config --libs json-c 2>/dev/null || echo -ljson-c)
