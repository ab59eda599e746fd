# make install [PREFIX=/usr/local] [DESTDIR=]: tools, objects, units, config.
# The group kstats (DESIGN.md "Names") is created with groupadd --system on
# the running system only, i.e. when DESTDIR is empty; packages do it in
# their postinst.
SBINDIR    ?= $(PREFIX)/sbin
BINDIR     ?= $(PREFIX)/bin
BPFDIR     ?= $(PREFIX)/lib/kernelstats/bpf
UNITDIR    ?= $(PREFIX)/lib/systemd/system
INITRCDIR  ?= $(PREFIX)/etc/init
SYSCONFDIR ?= /etc

INSTALL_SUBST = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BPFDIR@|$(BPFDIR)|g'

.PHONY: install
install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(BPFDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(INITRCDIR) $(DESTDIR)$(SYSCONFDIR)/kernelstats
	install -m 0755 $(BUILD)/kstats-loader $(DESTDIR)$(SBINDIR)/kstats-loader
	install -m 0755 $(BUILD)/kstats $(DESTDIR)$(BINDIR)/kstats
	install -m 0644 $(BPF_OBJS) $(DESTDIR)$(BPFDIR)/
	$(INSTALL_SUBST) dist/systemd/kernelstats-loader.service \
		> $(DESTDIR)$(UNITDIR)/kernelstats-loader.service
	$(INSTALL_SUBST) dist/android/kernelstats.rc > $(DESTDIR)$(INITRCDIR)/kernelstats.rc
	chmod 0644 $(DESTDIR)$(UNITDIR)/kernelstats-loader.service \
		$(DESTDIR)$(INITRCDIR)/kernelstats.rc
	test -e $(DESTDIR)$(SYSCONFDIR)/kernelstats/loader.conf || \
		install -m 0644 dist/loader.conf $(DESTDIR)$(SYSCONFDIR)/kernelstats/loader.conf
	@if [ -z "$(DESTDIR)" ] && ! getent group kstats >/dev/null; then \
		groupadd --system kstats && echo "created group kstats"; \
	fi
