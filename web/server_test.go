package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpusim/gpusim/scenarios"
)

func newServer(t *testing.T, o Options) *httptest.Server {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func runURL(base, scenario string, sets ...string) string {
	q := url.Values{"scenario": {scenario}}
	for _, s := range sets {
		q.Add("set", s)
	}
	return base + "/api/run?" + q.Encode()
}

// get fetches u and returns the status and body.
func get(t *testing.T, u string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

func TestRunOOMWithRegions(t *testing.T) {
	ts := newServer(t, Options{})
	code, body := get(t, runURL(ts.URL, "growth-fragmentation"))
	if code != http.StatusOK {
		t.Fatalf("GET growth-fragmentation = %d %s", code, body)
	}
	var r runResponse
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	if !r.Result.OOM || !strings.Contains(r.Result.OOMMessage, "OOM when allocating tensor") {
		t.Errorf("growth-fragmentation: oom %v message %q, want TF's OOM", r.Result.OOM, r.Result.OOMMessage)
	}
	if r.Regions == nil {
		t.Fatal("growth-fragmentation: no regions at the OOM")
	}
	// The regions are the whole pool; in use and free add up to it, and the largest free
	// chunk is the allocator's statistic at the OOM.
	d := r.Result.Devices[0]
	var pool int64
	for _, g := range r.Regions.Regions {
		pool += g.Size
		var sum int64
		for _, c := range g.Chunks {
			sum += c.Size
		}
		if sum != g.Size {
			t.Errorf("region of %d bytes has chunks adding up to %d", g.Size, sum)
		}
	}
	if pool != d.PoolBytes || r.Regions.InUse+r.Regions.Free != pool {
		t.Errorf("regions add up to %d (in use %d + free %d), want the pool %d", pool, r.Regions.InUse, r.Regions.Free, d.PoolBytes)
	}
	if len(r.Regions.Regions) != len(d.PoolGrowth) {
		t.Errorf("%d regions, want one per pool growth (%d)", len(r.Regions.Regions), len(d.PoolGrowth))
	}
	if r.Regions.LargestFree != d.LargestFreeBlockBytes {
		t.Errorf("largest free chunk %d, want the allocator's %d", r.Regions.LargestFree, d.LargestFreeBlockBytes)
	}
	if len(r.Regions.Occupancy) != 100 {
		t.Errorf("occupancy %q, want RenderOccupancy's 100 characters", r.Regions.Occupancy)
	}
	if r.Command != "gpusim run growth-fragmentation" {
		t.Errorf("command %q", r.Command)
	}
}

// TestRunMatchesCLI checks that an answer's command and YAML give the page's run: the YAML
// parses to the configuration of the built-in with the overrides, and the result is the one
// gpusim run -o json prints (the same report.NewResultJSON of the same train.Run).
func TestRunMatchesCLI(t *testing.T) {
	ts := newServer(t, Options{})
	sets := []string{"input.map.parallel_calls=autotune", "input.prefetch=autotune", "batch=96"}
	code, body := get(t, runURL(ts.URL, "input-bound", sets...))
	if code != http.StatusOK {
		t.Fatalf("GET = %d %s", code, body)
	}
	var r runResponse
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	want := "gpusim run input-bound --set input.map.parallel_calls=autotune --set input.prefetch=autotune --set batch=96"
	if r.Command != want {
		t.Errorf("command = %q, want %q", r.Command, want)
	}
	sc, err := scenarios.Parse("builtin:input-bound", []byte(r.YAML))
	if err != nil {
		t.Fatalf("the YAML does not parse: %v\n%s", err, r.YAML)
	}
	ref, err := scenario("input-bound", sets)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sc.Config, ref.Config) {
		t.Errorf("YAML's configuration differs from the built-in with the overrides")
	}
	if got := r.Settings["input.prefetch"]; got != "autotune" {
		t.Errorf("settings input.prefetch = %q, want autotune", got)
	}
	if r.Result.GlobalBatch != 96 || r.Result.GPUUtilization < 0.5 {
		t.Errorf("batch %d utilization %.2f, want 96 and a fed GPU", r.Result.GlobalBatch, r.Result.GPUUtilization)
	}
	for _, s := range []string{"num_parallel_calls=tf.data.AUTOTUNE", "ds.prefetch(tf.data.AUTOTUNE)", "ds.batch(96)", "tf.keras.applications.ResNet50"} {
		if !strings.Contains(r.TFCode, s) {
			t.Errorf("TF code lacks %q:\n%s", s, r.TFCode)
		}
	}
	// An input-bound run carries its remedies, ranked.
	_, body = get(t, runURL(ts.URL, "input-bound"))
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	if d := r.Result.Diagnosis; d == nil || d.Bound != "input-bound" || len(d.Remedies) < 2 || d.Remedies[0].Gain < d.Remedies[1].Gain {
		t.Errorf("input-bound diagnosis = %+v, want input-bound with remedies best first", d)
	}
}

func TestBadRequests(t *testing.T) {
	ts := newServer(t, Options{})
	for _, tc := range []struct {
		name string
		url  string
		code int
		want string // the message, exactly
	}{
		{"batch 0", runURL(ts.URL, "default", "batch=0"), 400, ""}, // the message: TestSetErrorsReadAsCLI
		{"unknown key", runURL(ts.URL, "default", "batchsize=3"), 400, "--set batchsize=3: batchsize: unknown key (did you mean batch?)"},
		{"TF's ValueError", runURL(ts.URL, "growth-and-limit", "memory.growth_after_limit=true"), 400,
			"--set memory.growth_after_limit=true: memory.growth_after_limit: ValueError: Cannot set memory growth on device when virtual devices configured"},
		{"mode without limit", runURL(ts.URL, "default", "memory.mode=limit"), 400, "--set memory.mode=limit: memory.mode: limit needs memory.limit_mib"},
		{"a file as scenario", runURL(ts.URL, "../go.mod"), 400, ""},
		{"a GPU profile file", runURL(ts.URL, "default", "hardware.gpu=@/etc/hostname"), 400,
			"--set hardware.gpu=@/etc/hostname: hardware.gpu: the page runs built-in GPU profiles only (gpusim list devices); a profile file needs gpusim run"},
		{"a model file", runURL(ts.URL, "default", "model=@/etc/hostname"), 400,
			"--set model=@/etc/hostname: model: the page runs zoo models only (gpusim list models); a model file needs gpusim run"},
		{"unknown parameter", ts.URL + "/api/run?scenario=default&batch=3", 400, `unknown parameter "batch": want scenario and set`},
		{"not an asset", ts.URL + "/go.mod", 404, "/go.mod: not found"},
		{"a path out", ts.URL + "/assets/../server.go", 404, ""},
	} {
		code, body := get(t, tc.url)
		var e struct{ Error string }
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("%s: body %q is not JSON: %v", tc.name, body, err)
			continue
		}
		if code != tc.code || e.Error == "" || (tc.want != "" && e.Error != tc.want) {
			t.Errorf("%s: GET = %d %q, want %d %q", tc.name, code, e.Error, tc.code, tc.want)
		}
	}
	resp, err := http.Post(ts.URL+"/api/run", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/run = %d, want 405", resp.StatusCode)
	}
}

// TestSetErrorsReadAsCLI checks the 400 messages against the scenario checks themselves,
// which gpusim run prints after "gpusim: ".
func TestSetErrorsReadAsCLI(t *testing.T) {
	ts := newServer(t, Options{})
	for _, set := range []string{"batch=-4", "precision=fp16", "hardware.gpu=k80", "input.prefetch=-3", "model=resnet", "hardware.count=0"} {
		_, err := scenario("default", []string{set})
		if err == nil {
			t.Fatalf("scenario(default, %s) succeeded", set)
		}
		code, body := get(t, runURL(ts.URL, "default", set))
		var e struct{ Error string }
		json.Unmarshal(body, &e)
		if code != 400 || e.Error != err.Error() {
			t.Errorf("GET --set %s = %d %q, want 400 %q", set, code, e.Error, err.Error())
		}
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	ts := newServer(t, Options{Timeout: time.Nanosecond})
	code, body := get(t, runURL(ts.URL, "default"))
	if code != http.StatusServiceUnavailable || !strings.Contains(string(body), "longer than the server's limit of 1ns") {
		t.Errorf("GET with a 1ns limit = %d %s, want 503 naming the limit", code, body)
	}
	// A run past the deadline is stopped, not only abandoned: 17 s of work under a 300 ms limit.
	ts = newServer(t, Options{Timeout: 300 * time.Millisecond})
	code, body = get(t, runURL(ts.URL, "input-bound", "steps=20000"))
	if code != http.StatusServiceUnavailable {
		t.Errorf("GET input-bound steps=20000 with a 300ms limit = %d %s, want 503", code, body)
	}
	// A request the page abandons stops its simulation: train.Run returns the context's error.
	long := mustScenario(t, "input-bound", "steps=20000").Config
	sv, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	if res, err := sv.simulate(ctx, long); !errors.Is(err, context.Canceled) {
		t.Errorf("simulate cancelled after 200ms = %v, %v; want context.Canceled", res != nil, err)
	}
}

func mustScenario(t *testing.T, name string, sets ...string) *scenarios.Scenario {
	t.Helper()
	sc, err := scenario(name, sets)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestServesOnlyEmbeddedAssets checks that every embedded file is served with its type and
// that the paths served are exactly those files (and the API).
func TestServesOnlyEmbeddedAssets(t *testing.T) {
	ts := newServer(t, Options{})
	var files []string
	fs.WalkDir(assetFS, "assets", func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			files = append(files, strings.TrimPrefix(p, "assets"))
		}
		return err
	})
	if len(files) < 4 {
		t.Fatalf("embedded assets %v, want the page, its script, charts and style", files)
	}
	types := map[string]string{".html": "text/html", ".js": "javascript", ".css": "text/css"}
	for _, f := range append(files, "/") {
		resp, err := http.Get(ts.URL + f)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ext := ".html"
		if f != "/" {
			ext = f[strings.LastIndex(f, "."):]
		}
		if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), types[ext]) {
			t.Errorf("GET %s = %d %s", f, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q, want default-src 'self'", f, csp)
		}
	}
	// The page loads nothing from elsewhere: no absolute URL in any asset.
	abs := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|url\(\s*["']?https?:|https?://`)
	for _, f := range files {
		data, _ := assetFS.ReadFile("assets" + f)
		if m := abs.Find(data); m != nil {
			t.Errorf("%s refers to %q outside the server", f, m)
		}
	}
}

// pitfallScenarios reads the scenario column of docs/pitfalls.md's table, in order.
func pitfallScenarios(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../docs/pitfalls.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	tick := regexp.MustCompile("`([a-z0-9-]+)`")
	for _, line := range strings.Split(string(data), "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 5 || strings.TrimSpace(cols[1]) == "guide" || strings.HasPrefix(strings.TrimSpace(cols[1]), "---") {
			continue
		}
		for _, m := range tick.FindAllStringSubmatch(cols[3], -1) {
			out = append(out, m[1])
		}
	}
	if len(out) < 10 {
		t.Fatalf("read %d scenarios from docs/pitfalls.md's table: %v", len(out), out)
	}
	return out
}

// TestLessonsFollowPitfalls checks that the page lists every pitfall of docs/pitfalls.md, in
// its order, before the other built-ins, and that every built-in is listed once.
func TestLessonsFollowPitfalls(t *testing.T) {
	want := pitfallScenarios(t)
	ls, err := allLessons()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	names := map[string]int{}
	for _, l := range ls {
		names[l.Name]++
		if l.IsPitfall {
			got = append(got, l.Name)
		}
		if l.Explanation == "" || l.Description == "" || len(l.Settings) != len(controls()) {
			t.Errorf("lesson %s: explanation %q description %q settings %d", l.Name, l.Explanation, l.Description, len(l.Settings))
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the page's pitfalls = %v, want docs/pitfalls.md's %v", got, want)
	}
	for _, n := range scenarios.Names() {
		if names[n] != 1 {
			t.Errorf("built-in %s listed %d times, want once", n, names[n])
		}
	}
	// Each fix is a valid override of its scenario.
	for _, l := range lessons {
		if _, err := scenario(l.Scenario, l.Fix); err != nil {
			t.Errorf("lesson %s: fix %v: %v", l.Scenario, l.Fix, err)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"batch=64":                 "batch=64",
		"processes=[]":             "'processes=[]'",
		"env={TF_X: 1}":            "'env={TF_X: 1}'",
		"cuda_visible_devices=2,3": "cuda_visible_devices=2,3",
		"x='y'":                    `'x='\''y'\'''`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
