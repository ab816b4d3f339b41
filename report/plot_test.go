package report

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/sim"
)

// seriesRuns adds made-up but plausible series to constructedRuns: a two-GPU run per mode whose
// memory rises through the forward pass and falls in the backward pass each step; the limit
// run fails at its first step.
func seriesRuns() []Run {
	runs := constructedRuns()
	for ri := range runs {
		r := &runs[ri]
		limit, _ := r.Metric(MetricBytesLimit)
		peak, _ := r.Metric(MetricPeakInUse)
		pool, _ := r.Metric(MetricPeakPool)
		steps := 20
		if r.OOM {
			steps = 1
		}
		for dev := range 2 {
			m := MemorySeries{Device: "GPU:" + string(rune('0'+dev)), Limit: int64(limit.Value)}
			weights := peak.Value * 0.2
			for s := range steps {
				for k := range 10 {
					t := float64(s)*0.21 + float64(k)*0.021
					frac := float64(k) / 5
					if k > 5 {
						frac = float64(10-k) / 5
					}
					inUse := weights + (peak.Value-weights)*frac
					p := pool.Value
					if r.Param("memory.mode") == "growth" {
						p = min(pool.Value, max(inUse*1.1, pool.Value*float64(s+1)/4))
					}
					m.Points = append(m.Points, MemoryPoint{T: t, InUse: int64(inUse), Pool: int64(p)})
				}
			}
			if r.OOM {
				m.OOMs = []float64{0.1}
				m.Points = m.Points[:5]
			}
			r.Memory = append(r.Memory, m)
			u := TimeSeries{Name: m.Device, Unit: UnitRatio}
			for s := range steps * 4 {
				v := 0.95
				if s%4 == 0 {
					v = 0.55
				}
				u.Points = append(u.Points, TimePoint{T: float64(s) * 0.0525, V: v})
			}
			r.Utilization = append(r.Utilization, u)
		}
		r.InputBuffer = TimeSeries{Name: "prefetch buffer", Unit: UnitBatches}
		for s := range steps {
			r.InputBuffer.Points = append(r.InputBuffer.Points, TimePoint{T: float64(s) * 0.21, V: float64(s % 3)})
		}
		if !r.OOM {
			step, _ := r.Metric(MetricStepTime)
			r.Breakdown = []StepShare{
				{"input wait", step.Value * 0.02}, {"forward", step.Value * 0.3}, {"backward", step.Value * 0.55},
				{"all-reduce", step.Value * 0.08}, {"optimizer", step.Value * 0.05},
			}
		}
		r.Timeline = &Timeline{}
		for s := range steps {
			base := sim.Time(s) * 210 * sim.Millisecond
			for dev := range 2 {
				r.Timeline.Spans = append(r.Timeline.Spans,
					TraceSpan{Device: dev, Track: TrackInput, Name: "input wait", Step: s, Start: base, Dur: 4 * sim.Millisecond},
					TraceSpan{Device: dev, Track: TrackCompute, Name: "conv1/Conv2D", Step: s, Start: base + 4*sim.Millisecond, Dur: 60 * sim.Millisecond, Args: map[string]string{"flops": "1.2e12"}},
					TraceSpan{Device: dev, Track: TrackCompute, Name: "conv1/Conv2D_grad", Step: s, Start: base + 64*sim.Millisecond, Dur: 110 * sim.Millisecond},
					TraceSpan{Device: dev, Track: TrackAllReduce, Name: "all-reduce 97.5MiB", Step: s, Start: base + 174*sim.Millisecond, Dur: 17 * sim.Millisecond},
				)
			}
		}
		if r.OOM {
			r.Timeline.Spans = append(r.Timeline.Spans, TraceSpan{Device: 0, Track: TrackAllocator, Name: "OOM retry", Step: 0,
				Start: 100 * sim.Millisecond, Dur: 10 * sim.Second, Args: map[string]string{"message": r.OOMMessage}})
		}
	}
	return runs
}

// svgTexts parses an SVG document with encoding/xml and returns the content of its <text>
// elements.
func svgTexts(t *testing.T, r io.Reader) []string {
	t.Helper()
	dec := xml.NewDecoder(r)
	var texts []string
	inText := false
	sawSVG := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if el.Name.Local == "svg" {
				sawSVG = true
			}
			inText = el.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts = append(texts, strings.TrimSpace(string(el)))
			}
		}
	}
	if !sawSVG {
		t.Fatal("no <svg> element")
	}
	return texts
}

func TestWritePlots(t *testing.T) {
	dir := t.TempDir()
	paths, err := WritePlots(dir, seriesRuns())
	if err != nil {
		t.Fatal(err)
	}
	// What each figure must show: legend entries and titles, found as SVG text.
	want := map[string][]string{
		"memory-memory.mode=preallocate": {SeriesInUse, SeriesPool, "limit 38.00GiB", "Memory on GPU:0: memory.mode=preallocate", "Memory on GPU:1", "time (s)", "memory (GiB)"},
		"memory-memory.mode=limit":       {SeriesInUse, SeriesPool, "limit 8.000GiB", SeriesOOM},
		"utilization-memory.mode=growth": {"GPU:0", "GPU:1", "prefetch buffer", "busy (%)", "batches ready"},
		"breakdown":                      {"forward", "backward", "all-reduce", "optimizer", "input wait", "OOM", "preallocate", "growth", "limit", "time per step (ms)", "memory.mode"},
		"sweep-memory.mode":              {"throughput (samples/s)", "peak memory in use (GiB)", SeriesOOM, "Throughput vs memory.mode"},
	}
	for name, texts := range want {
		for _, ext := range []string{"png", "svg"} {
			p := filepath.Join(dir, name+"."+ext)
			if !slices.Contains(paths, p) {
				t.Errorf("WritePlots did not write %s; wrote %v", p, paths)
			}
		}
		f, err := os.Open(filepath.Join(dir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s.png does not decode as PNG: %v", name, err)
		} else if b := img.Bounds(); b.Dx() != 1200 {
			t.Errorf("%s.png is %d px wide, want 1200 (8 in at 150 dpi)", name, b.Dx())
		}
		data, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		got := svgTexts(t, bytes.NewReader(data))
		for _, w := range texts {
			if !slices.Contains(got, w) {
				t.Errorf("%s.svg has no text %q; texts: %q", name, w, got)
			}
		}
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("leftover temporary file %s", e.Name())
		}
	}
}

func TestFiguresSeries(t *testing.T) {
	figs, err := Figures(seriesRuns())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range figs {
		got = append(got, f.Name+": "+strings.Join(f.Series, ", "))
	}
	want := []string{
		"memory-memory.mode=preallocate: in use, pool, limit",
		"utilization-memory.mode=preallocate: GPU:0, GPU:1, prefetch buffer",
		"memory-memory.mode=growth: in use, pool, limit",
		"utilization-memory.mode=growth: GPU:0, GPU:1, prefetch buffer",
		"memory-memory.mode=limit: in use, pool, limit, OOM",
		"utilization-memory.mode=limit: GPU:0, GPU:1, prefetch buffer",
		"memory-compare: in use, pool, limit, OOM",
		"breakdown: input wait, forward, backward, all-reduce, optimizer",
		"sweep-memory.mode: throughput, peak in use, OOM",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Figures =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSweepTwoKeys(t *testing.T) {
	var runs []Run
	for _, b := range []string{"32", "64"} {
		for _, p := range []string{"float32", "mixed_float16"} {
			runs = append(runs, Run{Label: "batch=" + b + ",precision=" + p, Params: []RunParam{{"batch", b}, {"precision", p}},
				Metrics: []RunMetric{{Key: MetricThroughput, Value: 100}, {Key: MetricPeakInUse, Value: gib}}})
		}
	}
	f, err := SweepFigure(runs, "batch")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"precision=float32", "precision=mixed_float16"}; !slices.Equal(f.Series, want) {
		t.Errorf("SweepFigure(batch).Series = %q, want %q", f.Series, want)
	}
	if _, err := SweepFigure(runs[:1], "batch"); err == nil {
		t.Error("SweepFigure of one value: no error")
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"memory.mode=growth", "memory.mode=growth"},
		{"batch=64,precision=mixed_float16", "batch=64_precision=mixed_float16"},
		{"../etc/passwd", ".._etc_passwd"},
		{"", "run"},
	}
	for _, tt := range tests {
		if got := slug(tt.in); got != tt.want {
			t.Errorf("slug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The comparison's memory overlay puts every run on one axis per GPU: each run's in use, pool
// and limit in its own colour, in one legend.
func TestMemoryOverlayFigure(t *testing.T) {
	runs := []Run{
		{Label: "preallocate", Memory: []MemorySeries{{Device: "GPU:0", Limit: 40 << 30, Points: []MemoryPoint{{T: 0, InUse: 1 << 30, Pool: 40 << 30}, {T: 1, InUse: 5 << 30, Pool: 40 << 30}}}}},
		{Label: "limit", Memory: []MemorySeries{{Device: "GPU:0", Limit: 6 << 30, Points: []MemoryPoint{{T: 0, InUse: 1 << 30, Pool: 6 << 30}, {T: 1, InUse: 5 << 30, Pool: 6 << 30}}, OOMs: []float64{1}}}},
	}
	f, err := MemoryOverlayFigure(runs)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.panels) != 1 {
		t.Fatalf("%d panels, want one axis for GPU 0 of both runs", len(f.panels))
	}
	var svg bytes.Buffer
	if err := f.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"preallocate: limit 40.00GiB", "preallocate: pool", "preallocate: in use", "limit: limit 6.000GiB", "limit: pool", "limit: in use", "limit: OOM"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("overlay figure lacks the legend entry %q", want)
		}
	}
	var buf bytes.Buffer
	if err := f.WritePNG(&buf); err != nil || buf.Len() == 0 {
		t.Errorf("WritePNG: %v (%d bytes)", err, buf.Len())
	}
}
