# make bench-boot: the loader's cost at boot under systemd against
# min_loader run the same way, in the system test's guest (bench/boot/run.sh,
# doc/boot-cost.md).  Not part of make bench: a setup boot and four measured
# boots under qemu TCG take 8 minutes at host load 2, 20-30 at load 10.
# Builds the package first.
.PHONY: bench-boot
bench-boot: deps
	@$(MAKE) --no-print-directory deb bench-build
	bench/boot/run.sh $(BUILD)
