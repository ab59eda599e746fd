# Tests on the test clock build production sources (tests/bpf/clocked_*.c
# include bpfprogs/<obj>.c), and make test-mutation (tests/mutation/).
CLOCKED_OBJS := $(patsubst tests/bpf/clocked_%.c,%,$(wildcard tests/bpf/clocked_*.c))
$(foreach o,$(CLOCKED_OBJS),$(eval \
	$(BUILD)/tests/bpf/clocked_$(o).bpf: bpfprogs/$(o).c tests/bpf/test_clock.h))
$(BUILD)/tests/bpf/page_direct_reclaim.bpf: tests/bpf/test_clock.h
$(patsubst %.c,$(BUILD)/%.bpf,$(wildcard tests/bpf/loader_shape*.c)): \
	tests/bpf/loader_shape.h tests/bpf/loader_common.h

.PHONY: test-mutation
test-mutation: deps-test
	@tests/mutation/run.sh

# What test-mutation builds per mutant: test-build without the static lab
# tools and the fuzzer (no mutant's tests use them), about half the work.
.PHONY: mutation-build
mutation-build: all $(TEST_BINS) $(TEST_BPF)
