package analysis_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/scenarios"
	"github.com/gpusim/gpusim/train"
)

// counter is a RunFunc that counts simulations by scenario name.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) run(ctx context.Context, cfg train.Config) (*train.Result, error) {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[cfg.Name]++
	c.mu.Unlock()
	return train.Run(ctx, cfg)
}

func builtin(t *testing.T, name string, sets ...string) train.Config {
	t.Helper()
	s, err := scenarios.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAll(sets); err != nil {
		t.Fatal(err)
	}
	return s.Config
}

// Two multi-GPU runs with the same per-replica batch share one one-GPU baseline, and asking
// for a run again simulates nothing.
func TestSessionSharesBaselines(t *testing.T) {
	var c counter
	sess := analysis.NewSession(c.run)
	two := builtin(t, "mirrored-4xa100", "hardware.count=2", "batch=512", "precision=float32", "steps=5")
	four := builtin(t, "mirrored-4xa100", "batch=1024", "precision=float32", "steps=5")
	var scal []*analysis.Scaling
	for _, cfg := range []train.Config{two, four, two} {
		res, err := sess.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		scal = append(scal, res.Scaling)
	}
	if got, want := c.n["mirrored-4xa100"], 2; got != want {
		t.Errorf("multi-GPU runs simulated %d times, want %d", got, want)
	}
	if got := c.n["mirrored-4xa100 (1 GPU)"]; got != 1 {
		t.Errorf("one-GPU baseline simulated %d times, want 1 (shared)", got)
	}
	if sess.Simulations() != 3 {
		t.Errorf("Simulations() = %d, want 3", sess.Simulations())
	}
	if scal[0] == nil || scal[1] == nil || scal[0].SingleStepTime != scal[1].SingleStepTime {
		t.Errorf("scaling %+v and %+v: want the same one-GPU baseline", scal[0], scal[1])
	}
}

// A judged result is a copy: the notes a baseline adds do not leak into the shared run.
func TestSessionKeepsSharedRunsUnchanged(t *testing.T) {
	sess := analysis.NewSession(nil)
	cfg := builtin(t, "bert-base-h200", "steps=20", "precision=mixed_bfloat16")
	raw, err := sess.Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	notes := len(raw.Notes)
	res, err := sess.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.PrecisionSaving == nil {
		t.Fatal("no float32 comparison")
	}
	if len(raw.Notes) != notes {
		t.Errorf("shared run's notes grew from %d to %d", notes, len(raw.Notes))
	}
}

// TestInputBoundRemedies: the built-in input-bound scenario is diagnosed input-bound and the
// parallel map with prefetch is the remedy that helps most; with both set to AUTOTUNE it is
// compute-bound and nothing is re-simulated.
func TestInputBoundRemedies(t *testing.T) {
	sess := analysis.NewSession(nil)
	cfg := builtin(t, "input-bound", "steps=60")
	res, err := sess.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Diagnosis == nil || res.Diagnosis.Bound != analysis.InputBound {
		t.Fatalf("diagnosis %+v, want input-bound", res.Diagnosis)
	}
	if err := sess.Remedies(context.Background(), cfg, res); err != nil {
		t.Fatal(err)
	}
	if len(res.Remedies) < 3 {
		t.Fatalf("remedies %+v, want the candidates re-simulated", res.Remedies)
	}
	if got, want := strings.Join(res.Remedies[0].Set, " "), "input.map.parallel_calls=autotune input.prefetch=autotune"; got != want {
		t.Errorf("best remedy sets %q, want %q", got, want)
	}
	if cfg.Input.ParallelCalls != 0 || cfg.Input.Prefetch != 0 {
		t.Errorf("remedies changed the run's own input config: %+v", cfg.Input)
	}
	tuned := builtin(t, "input-bound", "steps=60", "input.prefetch=autotune", "input.map.parallel_calls=autotune")
	before := sess.Simulations()
	res, err = sess.Run(context.Background(), tuned)
	if err != nil {
		t.Fatal(err)
	}
	if res.Diagnosis == nil || res.Diagnosis.Bound != analysis.ComputeBound {
		t.Errorf("tuned diagnosis %+v, want compute-bound", res.Diagnosis)
	}
	if err := sess.Remedies(context.Background(), tuned, res); err != nil || res.Remedies != nil {
		t.Errorf("tuned remedies %+v (%v), want none", res.Remedies, err)
	}
	// The tuned run is the best remedy's configuration: already simulated.
	if sess.Simulations() != before {
		t.Errorf("tuned run simulated again (%d -> %d simulations)", before, sess.Simulations())
	}
}

// A mixed-precision run whose float32 twin the session has run takes its float32 baseline
// from that run's first steps (train.Result.Prefix) instead of simulating it, and gets the
// same comparison as a session that simulates the baseline.
func TestFloat32BaselineFromTheFloat32Run(t *testing.T) {
	for _, sets := range [][]string{{"batch=64"}, {"batch=96", "xla=true", "optimizer=adam"}, {"batch=128", "memory.mode=growth"}, {"batch=512"}} {
		f32 := builtin(t, "default", append([]string{"precision=float32"}, sets...)...)
		mixed := builtin(t, "default", append([]string{"precision=mixed_float16"}, sets...)...)
		var shared, alone counter
		sess := analysis.NewSession(shared.run)
		if _, err := sess.Run(context.Background(), f32); err != nil {
			t.Fatal(err)
		}
		got, err := sess.Run(context.Background(), mixed)
		if err != nil {
			t.Fatal(err)
		}
		want, err := analysis.NewSession(alone.run).Run(context.Background(), mixed)
		if err != nil {
			t.Fatal(err)
		}
		if n := shared.n["default (float32)"]; n != 0 {
			t.Errorf("%v: the float32 baseline was simulated %d times next to the float32 run, want 0", sets, n)
		}
		if want.OOM == nil && alone.n["default (float32)"] != 1 {
			t.Errorf("%v: alone, the float32 baseline was simulated %d times, want 1", sets, alone.n["default (float32)"])
		}
		if (got.PrecisionSaving == nil) != (want.PrecisionSaving == nil) || got.PrecisionSaving != nil && *got.PrecisionSaving != *want.PrecisionSaving {
			t.Errorf("%v: precision saving %+v from the float32 run, %+v simulated", sets, got.PrecisionSaving, want.PrecisionSaving)
		}
		if !slices.Equal(got.Notes, want.Notes) {
			t.Errorf("%v: notes %q from the float32 run, %q simulated", sets, got.Notes, want.Notes)
		}
	}
}
