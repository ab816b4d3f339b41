#!/usr/bin/env bash
# Opens the HTML report in headless Chromium, takes a screenshot, and loads a Chrome trace into a
# page that parses and checks it in the browser (TestBrowser in html_test.go does the work).
# Usage: report/testdata/browser-check.sh [OUTDIR]   (default: a new temp dir)
# Needs Debian's chromium: apt-get install -y --no-install-recommends chromium
# Without chromium the test is skipped and this script fails, so a check never passes by skipping.
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
cd "$(dirname "$0")/../../.."
command -v chromium >/dev/null || { echo "browser-check: chromium is not installed" >&2; exit 1; }
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
BROWSER_CHECK_OUT="$out" go test ./report/ -run '^TestBrowser$' -count=1 -v
echo "browser-check: in $out/constructed, $out/real (real memory-mode runs, a real input-bound trace) and $out/real-oom: report.png (screenshot), report.html, trace.json"
