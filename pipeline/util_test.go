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

// randomKernels returns n random non-overlapping kernels in time order, with gaps.
func randomKernels(rng *rand.Rand, n int) []Interval {
	var busy []Interval
	var at sim.Time
	for range n {
		at += sim.Time(rng.Int64N(int64(3 * sim.Millisecond)))
		d := sim.Time(rng.Int64N(int64(5 * sim.Millisecond)))
		busy = append(busy, Interval{at, at + d})
		at += d
	}
	return busy
}

// TestUtilizationMeter checks that the incremental meter gives UtilizationSeries' samples for
// random non-overlapping kernels added in time order, and that its Summary is Summarize's.
func TestUtilizationMeter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	busy := randomKernels(rng, 2000)
	end := busy[len(busy)-1].End + 7*sim.Millisecond
	var m UtilizationMeter
	for _, x := range busy {
		m.Add(x.Start, x.End)
	}
	want := UtilizationSeries(busy, 0, end, NVMLSamplePeriod)
	got, period := m.Series(end)
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("meter vs UtilizationSeries (-want +got):\n%s", diff)
	}
	if period != NVMLSamplePeriod {
		t.Errorf("period %v, want %v (not downsampled)", period, NVMLSamplePeriod)
	}
	if g, w := m.Summary(), Summarize(got); g != w {
		t.Errorf("Summary = %+v, want Summarize of the series %+v", g, w)
	}
	if len(want) < 10 {
		t.Fatalf("only %d windows: the test covers too little", len(want))
	}
}

// TestMeterDownsamples checks a meter capped at a few samples against UtilizationSeries at
// the doubled window it reports, and its Summary against the full-resolution series: the
// downsampled samples are exact busy fractions of the wider windows, the statistics those of
// nvidia-smi's windows.
func TestMeterDownsamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	busy := randomKernels(rng, 3000)
	end := busy[len(busy)-1].End + 3*sim.Millisecond
	for _, maxN := range []int{2, 3, 7, 16, 33} {
		m := UtilizationMeter{Period: 10 * sim.Millisecond, MaxSamples: maxN}
		for _, x := range busy {
			m.Add(x.Start, x.End)
		}
		got, period := m.Series(end)
		full := UtilizationSeries(busy, 0, end, m.Period)
		per := int(period / m.Period)
		if per < 2 || per&(per-1) != 0 || len(got) > maxN || len(got) < maxN/2 || len(full)/per != len(got) {
			t.Fatalf("MaxSamples %d: %d samples of %d windows each from %d windows", maxN, len(got), per, len(full))
		}
		want := UtilizationSeries(busy, 0, sim.Time(len(got))*period, period)
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
			t.Errorf("MaxSamples %d: downsampled vs UtilizationSeries at %v (-want +got):\n%s", maxN, period, diff)
		}
		if diff := cmp.Diff(Summarize(full), m.Summary(), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
			t.Errorf("MaxSamples %d: Summary vs the full-resolution series (-want +got):\n%s", maxN, diff)
		}
	}
}

// TestMeterOrder checks that an interval starting before one already added is refused: the
// windows before the latest start are final.
func TestMeterOrder(t *testing.T) {
	var m UtilizationMeter
	m.Add(sim.Second, sim.Second+sim.Millisecond)
	m.Add(sim.Second, sim.Second) // the same start: allowed
	defer func() {
		if recover() == nil {
			t.Error("Add before the latest start did not panic")
		}
	}()
	m.Add(sim.Second-1, sim.Second)
}

// TestMeterAddPeriodic checks AddPeriodic against Add of every interval of every copy, for
// random steps, periods, starts, windows and sample caps.
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
		sorted := slices.Clone(ivs)
		rng.Shuffle(len(ivs), func(i, j int) { ivs[i], ivs[j] = ivs[j], ivs[i] })
		start, count := sim.Time(rng.Int64N(10000)), 1+rng.IntN(500)
		win := sim.Time(1 + rng.IntN(4000))
		maxN := []int{0, 3, 8}[trial%3]
		want, got := UtilizationMeter{Period: win, MaxSamples: maxN}, UtilizationMeter{Period: win, MaxSamples: maxN}
		want.Add(0, 3)
		got.Add(0, 3)
		for j := range count {
			for _, x := range sorted {
				want.Add(start+sim.Time(j)*period+x.Start, start+sim.Time(j)*period+x.End)
			}
		}
		got.AddPeriodic(start, period, count, ivs)
		// A kernel after the copies, as the next simulated step runs one.
		after := start + sim.Time(count)*period
		want.Add(after, after+win/2)
		got.Add(after, after+win/2)
		end := after + win
		w, wp := want.Series(end)
		g, gp := got.Series(end)
		if !slices.Equal(w, g) || wp != gp || want.Summary() != got.Summary() {
			t.Fatalf("trial %d (period %d, %d intervals, %d copies, window %d): AddPeriodic = %v (%v), Add = %v (%v)", trial, period, len(ivs), count, win, g, gp, w, wp)
		}
	}
}
