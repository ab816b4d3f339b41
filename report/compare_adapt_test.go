package report

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/train/traintest"
)

// memoryModeRuns simulates the built-in default scenario (ResNet-50, batch 64, one A100-40GB)
// in TF's three memory modes. The limit mode gets a 4 GiB logical device, less than the step
// needs, so it runs out of memory; the other two keep TF's defaults.
func memoryModeRuns(t *testing.T) []Run {
	t.Helper()
	var runs []Run
	for _, c := range []struct {
		mode     string
		limitMiB int64
	}{
		{"preallocate", 0},
		{"growth", 0},
		{"limit", 4096},
	} {
		cfg := traintest.Steps(train.DefaultConfig(), 20)
		cfg.Memory.Mode, cfg.Memory.LimitMiB = c.mode, c.limitMiB
		res := simulate(t, cfg)
		runs = append(runs, FromResult("memory.mode="+c.mode, []RunParam{{"memory.mode", c.mode}}, res))
	}
	return runs
}

func TestCompareMemoryModes(t *testing.T) {
	runs := memoryModeRuns(t)
	for _, w := range []struct {
		name  string
		write func(*CompareTable, *bytes.Buffer) error
	}{
		{"compare-memory-modes.txt", func(c *CompareTable, b *bytes.Buffer) error { return c.WriteText(b) }},
		{"compare-memory-modes.json", func(c *CompareTable, b *bytes.Buffer) error { return c.WriteJSON(b) }},
		{"compare-memory-modes.csv", func(c *CompareTable, b *bytes.Buffer) error { return c.WriteCSV(b) }},
	} {
		var buf bytes.Buffer
		if err := w.write(Compare(runs), &buf); err != nil {
			t.Fatal(err)
		}
		golden(t, w.name, buf.Bytes())
	}
	// What the table must say whatever the cost model's numbers: only the limit run OOMs,
	// growth holds a smaller pool than preallocation, and the limit caps the pool.
	if runs[0].OOM || runs[1].OOM || !runs[2].OOM {
		t.Errorf("OOM = %v %v %v, want false false true", runs[0].OOM, runs[1].OOM, runs[2].OOM)
	}
	pool := func(r Run) float64 { m, _ := r.Metric(MetricPeakPool); return m.Value }
	if !(pool(runs[1]) < pool(runs[0])) || pool(runs[2]) > 4096<<20 {
		t.Errorf("peak pools = %v %v %v, want growth < preallocate and limit <= 4 GiB", pool(runs[0]), pool(runs[1]), pool(runs[2]))
	}
}

func TestFromResultPlotsAndTrace(t *testing.T) {
	runs := memoryModeRuns(t)
	figs, err := Figures(runs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.Name)
	}
	// train.Result is a SeriesSource: each run that trained gets a utilization figure; the
	// limit run ran out of memory before its first step, so it has none.
	want := []string{"memory-memory.mode=preallocate", "utilization-memory.mode=preallocate",
		"memory-memory.mode=growth", "utilization-memory.mode=growth", "memory-memory.mode=limit", "memory-compare", "breakdown", "sweep-memory.mode"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("figures (-want +got):\n%s", diff)
	}
	for _, f := range figs {
		if strings.HasPrefix(f.Name, "utilization-") {
			// The default scenario has no tf.data pipeline: one GPU, no input buffer.
			if diff := cmp.Diff([]string{"GPU:0"}, f.Series); diff != "" {
				t.Errorf("%s series (-want +got):\n%s", f.Name, diff)
			}
		}
	}
	for i, r := range runs[:2] {
		if len(r.Utilization) != 1 || len(r.Utilization[0].Points) == 0 {
			t.Fatalf("run %d utilization = %+v, want one GPU series", i, r.Utilization)
		}
		for _, p := range r.Utilization[0].Points {
			if p.V < 0 || p.V > 1 {
				t.Errorf("run %d: utilization sample %v at %v s outside [0, 1]", i, p.V, p.T)
			}
		}
	}
	var buf bytes.Buffer
	if err := WriteTrace(&buf, &runs[2], TraceOptions{}); err != nil {
		t.Fatal(err)
	}
	tr := parseTrace(t, buf.Bytes())
	var oom, counters, waits int
	for _, ev := range tr.TraceEvents {
		if ev.Ph == "i" && ev.Name == "OOM" {
			oom++
		}
		// BFC waited kMaxMillisToWait (10 s) for frees before it failed: a span on the
		// allocator's track.
		if ev.Ph == "X" && ev.Name == "OOM retry wait" && ev.Cat == TrackAllocator {
			waits++
			if ev.Dur != 10e6 {
				t.Errorf("OOM retry wait lasts %v µs, want 10 s", ev.Dur)
			}
		}
		if ev.Ph == "C" {
			counters++
		}
	}
	if waits != 1 {
		t.Errorf("trace of the OOM run has %d OOM retry wait spans, want 1", waits)
	}
	if oom == 0 || counters == 0 {
		t.Errorf("trace of the OOM run: %d OOM instants, %d counter events; want both > 0", oom, counters)
	}
}

// detailedResult stands for a train.Result that records spans and series (SpanSource and
// SeriesSource), which the adapter must carry into the trace and the utilization figure.
type detailedResult struct{}

func (detailedResult) VisitSpans(fn func(device int, track, name string, step int, start, dur float64)) {
	for step := range 3 {
		base := float64(step) * 0.1
		fn(0, TrackInput, "input wait", step, base, 0.005)
		fn(0, TrackCompute, "conv1/Conv2D", step, base+0.005, 0.04)
		fn(0, TrackAllReduce, "all-reduce 97.5MiB", step, base+0.045, 0.01)
	}
}

func (detailedResult) VisitUtilization(fn func(device int, t, busy float64)) {
	for i := range 10 {
		fn(0, float64(i)*0.03, 0.9)
	}
}

func (detailedResult) VisitInputBuffer(fn func(t, batches float64)) {
	for i := range 10 {
		fn(float64(i)*0.03, float64(i%3))
	}
}

var (
	_ SpanSource   = detailedResult{}
	_ SeriesSource = detailedResult{}
)

func TestFromResultOptionalDetail(t *testing.T) {
	res := simulate(t, traintest.Steps(train.DefaultConfig(), 3))
	r := fromResult("default", nil, res, detailedResult{})
	if len(r.Utilization) != 1 || r.Utilization[0].Name != "GPU:0" || len(r.Utilization[0].Points) != 10 {
		t.Errorf("utilization = %+v, want one GPU:0 series of 10 points", r.Utilization)
	}
	if len(r.InputBuffer.Points) != 10 {
		t.Errorf("input buffer has %d points, want 10", len(r.InputBuffer.Points))
	}
	var buf bytes.Buffer
	if err := WriteTrace(&buf, &r, TraceOptions{}); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, ev := range parseTrace(t, buf.Bytes()).TraceEvents {
		kinds[ev.Ph+" "+ev.Cat] = true
	}
	for _, want := range []string{"X " + TrackCompute, "X " + TrackAllReduce, "X " + TrackInput} {
		if !kinds[want] {
			t.Errorf("trace lacks %q events: %v", want, kinds)
		}
	}
	if _, err := UtilizationFigure(&r); err != nil {
		t.Errorf("UtilizationFigure: %v", err)
	}
}

// TestWriteResultPlotsAndTrace is what `gpusim run --plot DIR --trace FILE` calls.
func TestWriteResultPlotsAndTrace(t *testing.T) {
	res := simulate(t, traintest.GrowthFragmentation())
	dir := t.TempDir()
	paths, err := WriteResultPlots(dir, res)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	want := []string{"memory-growth-fragmentation.png", "memory-growth-fragmentation.svg"}
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("WriteResultPlots wrote %q, want %s among them", names, w)
		}
	}
	var buf bytes.Buffer
	if err := WriteResultTrace(&buf, res); err != nil {
		t.Fatal(err)
	}
	tr := parseTrace(t, buf.Bytes())
	var growth int
	for _, ev := range tr.TraceEvents {
		if ev.Cat == TrackAllocator && strings.HasPrefix(ev.Name, "pool ") {
			growth++
		}
	}
	if growth < 2 {
		t.Errorf("trace of a growth run has %d pool-growth events, want several", growth)
	}
}
