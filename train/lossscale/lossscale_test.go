package lossscale

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScalerKerasDynamics(t *testing.T) {
	s := New(DefaultConfig())
	if got, want := s.Scale(), 32768.0; got != want {
		t.Fatalf("initial scale = %g, want %g", got, want)
	}
	// 1999 finite steps: no growth yet; the 2000th doubles.
	for i := 0; i < 1999; i++ {
		if !s.Update(true) {
			t.Fatalf("finite step %d not applied", i)
		}
	}
	if got := s.Scale(); got != 32768 {
		t.Fatalf("scale after 1999 finite steps = %g, want 32768", got)
	}
	s.Update(true)
	if got := s.Scale(); got != 65536 {
		t.Fatalf("scale after 2000 finite steps = %g, want 65536", got)
	}
	if got := s.GoodSteps(); got != 0 {
		t.Errorf("counter after growth = %d, want 0", got)
	}
	// Overflow: skipped, halved, counter reset.
	for i := 0; i < 10; i++ {
		s.Update(true)
	}
	if s.Update(false) {
		t.Errorf("non-finite step applied, want skipped")
	}
	if got, want := s.Scale(), 32768.0; got != want || s.GoodSteps() != 0 {
		t.Errorf("after overflow scale = %g counter = %d, want %g and 0", got, s.GoodSteps(), want)
	}
}

func TestScalerFloorAtOne(t *testing.T) {
	s := New(DefaultConfig())
	for i := 0; i < 40; i++ {
		s.Update(false)
	}
	if got := s.Scale(); got != 1 {
		t.Errorf("scale after 40 overflows = %g, want 1 (floor)", got)
	}
}

func TestScalerFixed(t *testing.T) {
	s := New(Config{Dynamic: false, InitialScale: 128})
	tests := []struct {
		finite bool
		want   bool
	}{{true, true}, {false, false}, {true, true}}
	for i, tc := range tests {
		if got := s.Update(tc.finite); got != tc.want || s.Scale() != 128 {
			t.Errorf("step %d: Update(%v) = %v scale %g, want %v scale 128", i, tc.finite, got, s.Scale(), tc.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{Dynamic: true, InitialScale: 0.5, GrowthSteps: 10, Multiplier: 2},
		{Dynamic: true, InitialScale: 8, GrowthSteps: 0, Multiplier: 2},
		{Dynamic: true, InitialScale: 8, GrowthSteps: 10, Multiplier: 1},
		{Dynamic: true, InitialScale: math.Inf(1), GrowthSteps: 10, Multiplier: 2},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want error", c)
		}
	}
}

func TestSimulateShowsSkippedSteps(t *testing.T) {
	res, err := Simulate(DefaultConfig(), DefaultGradientModel(), 10000, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped == 0 {
		t.Fatalf("default model skipped no step; want the first steps at 2^15 to overflow")
	}
	if !res.Steps[0].Applied {
		// With max|g| ~ 3 at step 0, 3*32768 > 65504: expected to overflow with 8 replicas.
		t.Logf("step 0 applied (scale %g, max %g)", res.Steps[0].Scale, res.Steps[0].MaxGrad)
	}
	// The scale must settle where max|g|*scale fits in float16 most of the time.
	if res.FinalScale > 1<<15 || res.FinalScale < 1<<8 {
		t.Errorf("final scale = %g, want between 2^8 and 2^15", res.FinalScale)
	}
	// Invariants of every step.
	for i, st := range res.Steps {
		overflow := st.MaxGrad*st.Scale > Float16Max
		if st.Applied == overflow {
			t.Fatalf("step %d: applied=%v with max %g scale %g", i, st.Applied, st.MaxGrad, st.Scale)
		}
		if i > 0 {
			prev := res.Steps[i-1]
			switch {
			case !prev.Applied && st.Scale != math.Max(prev.Scale/2, 1):
				t.Fatalf("step %d: scale %g after a skip at %g", i, st.Scale, prev.Scale)
			case prev.Applied && st.Scale != prev.Scale && st.Scale != 2*prev.Scale:
				t.Fatalf("step %d: scale %g after %g", i, st.Scale, prev.Scale)
			}
		}
	}
}

func TestSimulateReplicasSkipTogether(t *testing.T) {
	// More replicas see a larger maximum, so they skip at least as often.
	m := DefaultGradientModel()
	one, _ := Simulate(DefaultConfig(), m, 20000, 1, 7)
	eight, _ := Simulate(DefaultConfig(), m, 20000, 8, 7)
	if eight.Skipped < one.Skipped {
		t.Errorf("skipped with 8 replicas = %d, with 1 = %d; want 8 >= 1", eight.Skipped, one.Skipped)
	}
}

func TestSimulateNaNRisk(t *testing.T) {
	m := DefaultGradientModel()
	m.NaNProb = 1
	res, err := Simulate(DefaultConfig(), m, 40, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != 40 || res.FinalScale != 1 {
		t.Errorf("always-NaN run: skipped %d final scale %g, want 40 and 1", res.Skipped, res.FinalScale)
	}
	if len(res.Warnings) == 0 {
		t.Errorf("always-NaN run gave no warning")
	}
}

func TestSimulateDeterministic(t *testing.T) {
	a, _ := Simulate(DefaultConfig(), DefaultGradientModel(), 3000, 4, 42)
	b, _ := Simulate(DefaultConfig(), DefaultGradientModel(), 3000, 4, 42)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs with seed 42 differ:\n%s", diff)
	}
	c, _ := Simulate(DefaultConfig(), DefaultGradientModel(), 3000, 4, 43)
	if cmp.Equal(a, c) {
		t.Errorf("seeds 42 and 43 gave identical runs")
	}
}

func TestUnderflow(t *testing.T) {
	m := GradientModel{Log10Median: math.Log10(Float16MinSubnormal), ElementSigma: 1}
	if got := m.underflow(1); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("underflow at the median = %g, want 0.5", got)
	}
	if got := m.underflow(1 << 15); got > 0.001 {
		t.Errorf("underflow with scale 2^15 = %g, want < 0.001 (4.5 sigma)", got)
	}
}

func TestSimulateBadInput(t *testing.T) {
	if _, err := Simulate(DefaultConfig(), GradientModel{Sigma: -1}, 10, 1, 1); err == nil {
		t.Errorf("negative sigma accepted")
	}
	if _, err := Simulate(DefaultConfig(), DefaultGradientModel(), 10, 0, 1); err == nil {
		t.Errorf("0 replicas accepted")
	}
}

func BenchmarkSimulate(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Simulate(DefaultConfig(), DefaultGradientModel(), 10000, 8, uint64(i))
	}
	b.ReportMetric(float64(b.N)*10000/b.Elapsed().Seconds(), "steps/s")
}
