# make deb: kernelstats_<version>_<arch>.deb in $(DEB_DIR), built by
# dpkg-buildpackage from a copy of the tree (debian/ is the packaging; the
# version is debian/changelog's, the one place it is kept).
DEB_DIR    ?= $(BUILD)/deb
DEB_VERSION = $(shell dpkg-parsechangelog -S Version 2>/dev/null)
DEB_ARCH    = $(shell dpkg --print-architecture)
DEB_FILE    = $(DEB_DIR)/kernelstats_$(DEB_VERSION)_$(DEB_ARCH).deb

.PHONY: deb
deb: deps-deb
	rm -rf $(DEB_DIR)/src
	mkdir -p $(DEB_DIR)/src
	{ git ls-files -co --exclude-standard 2>/dev/null || \
	  find . -path ./build -prune -o -type f -print; } | \
		tar -cf - -T - | tar -xf - -C $(DEB_DIR)/src
	cd $(DEB_DIR)/src && dpkg-buildpackage -us -uc -b -jauto
	@echo "built $(DEB_FILE)"
