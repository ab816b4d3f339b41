package train

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpusim/gpusim/sim"
)

// TestSamplerReplayMatchesRecord checks sampler.replay against recording every change of
// every copy of the step, for random steps, periods, copy counts and sampler sizes: the
// points, the width and the carried state must be the same.
func TestSamplerReplayMatchesRecord(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + rng.IntN(40)
		period := sim.Time(1 + rng.IntN(5000))
		ev := make([]memEvent, n)
		var at sim.Time
		for i := range ev {
			if rng.IntN(3) > 0 {
				at += sim.Time(rng.Int64N(int64(period)/int64(n) + 1))
			}
			ev[i] = memEvent{at: min(at, period-1), inUse: rng.Int64N(1000), pool: rng.Int64N(3) * 1000}
		}
		count := 1 + rng.IntN(3000)
		points := 2 + rng.IntN(50)
		start := sim.Time(rng.Int64N(100000))

		want, got := newSampler(points), newSampler(points)
		for _, s := range []*sampler{want, got} {
			s.record(0, 5, 7) // state before the replay
			s.record(start, 11, 7)
		}
		for j := range count {
			for _, e := range ev {
				want.record(start+sim.Time(j)*period+e.at, e.inUse, e.pool)
			}
		}
		got.replay(start, period, count, newStepTrace(ev))
		if diff := cmp.Diff(want.timeline(), got.timeline()); diff != "" {
			t.Fatalf("trial %d (%d changes, period %d, %d copies, %d points): replay differs from record (-record +replay):\n%s", trial, n, period, count, points, diff)
		}
		if want.width != got.width || want.inUse != got.inUse || want.pool != got.pool {
			t.Fatalf("trial %d: replay state (width %d, %d, %d), record (width %d, %d, %d)", trial, got.width, got.inUse, got.pool, want.width, want.inUse, want.pool)
		}
	}
}

func TestStepTraceMaxInUse(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ev := make([]memEvent, 137)
	for i := range ev {
		ev[i].inUse = rng.Int64N(100)
	}
	tr := newStepTrace(ev)
	for i := range ev {
		for j := i + 1; j <= len(ev); j++ {
			want := int64(-1)
			for _, e := range ev[i:j] {
				want = max(want, e.inUse)
			}
			if got := tr.maxInUse(i, j); got != want {
				t.Fatalf("maxInUse(%d, %d) = %d, want %d", i, j, got, want)
			}
		}
	}
}

// TestMedianRunMatchesMedianIndex checks the run-length median against medianIndex on the
// expanded record.
func TestMedianRunMatchesMedianIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 500 {
		var s runs[float64]
		for range 1 + rng.IntN(8) {
			s.add(float64(rng.IntN(4)), 1+rng.IntN(5))
		}
		xs := s.expand()
		if len(xs) != s.len() {
			t.Fatalf("expand gave %d entries, len %d", len(xs), s.len())
		}
		if got, want := medianRun(&s), medianIndex(xs); got != want {
			t.Fatalf("trial %d: medianRun(%v) = %d, medianIndex = %d", trial, xs, got, want)
		}
		for i, x := range xs {
			if s.at(i) != x {
				t.Fatalf("at(%d) = %v, want %v", i, s.at(i), x)
			}
		}
	}
}
