# Privileges: the trust check's unit test, and the SELinux policy build.
$(BUILD)/tests/unit/test_trust.o: CFLAGS += -Iloader
$(BUILD)/tests/unit/test_trust: $(BUILD)/loader/trust.o
