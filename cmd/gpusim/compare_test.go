package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/report"
)

// fakePrepare simulates a configuration instantly: throughput is the product of the numeric
// varied values, and "memory.mode=limit" runs out of memory. Later configurations finish first
// so the test sees whether the output order follows the input order.
func fakePrepare(started *atomic.Int32) comparePrepare {
	return func(c compareConfig, _ *analysis.Session) (func(context.Context) (report.Run, error), error) {
		if slices.Contains(c.Sets, "batch=bad") {
			return nil, asUsage(errors.New("--set batch=bad: batch: want an integer"))
		}
		return func(context.Context) (report.Run, error) {
			n := started.Add(1)
			time.Sleep(time.Duration(10-min(n, 10)) * time.Millisecond)
			r := report.Run{Label: c.Label, Params: c.Params}
			if slices.Contains(c.Sets, "memory.mode=limit") {
				r.OOM, r.OOMMessage = true, "OOM when allocating tensor"
			} else {
				r.Metrics = append(r.Metrics, report.RunMetric{Key: report.MetricThroughput, Name: "throughput", Unit: report.UnitSamplesPerSec, Value: float64(len(c.Label))})
			}
			r.Metrics = append(r.Metrics, report.RunMetric{Key: report.MetricPeakInUse, Name: "peak memory in use", Unit: report.UnitBytes, Value: float64(len(c.Sets)) * (1 << 30)})
			r.Memory = []report.MemorySeries{{Device: "GPU:0", Limit: 4 << 30, Points: []report.MemoryPoint{{T: 0, InUse: 1 << 30, Pool: 2 << 30}, {T: 1, InUse: 2 << 30, Pool: 2 << 30}}}}
			r.Breakdown = []report.StepShare{{Category: "forward", Seconds: 0.01}, {Category: "backward", Seconds: 0.02}}
			if strings.Contains(c.Label, "fail") {
				return report.Run{}, asUsage(errors.New("Memory growth cannot differ between GPU devices"))
			}
			return r, nil
		}, nil
	}
}

func runFakeCompare(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	var started atomic.Int32
	err := compareMain(context.Background(), &out, &errb, args, fakePrepare(&started), false)
	return out.String(), errb.String(), err
}

func TestCompareConfigs(t *testing.T) {
	got, err := compareConfigs(nil, []string{"steps=5"}, []string{"batch=32,64", "precision=float32,mixed_float16"})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, c := range got {
		labels = append(labels, c.Label+" "+strings.Join(c.Sets, " "))
	}
	want := []string{
		"batch=32,precision=float32 steps=5 batch=32 precision=float32",
		"batch=32,precision=mixed_float16 steps=5 batch=32 precision=mixed_float16",
		"batch=64,precision=float32 steps=5 batch=64 precision=float32",
		"batch=64,precision=mixed_float16 steps=5 batch=64 precision=mixed_float16",
	}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("compareConfigs (-want +got):\n%s", diff)
	}

	got, err = compareConfigs([]string{"a/x.yaml", "y"}, nil, []string{"cuda_visible_devices=[0,1],[2,3]"})
	if err != nil {
		t.Fatal(err)
	}
	labels = labels[:0]
	for _, c := range got {
		labels = append(labels, c.Label)
	}
	want = []string{"x,cuda_visible_devices=[0,1]", "x,cuda_visible_devices=[2,3]", "y,cuda_visible_devices=[0,1]", "y,cuda_visible_devices=[2,3]"}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("compareConfigs of two scenarios (-want +got):\n%s", diff)
	}
}

func TestCompareBadUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no vary", nil, "one configuration"},
		{"no equals", []string{"--vary", "batch"}, "want KEY=V1,V2"},
		{"empty value", []string{"--vary", "batch=32,,64"}, "empty value"},
		{"unbalanced", []string{"--vary", "cuda_visible_devices=[0,1"}, "unbalanced"},
		{"twice", []string{"--vary", "batch=1,2", "--vary", "batch=3,4"}, "varied twice"},
		{"format", []string{"--vary", "batch=1,2", "-o", "xml"}, "want text, json or csv"},
		{"bad set", []string{"--vary", "batch=1,bad"}, "batch: want an integer"},
		{"unknown flag", []string{"--frobnicate"}, "unknown flag"},
		{"run fails", []string{"--vary", "x=ok,fail"}, "x=fail: Memory growth cannot differ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runFakeCompare(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("compare %q: err = %v, want one containing %q", tt.args, err, tt.want)
			}
			if code := exitCode(err); code != 2 {
				t.Errorf("compare %q: exit code %d, want 2", tt.args, code)
			}
		})
	}
}

func TestCompareOrderAndOutputs(t *testing.T) {
	dir := t.TempDir()
	html := filepath.Join(dir, "new", "r.html") // the folder is created
	args := []string{"--vary", "memory.mode=preallocate,growth,limit", "--vary", "batch=32,64", "-j", "4", "-o", "json", "--plot", filepath.Join(dir, "plots"), "--html", html}
	out, stderr, err := runFakeCompare(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Base    string `json:"base"`
		Configs []struct {
			Label string `json:"label"`
			OOM   bool   `json:"oom"`
		} `json:"configs"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("-o json does not parse: %v\n%s", err, out)
	}
	var labels []string
	for _, c := range got.Configs {
		labels = append(labels, c.Label)
	}
	want := []string{"memory.mode=preallocate,batch=32", "memory.mode=preallocate,batch=64", "memory.mode=growth,batch=32",
		"memory.mode=growth,batch=64", "memory.mode=limit,batch=32", "memory.mode=limit,batch=64"}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("configuration order (-want +got):\n%s", diff)
	}
	if !got.Configs[4].OOM || got.Configs[0].OOM {
		t.Errorf("oom flags = %+v, want only the limit runs", got.Configs)
	}
	// Same input, same output, whatever the scheduling.
	for range 3 {
		again, _, err := runFakeCompare(t, args...)
		if err != nil || again != out {
			t.Fatalf("second run differs (err %v)", err)
		}
	}
	for _, name := range []string{"breakdown.png", "sweep-memory.mode.svg", "sweep-batch.png", "memory-memory.mode=limit_batch=64.png"} {
		p := filepath.Join(dir, "plots", name)
		f, err := os.Open(p)
		if err != nil {
			t.Errorf("--plot did not write %s: %v", name, err)
			continue
		}
		if strings.HasSuffix(name, ".png") {
			if _, err := png.Decode(f); err != nil {
				t.Errorf("%s does not decode: %v", name, err)
			}
		}
		f.Close()
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("<svg")) || !bytes.Contains(page, []byte("memory.mode=limit,batch=64")) {
		t.Error("html report lacks figures or the last configuration")
	}
	if strings.Contains(stderr, "simulating") {
		t.Errorf("progress bar written when not a terminal: %q", stderr)
	}
}

func TestCompareProgress(t *testing.T) {
	var out, errb bytes.Buffer
	var started atomic.Int32
	err := compareMain(context.Background(), &out, &errb, []string{"--vary", "batch=1,2,3", "--progress", "always"}, fakePrepare(&started), false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "simulating") {
		t.Errorf("--progress always: stderr %q has no progress bar", errb.String())
	}
	if strings.Contains(out.String(), "simulating") {
		t.Error("progress bar on stdout")
	}
}

func TestCompareInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	var started atomic.Int32
	err := compareMain(ctx, &out, &errb, []string{"--vary", "batch=1,2,3", "-j", "1"}, fakePrepare(&started), false)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled compare: err = %v, want context.Canceled", err)
	}
	if out.Len() != 0 {
		t.Errorf("cancelled compare printed a table:\n%s", out.String())
	}
}

// TestCompareExamples runs the examples of the usage text through the real scenario loader and
// simulator, with --plot and --html pointed into a temporary folder.
func TestCompareExamples(t *testing.T) {
	dir := t.TempDir()
	var n int
	for _, line := range strings.Split(compareUsage, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "gpusim compare ") {
			continue
		}
		n++
		line, _, _ = strings.Cut(line, "#")
		line, redirect, _ := strings.Cut(line, ">")
		args := strings.Fields(strings.TrimPrefix(line, "gpusim compare "))
		if slices.Contains(args, "SCENARIO.yaml") || slices.Contains(args, "[SCENARIO]") || slices.Contains(args, "...") {
			continue // the synopsis, not an example
		}
		for i := range args {
			if i > 0 && (args[i-1] == "--plot" || args[i-1] == "--html") || strings.HasSuffix(args[i], ".json") {
				args[i] = filepath.Join(dir, args[i])
			}
		}
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			if err := compareMain(context.Background(), &out, &errb, args, prepareScenario, false); err != nil {
				t.Fatalf("gpusim compare %s: %v\n%s", strings.Join(args, " "), err, errb.String())
			}
			if redirect = strings.TrimSpace(redirect); redirect != "" {
				if !strings.Contains(out.String(), comparePartFormat) {
					t.Errorf("a shard wrote no part:\n%s", out.String())
				}
				if err := os.WriteFile(filepath.Join(dir, redirect), out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !strings.Contains(out.String(), "result") && !strings.Contains(out.String(), "configuration,") {
				t.Errorf("no table:\n%s", out.String())
			}
		})
	}
	if n < 3 {
		t.Errorf("found %d examples in the usage text, want at least 3", n)
	}
	for _, p := range []string{"plots/breakdown.png", "plots/sweep-hardware.count.svg", "report.html"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("example output missing: %v", err)
		}
	}
}

// TestCompareMemoryModesCLI runs issue 9's headline command on the built-in memory-modes
// scenario (a 6 GiB memory.limit_mib that only the limit mode applies): the table against a
// golden file, the three pools (preallocate ~all memory, growth what the step needs, limit
// the cap), and the figures it writes, decoded as PNG and SVG with their series.
func TestCompareMemoryModesCLI(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"memory-modes", "--vary", "memory.mode=preallocate,growth,limit", "--plot", dir}
	if err := compareMain(context.Background(), &out, &errb, args, prepareScenario, false); err != nil {
		t.Fatalf("gpusim compare %s: %v", strings.Join(args, " "), err)
	}
	golden := filepath.Join("testdata", "compare-memory-modes.txt")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	} else {
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if diff := cmp.Diff(string(want), out.String()); diff != "" {
			t.Errorf("gpusim compare %s differs from %s (-want +got):\n%s", strings.Join(args, " "), golden, diff)
		}
	}

	var js bytes.Buffer
	if err := compareMain(context.Background(), &js, &errb, append(args[:3:3], "-o", "json"), prepareScenario, false); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Configs []struct {
			Label   string             `json:"label"`
			OOM     bool               `json:"oom"`
			Metrics map[string]float64 `json:"metrics"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Configs) != 3 || got.Configs[2].Label != "memory.mode=limit" {
		t.Fatalf("configs = %+v, want preallocate, growth, limit", got.Configs)
	}
	pool := func(i int) float64 { return got.Configs[i].Metrics[report.MetricPeakPool] }
	if !(pool(0) > 30<<30 && pool(1) < pool(0) && pool(2) == 6144<<20) {
		t.Errorf("peak pools = %v, %v, %v; want preallocate > 30 GiB > growth, limit = 6 GiB", pool(0), pool(1), pool(2))
	}
	for i, c := range got.Configs {
		if c.OOM {
			t.Errorf("%s ran out of memory; the scenario's 6 GiB fits the step", got.Configs[i].Label)
		}
	}

	// Figures: memory per configuration (in use, pool, limit), utilization, breakdown, sweep.
	wantSeries := map[string][]string{
		"memory-memory.mode=limit":       {"in use", "pool", "limit"},
		"utilization-memory.mode=growth": {"GPU:0"},
		"breakdown":                      {"forward", "backward"},
		"sweep-memory.mode":              {"throughput", "peak"},
	}
	for name, series := range wantSeries {
		f, err := os.Open(filepath.Join(dir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s.png: %v", name, err)
		} else if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 200 {
			t.Errorf("%s.png is %dx%d, want a readable figure", name, b.Dx(), b.Dy())
		}
		svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if err := xmlWellFormed(svg); err != nil {
			t.Errorf("%s.svg: %v", name, err)
		}
		for _, s := range series {
			if !bytes.Contains(svg, []byte(">"+s)) {
				t.Errorf("%s.svg has no legend text starting %q", name, s)
			}
		}
	}
}

// xmlWellFormed decodes every token of an XML document.
func xmlWellFormed(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	root := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if !root {
				return errors.New("no root element")
			}
			return nil
		}
		if err != nil {
			return err
		}
		if se, ok := tok.(xml.StartElement); ok && !root {
			if se.Name.Local != "svg" {
				return fmt.Errorf("root element %q, want svg", se.Name.Local)
			}
			root = true
		}
	}
}

// A product past --max-configs is refused with its count before any configuration is built
// or simulated: 10^12 configurations fail at once (the product was built whole first, 5 GB
// for 10^6), a shard's share is what counts, and the default bound holds too.
func TestCompareMaxConfigs(t *testing.T) {
	vals := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = strconv.Itoa(i + 1)
		}
		return strings.Join(v, ",")
	}
	huge := []string{"--vary", "batch=" + vals(10000), "--vary", "steps=" + vals(10000), "--vary", "seed=" + vals(10000)}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"--max-configs", "99"}, "--vary", "batch="+vals(10), "--vary", "steps="+vals(10)),
			"compare: 100 configurations (10 x 10 values), more than --max-configs 99: narrow the --vary lists"},
		{huge, "compare: 1000000000000 configurations (10000 x 10000 x 10000 values), more than --max-configs 10000"},
		{[]string{"a.yaml", "b.yaml", "--vary", "batch=" + vals(6000)}, "compare: 12000 configurations (2 scenarios x 6000 values), more than --max-configs 10000"},
		{[]string{"--vary", "batch=" + vals(300), "--vary", "steps=" + vals(100), "--shard", "1/2"},
			"compare: shard 1/2 has 15000 of the 30000 configurations (300 x 100 values), more than --max-configs 10000"},
	} {
		var started atomic.Int32
		var out, errb bytes.Buffer
		err := compareMain(context.Background(), &out, &errb, tc.args, fakePrepare(&started), false)
		if exitCode(err) != 2 || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("compare %.60s...: %v (exit %d), want exit 2 starting %q", strings.Join(tc.args, " "), err, exitCode(err), tc.want)
		}
		if n := started.Load(); n != 0 {
			t.Errorf("compare %.60s...: %d configurations simulated, want none", strings.Join(tc.args, " "), n)
		}
	}
	// Within the bound, a shard of a product larger than it runs its share.
	var started atomic.Int32
	var out, errb bytes.Buffer
	args := []string{"--vary", "batch=" + vals(30), "--vary", "steps=" + vals(10), "--shard", "1/4", "--max-configs", "75"}
	if err := compareMain(context.Background(), &out, &errb, args, fakePrepare(&started), false); err != nil {
		t.Fatalf("compare of 300 configurations, shard 1/4 of them, --max-configs 75: %v", err)
	}
	if n := started.Load(); n != 75 {
		t.Errorf("shard 1/4 of 300 simulated %d configurations, want 75", n)
	}
}

// A value given twice in one --vary list is refused (its configurations would share a label).
func TestCompareDuplicateValue(t *testing.T) {
	var started atomic.Int32
	var out, errb bytes.Buffer
	err := compareMain(context.Background(), &out, &errb, []string{"--vary", "batch=32,64,32"}, fakePrepare(&started), false)
	if want := `compare: --vary "batch=32,64,32": batch=32 is given twice`; exitCode(err) != 2 || err.Error() != want {
		t.Errorf("compare --vary batch=32,64,32: %v, want %q", err, want)
	}
}
