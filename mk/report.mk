# kstats report and kstats atoms --heatmap (cli/report.c, cli/atoms_*.c):
# log2 and log for the colour scale.  Test-only dependency: Debian's
# chromium, the browser tests/sh/test_report.sh reads the page back with
# (headless --dump-dom and --screenshot); python3 checks what it returns.
LDLIBS += -lm
DEB_PKGS += chromium python3

# The README's picture (doc/report.png): a page of made-up atoms
# (tests/sh/report_atoms.sh) rendered and screenshot by headless chromium.
.PHONY: report-screenshot
report-screenshot: all
	tests/sh/report_atoms.sh --screenshot $(BUILD) doc/report.png
