package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpusim/gpusim/train/traintest"
)

func TestWriteHTML(t *testing.T) {
	runs := seriesRuns()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, runs, HTMLOptions{Command: "gpusim compare --vary memory.mode=preallocate,growth,limit"}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	figs, err := Figures(runs)
	if err != nil {
		t.Fatal(err)
	}
	svgs := regexp.MustCompile(`(?s)<svg.*?</svg>`).FindAllString(page, -1)
	if len(svgs) != len(figs) {
		t.Errorf("page has %d inline SVGs, want %d (one per figure)", len(svgs), len(figs))
	}
	for i, s := range svgs {
		texts := svgTexts(t, strings.NewReader(s))
		if len(texts) == 0 {
			t.Errorf("inline SVG %d has no text", i)
		}
	}
	for _, want := range []string{
		`<table id="comparison">`, "memory.mode=preallocate", "212.3ms", "&#43;1.27%", `class="value oom">OOM`,
		"OOM when allocating tensor with shape[256,64,112,112]", "gpusim compare --vary memory.mode=preallocate,growth,limit",
		`<figure id="memory-memory.mode=growth">`, `<figure id="breakdown">`, `<figure id="sweep-memory.mode">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Self-contained: no scripts, no external style sheets, images or links. The only URLs are
	// the SVG namespaces.
	if strings.Contains(page, "<script") || strings.Contains(page, "<link") || strings.Contains(page, "<img") {
		t.Error("page loads scripts, style sheets or images")
	}
	urls := regexp.MustCompile(`https?://[^"' )]+`).FindAllString(page, -1)
	for _, u := range urls {
		if u != "http://www.w3.org/2000/svg" && u != "http://www.w3.org/1999/xlink" {
			t.Errorf("page refers to %s", u)
		}
	}
}

// chromiumFlags are the flags that let Debian's Chromium run headless here as root, without
// reaching for the network.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
	"--enable-logging=stderr", "--v=0"}

func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (apt-get install chromium to run the browser check)")
	return ""
}

// runChromium runs the browser on a page and returns its stdout and stderr.
func runChromium(t *testing.T, bin string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args = append(append(slicesClone(chromiumFlags), "--user-data-dir="+t.TempDir()), args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// consoleErrors finds JavaScript and page errors in Chromium's log; the browser's own noise
// (D-Bus, GPU, network services the sandboxed machine lacks) is not about the page.
func consoleErrors(log string) []string {
	var errs []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "CONSOLE") && (strings.Contains(l, "Uncaught") || strings.Contains(l, "Error")) ||
			strings.Contains(l, "Failed to load resource") {
			errs = append(errs, l)
		}
	}
	return errs
}

// TestBrowser opens the HTML report in headless Chromium and takes a screenshot, and loads the
// Chrome trace into a page that parses and checks it with the browser's own JSON parser.
// Skipped where Chromium is not installed. BROWSER_CHECK_OUT=dir keeps the screenshot.
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	if d := os.Getenv("BROWSER_CHECK_OUT"); d != "" {
		dir = d
	}
	// Constructed runs: every kind of event, an OOM retry among them.
	runs := seriesRuns()
	browserCheck(t, bin, filepath.Join(dir, "constructed"), runs, &runs[2], []string{"C=", "M=", "X=", "i="})

	// Real runs: the memory-mode comparison of the default scenario (its limit run OOMs after
	// BFC's 10 s retry) and the trace of a real input-bound run (ops, input waits, counters).
	real := memoryModeRuns(t)
	res := simulate(t, traintest.Steps(traintest.InputBound(), 3))
	ib := FromResult("input-bound", nil, res)
	browserCheck(t, bin, filepath.Join(dir, "real"), real, &ib, []string{"C=", "M=", "X="})
	browserCheck(t, bin, filepath.Join(dir, "real-oom"), real, &real[2], []string{"C=", "M=", "X=", "i="})
}

// browserCheck opens the HTML report of runs in Chromium (a screenshot that must not be blank,
// no console errors) and parses traceRun's Chrome trace in a page, which must see the event
// phases want. Files go into dir.
func browserCheck(t *testing.T, bin, dir string, runs []Run, traceRun *Run, want []string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, runs, HTMLOptions{Title: "browser check"}); err != nil {
		t.Fatal(err)
	}
	htmlPath := filepath.Join(dir, "report.html")
	if err := os.WriteFile(htmlPath, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	_, log := runChromium(t, bin, "--screenshot="+shot, "--window-size=1200,2400", "file://"+htmlPath)
	if errs := consoleErrors(log); len(errs) > 0 {
		t.Errorf("browser reported errors on the report:\n%s", strings.Join(errs, "\n"))
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, log)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("screenshot does not decode: %v", err)
	}
	// A rendered page has dark text and coloured lines on white: count non-white pixels.
	b := img.Bounds()
	inked := 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xe000 || g < 0xe000 || bl < 0xe000 {
				inked++
			}
		}
	}
	if total := (b.Dx() / 4) * (b.Dy() / 4); inked < total/100 {
		t.Errorf("screenshot is almost blank: %d of %d sampled pixels inked", inked, total)
	}

	// The trace: the page parses it with JSON.parse, checks every event the way the trace
	// viewers' importer needs it, and writes a verdict into the DOM.
	var trace bytes.Buffer
	if err := WriteTrace(&trace, traceRun, TraceOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "trace.json"), trace.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	check := `<!DOCTYPE html><html><body><pre id="out">not run</pre>
<script type="application/json" id="trace">` + strings.ReplaceAll(trace.String(), "</", `<\/`) + `</script>
<script>
const out = document.getElementById("out");
try {
  const t = JSON.parse(document.getElementById("trace").textContent);
  if (!Array.isArray(t.traceEvents)) throw new Error("no traceEvents array");
  const n = {};
  for (const e of t.traceEvents) {
    if (typeof e.ph !== "string" || typeof e.name !== "string") throw new Error("event without ph/name: " + JSON.stringify(e));
    if (e.ph !== "M" && typeof e.ts !== "number") throw new Error("event without ts: " + JSON.stringify(e));
    if (e.ph === "X" && !(e.dur >= 0)) throw new Error("complete event without dur: " + JSON.stringify(e));
    if (e.ph === "C" && (typeof e.args !== "object" || Object.values(e.args).some(v => typeof v !== "number"))) throw new Error("counter with non-numeric args: " + JSON.stringify(e));
    n[e.ph] = (n[e.ph] || 0) + 1;
  }
  out.textContent = "TRACE OK " + Object.keys(n).sort().map(k => k + "=" + n[k]).join(" ");
} catch (err) {
  out.textContent = "TRACE BAD " + err.message;
}
</script></body></html>`
	checkPath := filepath.Join(dir, "trace-check.html")
	if err := os.WriteFile(checkPath, []byte(check), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, log := runChromium(t, bin, "--dump-dom", "file://"+checkPath)
	m := regexp.MustCompile(`TRACE (OK|BAD)[^<]*`).FindString(dom)
	if !strings.HasPrefix(m, "TRACE OK") {
		t.Errorf("browser verdict on the trace: %q\n%s", m, log)
	}
	for _, want := range want {
		if !strings.Contains(m, want) {
			t.Errorf("browser saw no %s events: %q", strings.TrimSuffix(want, "="), m)
		}
	}
	t.Logf("screenshot %s (%dx%d, %d/%d sampled pixels inked); %s", shot, b.Dx(), b.Dy(), inked, (b.Dx()/4)*(b.Dy()/4), m)
}
