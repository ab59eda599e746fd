# make install [PREFIX=/usr/local] [DESTDIR=] [TEXTFILE_DIR=]: tools, objects,
# units, config.
# The group kstats (doc/design.md "Names") and the system user kstats that runs
# kstats pull are created on the running system only, i.e. when DESTDIR is
# empty; packages do that in their postinst.  So is the tmpfiles.d line
# for bpffs' mode.  The rules for Prometheus go to $(DATADIR)/prometheus.
SBINDIR    ?= $(PREFIX)/sbin
BINDIR     ?= $(PREFIX)/bin
BPFDIR     ?= $(PREFIX)/lib/kernelstats/bpf
UNITDIR    ?= $(PREFIX)/lib/systemd/system
INITRCDIR  ?= $(PREFIX)/etc/init
SYSCONFDIR ?= /etc
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
MANDIR     ?= $(PREFIX)/share/man
DATADIR    ?= $(PREFIX)/share/kernelstats
# Where kernelstats-textfile.service writes kernelstats.prom: node_exporter's
# own textfile directory, Debian's default (doc/fleet-export.md).  kstats
# writes only into a directory of root's; nothing here creates it.
TEXTFILE_DIR ?= /var/lib/prometheus/node-exporter

# dist/ files name the install paths @SBINDIR@, @BINDIR@, @BPFDIR@ and
# @TEXTFILE_DIR@.
INSTALL_SUBST = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' \
		    -e 's|@BPFDIR@|$(BPFDIR)|g' -e 's|@TEXTFILE_DIR@|$(TEXTFILE_DIR)|g' \
		    -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'
UNITS := $(wildcard dist/systemd/*.service dist/systemd/*.timer)
TMPFILES := $(wildcard dist/tmpfiles.d/*.conf)

.PHONY: install
install: all rules
	install -d $(DESTDIR)$(DATADIR)/prometheus
	install -m 0644 $(RULES) $(DESTDIR)$(DATADIR)/prometheus/kernelstats.rules.yml
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(BPFDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(INITRCDIR) $(DESTDIR)$(TMPFILESDIR) \
		$(DESTDIR)$(SYSCONFDIR)/kernelstats $(DESTDIR)$(SYSCONFDIR)/cron.daily \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(DATADIR)/sepolicy
	install -m 0755 $(BUILD)/kstats-loader $(DESTDIR)$(SBINDIR)/kstats-loader
	install -m 0755 $(BUILD)/kstats $(DESTDIR)$(BINDIR)/kstats
	install -m 0644 $(BPF_OBJS) $(DESTDIR)$(BPFDIR)/
	install -m 0644 doc/kstats.1 $(DESTDIR)$(MANDIR)/man1/kstats.1
	install -m 0644 doc/kstats-loader.8 $(DESTDIR)$(MANDIR)/man8/kstats-loader.8
	install -m 0644 $(filter-out sepolicy/refpolicy,$(wildcard sepolicy/*)) $(DESTDIR)$(DATADIR)/sepolicy/
	for u in $(UNITS); do \
		$(INSTALL_SUBST) $$u > $(DESTDIR)$(UNITDIR)/$${u##*/} && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$${u##*/} || exit 1; \
	done
	for t in $(TMPFILES); do \
		$(INSTALL_SUBST) $$t > $(DESTDIR)$(TMPFILESDIR)/$${t##*/} && \
		chmod 0644 $(DESTDIR)$(TMPFILESDIR)/$${t##*/} || exit 1; \
	done
	$(INSTALL_SUBST) dist/android/kernelstats.rc > $(DESTDIR)$(INITRCDIR)/kernelstats.rc
	chmod 0644 $(DESTDIR)$(INITRCDIR)/kernelstats.rc
	$(INSTALL_SUBST) dist/cron.daily/kernelstats > $(DESTDIR)$(SYSCONFDIR)/cron.daily/kernelstats
	chmod 0755 $(DESTDIR)$(SYSCONFDIR)/cron.daily/kernelstats
	test -e $(DESTDIR)$(SYSCONFDIR)/kernelstats/loader.conf || \
		install -m 0644 dist/loader.conf $(DESTDIR)$(SYSCONFDIR)/kernelstats/loader.conf
	test -e $(DESTDIR)$(SYSCONFDIR)/kernelstats/ship.conf || \
		install -m 0644 dist/ship.conf $(DESTDIR)$(SYSCONFDIR)/kernelstats/ship.conf
	@if [ -z "$(DESTDIR)" ]; then \
		getent group kstats >/dev/null || { groupadd --system kstats && \
			echo "created group kstats"; }; \
		getent passwd kstats >/dev/null || { useradd --system --gid kstats \
			--no-create-home --shell /usr/sbin/nologin kstats && \
			echo "created user kstats"; }; \
		! command -v systemd-tmpfiles >/dev/null || \
			systemd-tmpfiles --create $(addprefix $(TMPFILESDIR)/,$(notdir $(TMPFILES))) || \
			echo "warning: systemd-tmpfiles failed: /sys/fs/bpf is not ready for group kstats; see doc/privileges.md"; \
	fi
