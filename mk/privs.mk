# Privileges: the SELinux policy build, and the trust check's unit test.
.PHONY: sepolicy
# Compiles sepolicy/ against tests/sepolicy/'s base policy; checks neverallows.
sepolicy:
	tests/sepolicy/build.sh $(BUILD)/sepolicy

$(BUILD)/tests/unit/test_trust.o: CFLAGS += -Iloader
$(BUILD)/tests/unit/test_trust: $(BUILD)/loader/config.o
