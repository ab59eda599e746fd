# kstats report and kstats atoms --heatmap (puller/days.c, heatmap.c, page.c):
# log2 and log for the colour scale.  Debian's chromium, which
# tests/sh/test_report.sh reads the page back with, is in TEST_PKGS.
LDLIBS += -lm

# The README's picture, doc/report.png: made-up atoms (tests/lib/report_atoms.py)
# rendered by kstats report and screenshot by headless chromium.
REPORT_DEMO := $(BUILD)/report-demo
CHROMIUM_HEADLESS := chromium --headless --no-sandbox --disable-gpu --disable-quic \
	--no-first-run --disable-background-networking --disable-component-update --disable-sync

.PHONY: report-screenshot
report-screenshot: all
	rm -rf $(REPORT_DEMO)
	python3 tests/lib/report_atoms.py gen $(REPORT_DEMO)/atoms --days 60 --keys 2 --metrics 2 --gap 41
	$(BUILD)/kstats report --out-dir $(REPORT_DEMO)/atoms -o $(REPORT_DEMO)/page.html
	$(CHROMIUM_HEADLESS) --user-data-dir=$(REPORT_DEMO)/profile --window-size=1200,820 \
		--screenshot=$(CURDIR)/doc/report.png file://$(abspath $(REPORT_DEMO))/page.html

.PHONY: bench-report
bench-report: all
	bench/report_page.sh $(BUILD)
