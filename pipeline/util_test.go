package pipeline

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpusim/gpusim/sim"
)

func TestUtilizationSeries(t *testing.T) {
	ms := sim.Millisecond
	for _, tc := range []struct {
		name       string
		busy       []Interval
		start, end sim.Time
		want       []float64
	}{
		{"empty", nil, 0, 400 * ms, []float64{0, 0}},
		{"one kernel across a window edge", []Interval{{150 * ms, 250 * ms}}, 0, 400 * ms, []float64{0.25, 0.25}},
		// Two streams running at once count once: "one or more kernels".
		{"overlapping streams", []Interval{{0, 100 * ms}, {50 * ms, 150 * ms}}, 0, 200 * ms, []float64{0.75}},
		{"unsorted input", []Interval{{300 * ms, 400 * ms}, {0, 20 * ms}}, 0, 400 * ms, []float64{0.1, 0.5}},
		{"last partial window dropped", []Interval{{0, 500 * ms}}, 0, 500 * ms, []float64{1, 1}},
		{"window start offset", []Interval{{0, 300 * ms}}, 100 * ms, 500 * ms, []float64{1, 0}},
		{"empty interval ignored", []Interval{{100 * ms, 100 * ms}}, 0, 200 * ms, []float64{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := UtilizationSeries(tc.busy, tc.start, tc.end, NVMLSamplePeriod)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("UtilizationSeries (-want +got):\n%s", diff)
			}
		})
	}
	if got := Utilization([]Interval{{0, 30 * ms}, {20 * ms, 50 * ms}}, 0, 100*ms); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("Utilization = %v, want 0.5", got)
	}
}

func TestSummarize(t *testing.T) {
	got := Summarize([]float64{0.1, 0.3, 0.5, 0.3})
	want := Summary{Mean: 0.3, Stddev: math.Sqrt(0.02), Min: 0.1, Max: 0.5}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
}

func TestDiagnose(t *testing.T) {
	swing := []float64{0.05, 0.6, 0.1, 0.5, 0.0, 0.55}
	flat := []float64{0.95, 0.96, 0.95, 0.97}
	for _, tc := range []struct {
		name    string
		ev      Evidence
		want    Bound
		low, sw bool
	}{
		{"starved GPU", Evidence{Utilization: swing, StepTime: 0.1, InputWait: 0.07, BufferEmptyFraction: 0.9}, InputBound, true, true},
		{"busy GPU", Evidence{Utilization: flat, StepTime: 0.1, InputWait: 0.002}, ComputeBound, false, false},
		{"all-reduce dominates", Evidence{Utilization: flat, StepTime: 0.1, InputWait: 0.01, CommTime: 0.04}, CommunicationBound, false, false},
		{"input over communication", Evidence{Utilization: swing, StepTime: 0.1, InputWait: 0.05, CommTime: 0.03}, InputBound, true, true},
		{"small waits", Evidence{Utilization: flat, StepTime: 0.1, InputWait: 0.05 * 0.1, CommTime: 0.05 * 0.1}, ComputeBound, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Diagnose(tc.ev)
			if d.Bound != tc.want || d.LowUtilization != tc.low || d.Swinging != tc.sw {
				t.Errorf("Diagnose = %s (low %v, swinging %v), want %s (%v, %v); evidence %q",
					d.Bound, d.LowUtilization, d.Swinging, tc.want, tc.low, tc.sw, d.Evidence)
			}
			if len(d.Evidence) < 2 {
				t.Errorf("evidence %q: want the utilization line and the verdict's reason", d.Evidence)
			}
		})
	}
}

func TestCandidatesSkipWhatIsInForce(t *testing.T) {
	cfg := DefaultConfig()
	names := func(cs []Change) []string {
		var s []string
		for _, c := range cs {
			s = append(s, c.Set...)
		}
		return s
	}
	want := []string{"input.map.parallel_calls=autotune", "input.prefetch=autotune",
		"input.map.parallel_calls=autotune", "input.prefetch=autotune", "input.cache=file", "batch=256"}
	if diff := cmp.Diff(want, names(Candidates(cfg))); diff != "" {
		t.Errorf("Candidates(default) (-want +got):\n%s", diff)
	}
	cfg.ParallelCalls, cfg.Prefetch, cfg.Cache = Autotune, Autotune, "memory"
	if diff := cmp.Diff([]string{"batch=256"}, names(Candidates(cfg))); diff != "" {
		t.Errorf("Candidates(tuned) (-want +got):\n%s", diff)
	}
	cfg.Records = 1000 // 150 MB fits the RAM budget: memory cache
	cfg.Cache = "none"
	if got := names(Candidates(cfg)); got[0] != "input.cache=memory" {
		t.Errorf("Candidates(small dataset) = %v, want the memory cache first", got)
	}
}

// TestUtilizationMeter checks that the incremental meter gives UtilizationSeries' samples for
// random non-overlapping kernels, added in any order.
func TestUtilizationMeter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var busy []Interval
	var at sim.Time
	for range 2000 {
		at += sim.Time(rng.Int64N(int64(3 * sim.Millisecond)))
		d := sim.Time(rng.Int64N(int64(5 * sim.Millisecond)))
		busy = append(busy, Interval{at, at + d})
		at += d
	}
	end := at + 7*sim.Millisecond
	var m UtilizationMeter
	for _, i := range rng.Perm(len(busy)) {
		m.Add(busy[i].Start, busy[i].End)
	}
	want := UtilizationSeries(busy, 0, end, NVMLSamplePeriod)
	if diff := cmp.Diff(want, m.Series(end), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("meter vs UtilizationSeries (-want +got):\n%s", diff)
	}
	if len(want) < 10 {
		t.Fatalf("only %d windows: the test covers too little", len(want))
	}
}
