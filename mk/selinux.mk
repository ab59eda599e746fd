# The SELinux module for Debian's refpolicy (sepolicy/refpolicy/,
# sepolicy/README.md): make selinux builds $(SELINUX_DIR)/kernelstats.pp
# with selinux-policy-dev's Makefile, the install paths filled in from
# mk/install.mk (the one place they are set); make install-selinux puts it
# and the genfscon CIL module where Debian keeps policy modules.
# selinux-policy-dev builds the module (PACKAGE_PKGS); make test installs it
# into a throwaway store and queries it (TEST_PKGS: the rest).
SELINUX_DIR  ?= $(BUILD)/selinux
SELINUXSHARE ?= $(PREFIX)/share/selinux/default
# SELINUX_SRC: test_selinux builds modified copies.
SELINUX_SRC  ?= sepolicy/refpolicy
SELINUX_SRCS := $(wildcard $(SELINUX_SRC)/kernelstats.*)

.PHONY: selinux install-selinux
selinux: $(SELINUX_DIR)/kernelstats.pp

# The module depends on the paths: a changed PREFIX or TEXTFILE_DIR
# rebuilds it (the stamp holds them).
$(SELINUX_DIR)/paths: FORCE_SELINUX_PATHS
	@mkdir -p $(@D)
	@echo "$(SBINDIR) $(BINDIR) $(BPFDIR) $(TEXTFILE_DIR)" >$@.new
	@cmp -s $@.new $@ && rm $@.new || mv $@.new $@
.PHONY: FORCE_SELINUX_PATHS

$(SELINUX_DIR)/kernelstats.pp: $(SELINUX_SRCS) $(SELINUX_DIR)/paths
	@test -f /usr/share/selinux/devel/Makefile || \
		{ echo "no /usr/share/selinux/devel/Makefile: apt-get install selinux-policy-dev (make deps)" >&2; exit 1; }
	rm -rf $(SELINUX_DIR)/src && mkdir -p $(SELINUX_DIR)/src
	for f in $(SELINUX_SRCS); do \
		$(INSTALL_SUBST) $$f >$(SELINUX_DIR)/src/$${f##*/} || exit 1; \
	done
	$(MAKE) -s -C $(SELINUX_DIR)/src -f /usr/share/selinux/devel/Makefile \
		NAME=default kernelstats.pp >$(SELINUX_DIR)/build.log 2>&1 || \
		{ cat $(SELINUX_DIR)/build.log >&2; exit 1; }
	cp $(SELINUX_DIR)/src/kernelstats.pp $@

install-selinux: selinux
	install -d $(DESTDIR)$(SELINUXSHARE)
	install -m 0644 $(SELINUX_DIR)/kernelstats.pp $(SELINUX_SRC)/kernelstats_bpffs.cil \
		$(DESTDIR)$(SELINUXSHARE)/
