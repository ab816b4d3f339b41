package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/gpusim/gpusim/sim"
	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/train/traintest"
)

// chromeTrace is the part of the Chrome trace event format the tests read.
type chromeTrace struct {
	DisplayTimeUnit string `json:"displayTimeUnit"`
	TraceEvents     []struct {
		Name string         `json:"name"`
		Cat  string         `json:"cat"`
		Ph   string         `json:"ph"`
		Ts   *float64       `json:"ts"`
		Dur  float64        `json:"dur"`
		PID  int            `json:"pid"`
		TID  int            `json:"tid"`
		Args map[string]any `json:"args"`
	} `json:"traceEvents"`
}

func parseTrace(t *testing.T, data []byte) chromeTrace {
	t.Helper()
	var tr chromeTrace
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatalf("trace does not parse as JSON: %v", err)
	}
	for i, ev := range tr.TraceEvents {
		if ev.Ph == "" || ev.Name == "" || ev.Ts == nil && ev.Ph != "M" {
			t.Fatalf("event %d lacks ph, name or ts: %+v", i, ev)
		}
	}
	return tr
}

func TestWriteTraceKinds(t *testing.T) {
	runs := seriesRuns()
	r := &runs[2] // the limit run: one step, an OOM retry
	var buf bytes.Buffer
	if err := WriteTrace(&buf, r, TraceOptions{}); err != nil {
		t.Fatal(err)
	}
	tr := parseTrace(t, buf.Bytes())
	kinds := map[string]bool{}
	for _, ev := range tr.TraceEvents {
		switch ev.Ph {
		case "X", "i":
			kinds[ev.Ph+" "+ev.Cat] = true
		case "C", "M":
			kinds[ev.Ph+" "+ev.Name] = true
		}
	}
	for _, want := range []string{
		"X " + TrackCompute, "X " + TrackAllReduce, "X " + TrackInput, "X " + TrackAllocator, "i " + TrackAllocator,
		"C memory GPU:0", "C memory GPU:1", "C utilization GPU:0", "C input buffer",
		"M process_name", "M thread_name",
	} {
		if !kinds[want] {
			t.Errorf("trace has no %q event; kinds: %v", want, kinds)
		}
	}
	// The OOM retry keeps its 10 s wait (in microseconds) and its message.
	found := false
	for _, ev := range tr.TraceEvents {
		if ev.Cat == TrackAllocator && ev.Ph == "X" {
			found = true
			if ev.Dur != 10e6 || *ev.Ts != 100e3 || ev.Args["message"] != r.OOMMessage {
				t.Errorf("OOM retry = ts %v dur %v args %v, want ts 100000 dur 1e7 and the OOM message", *ev.Ts, ev.Dur, ev.Args)
			}
		}
	}
	if !found {
		t.Error("no OOM retry span")
	}
}

// longRun is a run of steps steps on gpus GPUs with ops compute ops per step.
func longRun(steps, gpus, ops int) *Run {
	r := &Run{Label: "long", Timeline: &Timeline{}}
	for g := range gpus {
		m := MemorySeries{Device: fmt.Sprintf("GPU:%d", g), Limit: 80 * gib}
		for s := range steps {
			for k := range ops {
				m.Points = append(m.Points, MemoryPoint{T: float64(s) + float64(k)/float64(ops), InUse: int64(k) * 1e8, Pool: 80 * gib})
			}
		}
		r.Memory = append(r.Memory, m)
	}
	for s := range steps {
		for g := range gpus {
			for k := range ops {
				r.Timeline.Spans = append(r.Timeline.Spans, TraceSpan{Device: g, Track: TrackCompute, Name: "op", Step: s,
					Start: sim.Time(s)*sim.Second + sim.Time(k)*sim.Millisecond, Dur: sim.Millisecond})
			}
		}
	}
	return r
}

func TestWriteTraceBounded(t *testing.T) {
	tests := []struct {
		name             string
		steps, gpus, ops int
		opts             TraceOptions
		maxBytes         int
		wantSteps        int // "step N" spans expected
	}{
		// 1,000 steps x 2 GPUs x 50 ops = 100,000 spans in, 5 detailed steps + the last one.
		{"default", 1000, 2, 50, TraceOptions{}, 4 << 20, (1000 - 6) * 2},
		// A tight budget thins the whole-step spans to every k-th step.
		{"thinned", 1000, 2, 50, TraceOptions{MaxEvents: 1000, MaxCounterPoints: 100}, 400 << 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := longRun(tt.steps, tt.gpus, tt.ops)
			var buf bytes.Buffer
			if err := WriteTrace(&buf, r, tt.opts); err != nil {
				t.Fatal(err)
			}
			if buf.Len() > tt.maxBytes {
				t.Errorf("trace of %d steps is %d bytes, want <= %d", tt.steps, buf.Len(), tt.maxBytes)
			}
			tr := parseTrace(t, buf.Bytes())
			opts := tt.opts.withDefaults()
			var spans, stepSpans, counters int
			for _, ev := range tr.TraceEvents {
				switch {
				case ev.Ph == "X":
					spans++
					if ev.Cat == TrackStep {
						stepSpans++
					}
				case ev.Ph == "C":
					counters++
				}
			}
			if spans > opts.MaxEvents {
				t.Errorf("%d spans, want <= MaxEvents %d", spans, opts.MaxEvents)
			}
			if counters > tt.gpus*opts.MaxCounterPoints {
				t.Errorf("%d counter events, want <= %d", counters, tt.gpus*opts.MaxCounterPoints)
			}
			if tt.wantSteps > 0 && stepSpans != tt.wantSteps {
				t.Errorf("%d whole-step spans, want %d", stepSpans, tt.wantSteps)
			}
			if tt.wantSteps == 0 && stepSpans == 0 {
				t.Error("thinning left no whole-step spans")
			}
		})
	}
}

func TestBucketMaxKeepsPeak(t *testing.T) {
	var ps []counterPoint
	for i := range 1000 {
		v := float64(i % 7)
		if i == 555 {
			v = 1e9
		}
		ps = append(ps, counterPoint{float64(i), []float64{v}})
	}
	out := bucketMax(ps, 10)
	if len(out) > 10 {
		t.Errorf("bucketMax(1000 points, 10) = %d points", len(out))
	}
	if !slices.ContainsFunc(out, func(p counterPoint) bool { return p.v[0] == 1e9 }) {
		t.Error("bucketMax lost the peak")
	}
}

func TestWriteTraceDeterministic(t *testing.T) {
	runs := seriesRuns()
	var a, b bytes.Buffer
	if err := WriteTrace(&a, &runs[0], TraceOptions{DetailSteps: 2}); err != nil {
		t.Fatal(err)
	}
	if err := WriteTrace(&b, &runs[0], TraceOptions{DetailSteps: 2}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two traces of the same run differ")
	}
}

// BenchmarkWriteTrace writes the trace of a 1,000-step, 8-GPU run with 50 ops per step and
// GPU (400,000 spans in) and reports the file size and the writing speed in spans in per second.
func BenchmarkWriteTrace(b *testing.B) {
	r := longRun(1000, 8, 50)
	var size int
	for b.Loop() {
		var buf bytes.Buffer
		if err := WriteTrace(&buf, r, TraceOptions{}); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size)/1e6, "MB/trace")
	b.ReportMetric(float64(len(r.Timeline.Spans))*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}

// TestRealRunTraces checks the trace of real simulated runs: a 4-GPU MirroredStrategy run has
// compute ops, an all-reduce and memory counters on every GPU; the input-bound run has the
// steps' waits for tf.data on its GPU. Each trace parses and keeps every event inside the run.
func TestRealRunTraces(t *testing.T) {
	for _, tc := range []struct {
		cfg  train.Config
		gpus int
		want []string // categories every GPU must have
	}{
		{traintest.Mirrored4xA100(), 4, []string{"X " + TrackCompute, "X " + TrackAllReduce, "C memory"}},
		{traintest.InputBound(), 1, []string{"X " + TrackCompute, "X " + TrackInput, "C memory"}},
	} {
		t.Run(tc.cfg.Name, func(t *testing.T) {
			res := simulate(t, traintest.Steps(tc.cfg, 3))
			var buf bytes.Buffer
			if err := WriteResultTrace(&buf, res); err != nil {
				t.Fatal(err)
			}
			tr := parseTrace(t, buf.Bytes())
			// Each GPU is one trace process; counters carry the "memory" name family.
			got := map[int]map[string]bool{}
			for _, ev := range tr.TraceEvents {
				if ev.Ph == "M" {
					continue
				}
				if got[ev.PID] == nil {
					got[ev.PID] = map[string]bool{}
				}
				key := ev.Ph + " " + ev.Cat
				if ev.Ph == "C" {
					key = "C memory"
				}
				got[ev.PID][key] = true
				if end := *ev.Ts + ev.Dur; end > res.Elapsed*1e6+1 {
					t.Errorf("event %q ends at %v µs, after the run's %v s", ev.Name, end, res.Elapsed)
				}
			}
			var gpus int
			for _, kinds := range got {
				if !kinds["X "+TrackCompute] {
					continue // the host's process
				}
				gpus++
				for _, w := range tc.want {
					if !kinds[w] {
						t.Errorf("a GPU's trace lacks %q: has %v", w, kinds)
					}
				}
			}
			if gpus != tc.gpus {
				t.Errorf("%d GPUs with compute ops in the trace, want %d", gpus, tc.gpus)
			}
		})
	}
}
