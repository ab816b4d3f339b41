package pipeline

import (
	"math"
	"math/rand/v2"
	"slices"
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

// TestMeterAddPeriodic checks AddPeriodic against Add of every interval of every copy, for
// random steps, periods, starts and windows.
func TestMeterAddPeriodic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 500 {
		period := sim.Time(1 + rng.IntN(3000))
		var ivs []Interval
		for at := sim.Time(0); at < period; {
			s := at + sim.Time(rng.Int64N(int64(period)/4+1))
			e := min(period, s+sim.Time(rng.Int64N(int64(period)/3+1)))
			if s >= period {
				break
			}
			ivs = append(ivs, Interval{s, e})
			at = e + 1
		}
		rng.Shuffle(len(ivs), func(i, j int) { ivs[i], ivs[j] = ivs[j], ivs[i] })
		start, count := sim.Time(rng.Int64N(10000)), 1+rng.IntN(500)
		win := sim.Time(1 + rng.IntN(4000))
		want, got := UtilizationMeter{Period: win}, UtilizationMeter{Period: win}
		want.Add(0, 3)
		got.Add(0, 3)
		for j := range count {
			for _, x := range ivs {
				want.Add(start+sim.Time(j)*period+x.Start, start+sim.Time(j)*period+x.End)
			}
		}
		got.AddPeriodic(start, period, count, ivs)
		end := start + sim.Time(count)*period + win
		if w, g := want.Series(end), got.Series(end); !slices.Equal(w, g) {
			t.Fatalf("trial %d (period %d, %d intervals, %d copies, window %d): AddPeriodic = %v, Add = %v", trial, period, len(ivs), count, win, g, w)
		}
	}
}

func TestMeterEqual(t *testing.T) {
	var a, b, c UtilizationMeter
	a.Add(0, 300*sim.Millisecond)
	b.Add(0, 100*sim.Millisecond)
	b.Add(100*sim.Millisecond, 300*sim.Millisecond)
	c.Add(0, 300*sim.Millisecond)
	c.Add(sim.Second, sim.Second) // empty: no window changes
	if !a.Equal(&b) || !a.Equal(&c) {
		t.Errorf("meters with the same busy time per window compare unequal")
	}
	c.Add(sim.Second, sim.Second+1)
	if a.Equal(&c) || c.Equal(&a) {
		t.Errorf("meters with different busy time compare equal")
	}
}
