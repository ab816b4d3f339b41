package web

// TestBrowser drives the page in real headless Chromium through chromedriver's WebDriver
// protocol (W3C WebDriver, the HTTP API chromedriver serves): it types into the controls and
// clicks as a person would, and reads what the page shows. It needs Debian's chromium and
// chromium-driver (.ci/run installs them); without them it skips and says so.
// GPUSIM_SCREENSHOTS=DIR keeps its screenshots there (else they go to a temp dir).

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// chromiumFlags are the flags the page's tests run Chromium with: headless, no sandbox (CI
// runs as root), and nothing that reaches the network by itself.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
	"--window-size=1400,2000"}

// webDriver is a session of chromedriver's W3C WebDriver HTTP API.
type webDriver struct {
	t    *testing.T
	base string // http://127.0.0.1:PORT/session/ID
}

// elementKey is the W3C WebDriver element reference key.
const elementKey = "element-6066-11e4-a52e-4f735466cecf"

func (d *webDriver) call(method, path string, body any) json.RawMessage {
	d.t.Helper()
	v, err := d.try(method, path, body)
	if err != nil {
		d.t.Fatal(err)
	}
	return v
}

func (d *webDriver) try(method, path string, body any) (json.RawMessage, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, d.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("webdriver %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	var out struct {
		Value json.RawMessage `json:"value"`
	}
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("webdriver %s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("webdriver %s %s: %d %s", method, path, resp.StatusCode, out.Value)
	}
	return out.Value, nil
}

func (d *webDriver) find(css string) string {
	d.t.Helper()
	var ref map[string]string
	if err := json.Unmarshal(d.call("POST", "/element", map[string]string{"using": "css selector", "value": css}), &ref); err != nil {
		d.t.Fatal(err)
	}
	return ref[elementKey]
}

func (d *webDriver) exec(script string, args ...any) json.RawMessage {
	d.t.Helper()
	if args == nil {
		args = []any{}
	}
	return d.call("POST", "/execute/sync", map[string]any{"script": script, "args": args})
}

func (d *webDriver) text(css string) string {
	d.t.Helper()
	var s string
	json.Unmarshal(d.call("GET", "/element/"+d.find(css)+"/text", nil), &s)
	return s
}

func (d *webDriver) click(css string) {
	d.t.Helper()
	d.call("POST", "/element/"+d.find(css)+"/click", map[string]any{})
}

// typeInto clears an input and types text into it, key by key.
func (d *webDriver) typeInto(css, text string) {
	d.t.Helper()
	id := d.find(css)
	d.call("POST", "/element/"+id+"/clear", map[string]any{})
	d.call("POST", "/element/"+id+"/value", map[string]any{"text": text})
}

// typeSlowly clears an input and types text one key per call, about 40 ms apart, and returns
// the longest time between two keys.
func (d *webDriver) typeSlowly(css, text string) time.Duration {
	d.t.Helper()
	id := d.find(css)
	d.call("POST", "/element/"+id+"/clear", map[string]any{})
	var gap time.Duration
	var last time.Time
	for i, r := range text {
		d.call("POST", "/element/"+id+"/value", map[string]any{"text": string(r)})
		if now := time.Now(); i > 0 {
			gap = max(gap, now.Sub(last))
			last = now
		} else {
			last = now
		}
		time.Sleep(40 * time.Millisecond)
	}
	return gap
}

// waitDone waits until side's results answer the overrides want (a substring of its
// data-sets, "" for any) and the side is done or shows an error.
func (d *webDriver) waitDone(side, want string) string {
	d.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var st struct{ State, Sets string }
		json.Unmarshal(d.exec(`const s = document.querySelector("#side-`+side+`"); return {State: s.dataset.state || "", Sets: s.dataset.sets || ""};`), &st)
		if (st.State == "done" && strings.Contains(st.Sets, want)) || st.State == "error" {
			return st.State
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("side %s: state %q sets %q after 60s, want done with %q", side, st.State, st.Sets, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (d *webDriver) screenshot(path string) {
	d.t.Helper()
	var b64 string
	json.Unmarshal(d.call("GET", "/screenshot", nil), &b64)
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		d.t.Fatal(err)
	}
	if len(png) < 20000 {
		d.t.Errorf("screenshot %s is %d bytes: a blank page?", path, len(png))
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		d.t.Fatal(err)
	}
	d.t.Logf("screenshot %s", path)
}

// startBrowser starts chromedriver and a Chromium session, or skips the test.
func startBrowser(t *testing.T) *webDriver {
	t.Helper()
	chromium, err1 := exec.LookPath("chromium")
	driver, err2 := exec.LookPath("chromedriver")
	if err1 != nil || err2 != nil {
		t.Skip("headless Chromium is not installed (Debian: apt-get install chromium chromium-driver; .ci/run does it): the page's browser test is skipped")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(driver, "--port="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	root := fmt.Sprintf("http://127.0.0.1:%d", port)
	for i := 0; ; i++ {
		resp, err := http.Get(root + "/status")
		if err == nil {
			resp.Body.Close()
			break
		}
		if i > 100 {
			t.Fatalf("chromedriver did not start: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	args := append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir())
	d := &webDriver{t: t, base: root}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName":        "chrome",
		"goog:chromeOptions": map[string]any{"binary": chromium, "args": args},
	}}}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	v, err := d.try("POST", "/session", caps)
	if err != nil {
		t.Skipf("chromedriver could not start Chromium here: %v", err)
	}
	if err := json.Unmarshal(v, &sess); err != nil || sess.SessionID == "" {
		t.Fatalf("new session: %s", v)
	}
	d.base = root + "/session/" + sess.SessionID
	t.Cleanup(func() { d.try("DELETE", "", nil) })
	return d
}

func percent(t *testing.T, s string) float64 {
	t.Helper()
	f := strings.Fields(s)
	if len(f) == 0 {
		t.Fatalf("no percentage in %q", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64)
	if err != nil {
		t.Fatalf("percentage %q: %v", s, err)
	}
	return v / 100
}

func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	d := startBrowser(t)
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Log the overrides each /api/run request carries, to see the page's debounce.
	var mu sync.Mutex
	var asked []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/run" {
			mu.Lock()
			asked = append(asked, strings.Join(r.URL.Query()["set"], " "))
			mu.Unlock()
		}
		s.ServeHTTP(w, r)
	}))
	defer ts.Close()
	shots := os.Getenv("GPUSIM_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}

	// Load the page: the default scenario (ResNet-50, one A100-40GB) trains.
	d.call("POST", "/url", map[string]string{"url": ts.URL + "/?scenario=default"})
	if st := d.waitDone("a", ""); st != "done" {
		t.Fatalf("default: %s: %s", st, d.text("#side-a .error"))
	}
	if got := d.text("#side-a .metric-result td"); got != "ok" {
		t.Fatalf("default: result %q, want ok", got)
	}

	// Raise the batch, typing into the field, until TF runs out of memory.
	oomAt := 0
	var gap time.Duration
	for _, b := range []int{128, 256, 512, 1024} {
		gap = d.typeSlowly(`#side-a [name="batch"]`, strconv.Itoa(b))
		d.waitDone("a", "batch="+strconv.Itoa(b)+`"`)
		if d.text("#side-a .metric-result td") == "OOM" {
			oomAt = b
			break
		}
	}
	if oomAt == 0 {
		t.Fatal("no OOM up to batch 1024 on an A100-40GB")
	}
	// Typing "512" key by key, 40 ms apart as a quick typist, asked the server once: "5" and
	// "51" were debounced away (checked when no two keys were further apart than the page's
	// 250 ms: on a loaded machine a slow WebDriver call is a real pause).
	mu.Lock()
	for _, a := range asked {
		if gap >= 200*time.Millisecond {
			t.Logf("keys up to %s apart: debounce not checked", gap)
			break
		}
		if p := strconv.Itoa(oomAt); a == "batch="+p[:1] || a == "batch="+p[:2] {
			t.Errorf("the page asked for %q while the batch was being typed: no debounce", a)
		}
	}
	mu.Unlock()
	msg := d.text("#side-a .oom-message")
	if !strings.Contains(msg, "OOM when allocating tensor with shape[") {
		t.Errorf("batch %d: OOM message %q, want TF's", oomAt, msg)
	}
	var charts struct{ Paths, Marks, Regions int }
	json.Unmarshal(d.exec(`const q = s => document.querySelectorAll(s).length;
		return {Paths: q("#side-a .chart-memory-run svg path"), Marks: q("#side-a .chart-memory-run svg path.mark"), Regions: q("#side-a .chart-regions svg rect")};`), &charts)
	if charts.Paths < 2 || charts.Marks != 1 {
		t.Errorf("batch %d: memory chart has %d paths and %d OOM marks, want the lines and one mark", oomAt, charts.Paths, charts.Marks)
	}
	if charts.Regions == 0 {
		t.Errorf("batch %d: no allocator regions drawn at the OOM", oomAt)
	}
	d.exec(`window.scrollTo(0, 0);`)
	d.screenshot(filepath.Join(shots, "1-oom.png"))
	t.Logf("OOM at batch %d: %s", oomAt, msg)

	// The command and the YAML the copy buttons copy are the run's.
	if got, want := d.text("#side-a .command"), "gpusim run default --set batch="+strconv.Itoa(oomAt); got != want {
		t.Errorf("command shown %q, want %q", got, want)
	}
	d.click("#side-a .copy-command")
	deadline := time.Now().Add(10 * time.Second)
	for d.text("#copied") != "copied the gpusim command" {
		if time.Now().After(deadline) {
			t.Fatalf("copy as gpusim command: the page says %q", d.text("#copied"))
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The URL carries the settings: opened afresh it shows the same run.
	var href string
	json.Unmarshal(d.exec(`return location.href;`), &href)
	if !strings.Contains(href, "a=batch%3D"+strconv.Itoa(oomAt)) {
		t.Errorf("URL %s does not encode batch=%d", href, oomAt)
	}
	d.call("POST", "/url", map[string]string{"url": href})
	d.waitDone("a", "batch="+strconv.Itoa(oomAt))
	var batch string
	json.Unmarshal(d.exec(`return document.querySelector('#side-a [name="batch"]').value;`), &batch)
	if batch != strconv.Itoa(oomAt) || d.text("#side-a .metric-result td") != "OOM" {
		t.Errorf("the shared URL shows batch %q, result %q; want %d and OOM", batch, d.text("#side-a .metric-result td"), oomAt)
	}

	// The starving GPU (guide 6.1): parallel map first, then switch prefetch on and watch
	// utilization rise; setting B keeps prefetch off, side by side.
	d.click(`.lesson-link[data-scenario="input-bound"]`)
	d.waitDone("a", "")
	u0 := percent(t, d.text("#side-a .metric-util td"))
	d.click(`#side-a [name="input.map.parallel_calls"] option[value="autotune"]`)
	d.waitDone("a", "input.map.parallel_calls=autotune")
	u1 := percent(t, d.text("#side-a .metric-util td"))
	d.click("#compare")
	d.waitDone("b", "input.map.parallel_calls=autotune")
	d.click(`#side-a [name="input.prefetch"] option[value="autotune"]`)
	d.waitDone("a", "input.prefetch=autotune")
	u2 := percent(t, d.text("#side-a .metric-util td"))
	ub := percent(t, d.text("#side-b .metric-util td"))
	t.Logf("input-bound utilization: %.1f%% as is, %.1f%% with a parallel map, %.1f%% with prefetch too (B without prefetch: %.1f%%)", 100*u0, 100*u1, 100*u2, 100*ub)
	if !(u2 > u1+0.1 && u1 > u0 && ub == u1) {
		t.Errorf("utilization %.3f -> %.3f (parallel map) -> %.3f (prefetch), B %.3f: want each step to raise it, prefetch by 10 points", u0, u1, u2, ub)
	}
	var util int
	json.Unmarshal(d.exec(`return document.querySelectorAll("#side-a .chart-util svg path").length;`), &util)
	if util == 0 {
		t.Error("no utilization chart")
	}
	json.Unmarshal(d.exec(`return location.search;`), &href)
	for _, w := range []string{"scenario=input-bound", "compare=1", "a=input.prefetch%3Dautotune", "b=input.map.parallel_calls%3Dautotune"} {
		if !strings.Contains(href, w) {
			t.Errorf("side-by-side URL %s lacks %s", href, w)
		}
	}
	d.exec(`window.scrollTo(0, 0);`)
	d.screenshot(filepath.Join(shots, "2-prefetch-side-by-side.png"))

	// A bad value reads as the CLI's error.
	d.typeInto(`#side-a [name="accumulation_steps"]`, "0")
	if st := d.waitDone("a", "\x00"); st != "error" {
		t.Errorf("accumulation_steps=0: state %s, want an error", st)
	}
	var sets []string
	json.Unmarshal(d.exec(`return new URLSearchParams(location.search).getAll("a");`), &sets)
	_, cliErr := scenario("input-bound", sets)
	if cliErr == nil {
		t.Fatalf("scenario(input-bound, %v) succeeded", sets)
	}
	if got, want := d.text("#side-a .error"), cliErr.Error(); got != want || !strings.HasPrefix(got, "--set accumulation_steps=0: accumulation_steps: ") {
		t.Errorf("accumulation_steps=0: page says %q, want %q", got, want)
	}

	// Every pitfall of docs/pitfalls.md is on the page and runs from it.
	var links []string
	json.Unmarshal(d.exec(`return [...document.querySelectorAll("#pitfall-list .lesson-link")].map(a => a.dataset.scenario);`), &links)
	want := pitfallScenarios(t)
	if strings.Join(links, " ") != strings.Join(want, " ") {
		t.Errorf("the page's pitfalls %v, want docs/pitfalls.md's %v", links, want)
	}
	for _, name := range links {
		d.click(`.lesson-link[data-scenario="` + name + `"]`)
		d.waitDone("a", "[]")
		if d.text("#lesson .scenario-name") != name {
			t.Errorf("%s: the lesson shown is %q", name, d.text("#lesson .scenario-name"))
		}
		if r := d.text("#side-a .metric-result td"); r != "ok" && r != "OOM" {
			t.Errorf("%s: result %q", name, r)
		}
		if !strings.Contains(d.text("#side-a .tf-code pre"), "import tensorflow as tf") {
			t.Errorf("%s: no TF program", name)
		}
	}
}

// resize sets the page's viewport to w x h CSS pixels (the window's size less what its frame
// takes, measured) and returns the viewport it got.
func (d *webDriver) resize(w, h int) (int, int) {
	d.t.Helper()
	var v struct{ W, H, OW, OH int }
	ow, oh := w, h
	// The window takes its new size asynchronously: ask, then read until it has it.
	for try := 0; try < 20; try++ {
		d.call("POST", "/window/rect", map[string]int{"width": ow, "height": oh})
		time.Sleep(100 * time.Millisecond)
		json.Unmarshal(d.exec(`return {W: innerWidth, H: innerHeight, OW: outerWidth, OH: outerHeight};`), &v)
		if v.W == w && v.H == h {
			break
		}
		ow, oh = w+v.OW-v.W, h+v.OH-v.H
	}
	return v.W, v.H
}

// open loads the page with query q and waits for the sides it runs.
func (d *webDriver) open(base, q string, sides ...string) {
	d.t.Helper()
	d.call("POST", "/url", map[string]string{"url": base + "/?" + q})
	for _, s := range sides {
		if st := d.waitDone(s, ""); st != "done" {
			d.t.Fatalf("%s: side %s: %s", q, s, d.text("#side-"+s+" .error"))
		}
	}
}

// jsValue runs script and decodes what it returns into v.
func (d *webDriver) jsValue(v any, script string, args ...any) {
	d.t.Helper()
	if err := json.Unmarshal(d.exec(script, args...), v); err != nil {
		d.t.Fatalf("script result: %v", err)
	}
}

// TestBrowserWorkshop checks, at a projector's 1024x768 and at 1400x1000, what the page draws
// for the lessons it tells in pictures: the Jupyter kernel's share of the card on the memory
// chart with the OOM on the curve; the allocator's regions to scale with the waste inside
// chunks; the XLA lesson's run throughput and compile time; compare mode's shared axes,
// change row and usable remedies; the optimizer, strategy and processes controls; the plan
// panel's ranking and its top plan tried as B; and that a result is above the fold. GPUSIM_SCREENSHOTS=DIR keeps the screenshots (workshop-WxH-*.png).
func TestBrowserWorkshop(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	d := startBrowser(t)
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	shots := os.Getenv("GPUSIM_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, size := range [][2]int{{1024, 768}, {1400, 1000}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			d.t = t
			w, h := d.resize(size[0], size[1])
			if w != size[0] || h != size[1] {
				t.Fatalf("viewport %dx%d, want %dx%d", w, h, size[0], size[1])
			}
			shot := func(name string) {
				d.exec(`window.scrollTo(0, 0);`)
				d.screenshot(filepath.Join(shots, fmt.Sprintf("workshop-%dx%d-%s.png", w, h, name)))
			}
			checkJupyter(t, d, ts.URL, h)
			shot("jupyter")
			checkRegions(t, d, ts.URL)
			checkXLA(t, d, ts.URL, h)
			shot("xla-compare")
			checkRemedies(t, d, ts.URL, w, h)
			shot("input-bound-compare")
			checkControls(t, d, ts.URL)
			checkIntervals(t, d, ts.URL)
			checkPlan(t, d, ts.URL)
			d.click("header .to-plan") // the panel, under both sides
			d.screenshot(filepath.Join(shots, fmt.Sprintf("workshop-%dx%d-plan.png", w, h)))
		})
	}
	d.t = t
}

// aboveFold checks that css's element has its top and bottom within the first screen.
func aboveFold(t *testing.T, d *webDriver, css string, h int) {
	t.Helper()
	var r struct{ Top, Bottom float64 }
	d.exec(`window.scrollTo(0, 0);`)
	d.jsValue(&r, `const b = document.querySelector(arguments[0]).getBoundingClientRect(); return {Top: b.top, Bottom: b.bottom};`, css)
	if r.Top < 0 || r.Bottom > float64(h) || r.Bottom <= r.Top {
		t.Errorf("%s spans y %.0f..%.0f: not above the fold of a %d-pixel screen", css, r.Top, r.Bottom, h)
	}
}

// checkJupyter opens the Jupyter lesson: its kernel's pool is a band on the memory chart, as
// tall as its share of the card, and the OOM cross sits on the end of the in-use curve.
func checkJupyter(t *testing.T, d *webDriver, base string, h int) {
	d.open(base, "scenario=jupyter-second-process", "a")
	aboveFold(t, d, "#side-a .headline .h-result", h)
	if got := d.text("#side-a .h-result b"); got != "OOM in step 1" {
		t.Errorf("jupyter: headline result %q, want OOM in step 1", got)
	}
	var c struct {
		Band, Card, YMax, PlotH, BandH, MarkX, MarkY, EndX, EndY float64
		Name                                                     string
	}
	d.jsValue(&c, `const svg = document.querySelector("#side-a .chart-memory-run svg");
		const band = svg.querySelector("rect.band"), mark = svg.querySelector("path.mark");
		const line = svg.querySelector("path[fill=none]"), end = line.getPointAtLength(line.getTotalLength());
		const grid = [...svg.querySelectorAll("line.axis")][1];
		const body = document.querySelector("#side-a").dataset;
		return {Name: band ? band.querySelector("title").textContent : "", BandH: band ? +band.getAttribute("height") : 0,
			YMax: +svg.dataset.yMax, PlotH: +grid.getAttribute("y2") - +grid.getAttribute("y1"),
			MarkX: +mark.dataset.x, MarkY: +mark.dataset.y, EndX: end.x, EndY: end.y};`)
	r := fetchRun(t, base, "jupyter-second-process")
	share := float64(r.Shares[0].Bytes)
	if !strings.HasPrefix(c.Name, "jupyter's pool") {
		t.Errorf("jupyter: the memory chart's band is %q, want the kernel's pool", c.Name)
	}
	if want := share / c.YMax * c.PlotH; math.Abs(c.BandH-want) > 1 {
		t.Errorf("jupyter: band %.1f units tall, want %.1f (%.0f of %.0f bytes on a %.0f-unit axis)", c.BandH, want, share, c.YMax, c.PlotH)
	}
	if math.Abs(c.MarkX-c.EndX) > 0.5 || math.Abs(c.MarkY-c.EndY) > 0.5 {
		t.Errorf("jupyter: OOM mark at (%.1f, %.1f), the in-use curve ends at (%.1f, %.1f)", c.MarkX, c.MarkY, c.EndX, c.EndY)
	}
	// The card as nvidia-smi counts it, process by process: the parts add up to the card.
	var card struct {
		Title string
		Parts []float64
	}
	d.jsValue(&card, `const svg = document.querySelector("#side-a .chart-card svg");
		return {Title: svg.querySelector("title").textContent, Parts: [...svg.querySelectorAll("rect[y='26']")].map(r => +r.getAttribute("width"))};`)
	sum := 0.0
	for _, p := range card.Parts {
		sum += p
	}
	if len(card.Parts) != 4 || math.Abs(sum-540) > 0.5 || card.Parts[0] < 0.85*540 {
		t.Errorf("jupyter: card bar %q in parts %v (sum %.1f), want the kernel's pool, this process's, contexts and free across the 540-unit bar", card.Title, card.Parts, sum)
	}
	var notes string
	d.jsValue(&notes, `return [...document.querySelectorAll("#side-a .notes li")].map(l => l.textContent).join("\n");`)
	if strings.Contains(notes, "jupyter holds") {
		t.Errorf("jupyter: the kernel's share is still a note: %s", notes)
	}
}

// checkRegions opens growth-fragmentation: each region's bar is as long as the region against
// the largest, its parts add up to it, and the waste inside chunks is drawn.
func checkRegions(t *testing.T, d *webDriver, base string) {
	d.open(base, "scenario=growth-fragmentation", "a")
	var g struct {
		Sizes, Widths, Parts []float64
		Waste                int
	}
	d.jsValue(&g, `const gs = [...document.querySelectorAll("#side-a .chart-regions g.region")];
		return {Sizes: gs.map(x => +x.dataset.size), Widths: gs.map(x => +x.dataset.width),
			Parts: gs.map(x => [...x.querySelectorAll("rect")].reduce((a, r) => a + +r.getAttribute("width"), 0)),
			Waste: document.querySelectorAll("#side-a .chart-regions rect.waste").length};`)
	if len(g.Sizes) < 2 {
		t.Fatalf("growth-fragmentation: %d region bars", len(g.Sizes))
	}
	big, wide := 0.0, 0.0
	for i := range g.Sizes {
		big, wide = math.Max(big, g.Sizes[i]), math.Max(wide, g.Widths[i])
	}
	for i := range g.Sizes {
		if want := g.Sizes[i] / big * wide; math.Abs(g.Widths[i]-want) > 0.01 {
			t.Errorf("region %d (%.0f bytes) is %.2f units long, want %.2f", i, g.Sizes[i], g.Widths[i], want)
		}
		// Chunks narrower than a pixel are drawn a pixel wide: allow that much per region.
		if math.Abs(g.Parts[i]-g.Widths[i]) > 0.05*wide {
			t.Errorf("region %d: its chunks add up to %.1f units, the region is %.1f", i, g.Parts[i], g.Widths[i])
		}
	}
	if g.Waste == 0 {
		t.Error("growth-fragmentation: no waste inside chunks drawn")
	}
}

// checkXLA opens the XLA lesson with its fix as B: the run's throughput (as gpusim run prints
// it) heads each side, the compile time is drawn, the two sides share their time axis and
// the change row says what B changed.
func checkXLA(t *testing.T, d *webDriver, base string, h int) {
	d.open(base, "scenario=xla-recompile", "a")
	d.click("#lesson .show-fix")
	d.waitDone("b", "xla_distinct_shapes=1")
	r := fetchRun(t, base, "xla-recompile")
	want := fmt.Sprintf("%.4g samples/s", r.RunThroughputSamplesPerS)
	if got := d.text("#side-a .h-throughput b"); got != want {
		t.Errorf("xla-recompile: headline throughput %q, want the run's %q (median step: %.4g/s)", got, want, r.Result.ThroughputSamplesPerS)
	}
	if got := d.text("#side-a .metric-run-throughput td"); !strings.HasPrefix(got, want) {
		t.Errorf("xla-recompile: run throughput row %q, want %q first", got, want)
	}
	var f struct {
		Compile, Steps int
		XA, XB         float64
		Change         string
	}
	d.jsValue(&f, `const q = s => document.querySelectorAll(s).length, x = s => +document.querySelector(s).dataset.xMax;
		return {Compile: q("#side-a .chart-compile svg rect"), Steps: q("#side-a .chart-steps svg path"),
			XA: x("#side-a .chart-memory-run svg"), XB: x("#side-b .chart-memory-run svg"),
			Change: document.querySelector("#change-row").textContent};`)
	if f.Compile == 0 || f.Steps == 0 {
		t.Errorf("xla-recompile: compile chart %d rects, step chart %d paths: want the compile time drawn", f.Compile, f.Steps)
	}
	// B's run (one compile) is a seventh of A's: on one axis both end where A's ends.
	if f.XA != f.XB || f.XB < 0.9*r.Result.SimulatedTimeS {
		t.Errorf("xla-recompile: memory charts end at %.2f s (A) and %.2f s (B), want one axis over A's %.2f s run", f.XA, f.XB, r.Result.SimulatedTimeS)
	}
	for _, w := range []string{"B against A:", "throughput (run) " + fmt.Sprintf("%.4g/s", r.RunThroughputSamplesPerS) + " → ", "XLA compile"} {
		if !strings.Contains(f.Change, w) {
			t.Errorf("change row %q lacks %q", f.Change, w)
		}
	}
	aboveFold(t, d, "#change-row", h)
	aboveFold(t, d, "#side-b .headline", h)
}

// checkRemedies opens input-bound in compare mode: the remedies table fits its side, every
// "try as B" button is on the screen's width, and one runs its change as B.
func checkRemedies(t *testing.T, d *webDriver, base string, w, h int) {
	d.open(base, "scenario=input-bound&compare=1", "a", "b")
	var tb struct {
		Buttons                     int
		SideRight, TableRight, MaxR float64
		Hidden                      int
	}
	d.jsValue(&tb, `const side = document.querySelector("#side-a"), t = side.querySelector("table.remedies");
		const bs = [...t.querySelectorAll("button.apply-remedy")];
		return {Buttons: bs.length, SideRight: side.getBoundingClientRect().right, TableRight: t.getBoundingClientRect().right,
			MaxR: Math.max(...bs.map(b => b.getBoundingClientRect().right)),
			Hidden: bs.filter(b => { const r = b.getBoundingClientRect(); return r.width === 0 || document.elementFromPoint(r.left + r.width / 2, Math.min(r.top + r.height / 2, innerHeight - 1)) === null; }).length};`)
	if tb.Buttons < 2 {
		t.Fatalf("input-bound: %d remedy buttons", tb.Buttons)
	}
	if tb.TableRight > tb.SideRight+0.5 || tb.MaxR > tb.SideRight || tb.MaxR > float64(w) {
		t.Errorf("input-bound: remedies table ends at x %.0f, buttons at %.0f, side A at %.0f, screen %d: cut off", tb.TableRight, tb.MaxR, tb.SideRight, w)
	}
	if got := d.text("#side-a .apply-remedy"); got != "try as B" {
		t.Errorf("remedy button says %q", got)
	}
	r := fetchRun(t, base, "input-bound")
	best := r.Result.Diagnosis.Remedies[0].Set
	d.click("#side-a .apply-remedy")
	d.waitDone("b", best[len(best)-1])
	var sets []string
	d.jsValue(&sets, `return new URLSearchParams(location.search).getAll("b").sort();`)
	best = append([]string(nil), best...)
	sort.Strings(best)
	if strings.Join(sets, " ") != strings.Join(best, " ") {
		t.Errorf("try as B: B runs %v, want the best remedy %v", sets, best)
	}
	aboveFold(t, d, "#change-row .chg-throughput", h)
}

// checkIntervals checks that the page shows each figure's 80% prediction interval beside it,
// the ends the server's JSON carries, and says what 80% means; an OOM shows none.
func checkIntervals(t *testing.T, d *webDriver, base string) {
	d.open(base, "scenario=default", "a")
	r := fetchRun(t, base, "default")
	tp, st, pk := r.Result.ThroughputSamplesPerSInterval, r.Result.StepTimeSInterval, r.Result.Devices[0].PeakBytesInUseInterval
	if tp == nil || st == nil || pk == nil {
		t.Fatalf("default: the answer carries no interval (step %v, throughput %v, peak %v)", st, tp, pk)
	}
	// "646 samples/s (80%: 573–778)": thousands with commas, the ends rounded as the figure.
	tpText := d.text("#side-a .metric-throughput td")
	want := fmt.Sprintf("(80%%: %s–%s)", commas(tp[0]), commas(tp[1]))
	if !strings.HasSuffix(tpText, want) {
		t.Errorf("default: throughput %q, want it to end %q", tpText, want)
	}
	for _, c := range []struct{ css, want string }{
		{".metric-step td", fmt.Sprintf("(80%%: %.4g–%.4g ms)", 1e3*st[0], 1e3*st[1])},
		{".metric-peak td", fmt.Sprintf("(80%%: %.4g–%.4g GiB)", float64(pk[0])/(1<<30), float64(pk[1])/(1<<30))},
		{".interval-note td", "80% of the validation runs like this one (" + r.Result.IntervalBasis + ")"},
	} {
		if got := d.text("#side-a " + c.css); !strings.Contains(got, c.want) {
			t.Errorf("default: %s %q, want it to hold %q", c.css, got, c.want)
		}
	}
	d.open(base, "scenario=default&a=batch%3D1024", "a")
	if got := d.text("#side-a .metric-result td"); got != "OOM" {
		t.Fatalf("batch 1024: result %q, want OOM", got)
	}
	if got := d.text("#side-a .summary"); strings.Contains(got, "80%") {
		t.Errorf("batch 1024 (OOM): the summary shows an interval: %q", got)
	}
}

// commas is x rounded to a whole number with thousands separated, as the page writes a rate.
func commas(x float64) string {
	s := strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// checkControls changes the optimizer, the strategy and the other processes from the page.
func checkControls(t *testing.T, d *webDriver, base string) {
	d.open(base, "scenario=default", "a")
	peak := func() string { return d.text("#side-a .metric-peak td") }
	sgd := peak()
	d.click(`#side-a [name="optimizer"] option[value="adam"]`)
	d.waitDone("a", "optimizer=adam")
	if adam := peak(); adam == sgd {
		t.Errorf("optimizer adam: peak memory %q, as with sgd: its two slots per weight are not counted", adam)
	}
	d.typeInto(`#side-a [name="hardware.count"]`, "2")
	d.waitDone("a", "hardware.count=2")
	d.click(`#side-a [name="strategy.name"] option[value="mirrored"]`)
	d.waitDone("a", "strategy.name=mirrored")
	if got := d.text("#side-a .summary tr:nth-child(3) td"); !strings.Contains(got, "on 2 x") {
		t.Errorf("strategy mirrored on 2 GPUs: %q, want 2 replicas", got)
	}
	d.click(`#side-a [name="processes"] option[value="` + processPresets[1][0] + `"]`)
	d.waitDone("a", "processes=")
	var band string
	d.jsValue(&band, `const b = document.querySelector("#side-a .chart-memory-run rect.band title"); return b ? b.textContent : "";`)
	if !strings.HasPrefix(band, "jupyter's pool") {
		t.Errorf("processes: Jupyter kernel chosen, memory chart band %q", band)
	}
}

// checkPlan searches input-bound's plans for throughput from the plan panel: the table shows
// the scenario and the plans /api/plan ranks, with their figures and intervals, a diagnosis
// line for each, the top plan's TF code, and "try plan 1 as B" runs its change as B.
func checkPlan(t *testing.T, d *webDriver, base string) {
	d.open(base, "scenario=input-bound", "a")
	d.click(`#plan [name="goal"] option[value="throughput"]`)
	d.click("#plan .plan-search")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var st string
		d.jsValue(&st, `return document.querySelector("#plan").dataset.state || "";`)
		if st == "done" {
			break
		}
		if st == "error" || time.Now().After(deadline) {
			t.Fatalf("plan panel: state %q: %s", st, d.text("#plan"))
		}
	}
	r := getPlan(t, planURL(base, url.Values{"scenario": {"input-bound"}, "goal": {"throughput"}}))
	var p struct {
		Rows     [][]string
		Why      []string
		Code     string
		Command  string
		TryShown bool
	}
	d.jsValue(&p, `const q = s => document.querySelector("#plan " + s);
		return {Rows: [...document.querySelectorAll("#plan .plan-table tr")].slice(1).map(r => [...r.cells].map(c => c.textContent)),
			Why: [...document.querySelectorAll("#plan .plan-why li")].map(l => l.textContent),
			Code: q(".plan-tf-code pre").textContent, Command: q(".plan-command").textContent, TryShown: !!q(".plan-try")};`)
	if p.Command != r.Command {
		t.Errorf("plan panel command %q, want %q", p.Command, r.Command)
	}
	if len(p.Rows) != len(r.Plans)+1 || len(p.Why) != len(p.Rows) {
		t.Fatalf("plan panel: %d rows and %d diagnosis lines for %d plans and now", len(p.Rows), len(p.Why), len(r.Plans))
	}
	// Columns: rank, batch, accum, precision, XLA, TF32, memory, parallel calls, prefetch,
	// then samples/s and its interval.
	for i, pl := range append([]planEntry{r.Current}, r.Plans...) {
		row := p.Rows[i]
		iv := "no interval yet"
		if v := pl.ThroughputInterval; v != nil {
			iv = fmt.Sprintf("%.0f-%.0f", v[0], v[1])
		}
		if row[9] != fmt.Sprintf("%.0f", pl.Throughput) || row[10] != iv || !strings.Contains(p.Why[i], pl.Bound+": "+pl.Why) {
			t.Errorf("plan panel row %d: %v, %q; want %.0f samples/s (%s) and %s: %s", i, row, p.Why[i], pl.Throughput, iv, pl.Bound, pl.Why)
		}
	}
	if p.Code != r.Plans[0].TFCode || !p.TryShown {
		t.Errorf("plan panel: top plan's TF code shown %v, try button %v", p.Code == r.Plans[0].TFCode, p.TryShown)
	}
	d.click("#plan .plan-try")
	top := r.Plans[0].Set
	d.waitDone("b", top[len(top)-1])
	var sets []string
	d.jsValue(&sets, `return new URLSearchParams(location.search).getAll("b").sort();`)
	want := append([]string(nil), top...)
	sort.Strings(want)
	if strings.Join(sets, " ") != strings.Join(want, " ") {
		t.Errorf("try plan 1 as B: B runs %v, want %v", sets, want)
	}
}
