package analysis_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/train/traintest"
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

// Two multi-GPU runs with the same per-replica batch share one one-GPU baseline, and asking
// for a run again simulates nothing.
func TestSessionSharesBaselines(t *testing.T) {
	var c counter
	sess := analysis.NewSession(c.run)
	two, four := traintest.Mirrored4xA100(), traintest.Mirrored4xA100()
	two.GPUCount, two.Batch, two.Precision, two.Steps = 2, 512, "float32", 5
	four.Batch, four.Precision, four.Steps = 1024, "float32", 5
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
	cfg := traintest.Steps(traintest.BertBaseH200(), 20)
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

// A mixed-precision run whose float32 twin the session has run takes its float32 baseline
// from that run's first steps (train.Result.Prefix) instead of simulating it, and gets the
// same comparison as a session that simulates the baseline.
func TestFloat32BaselineFromTheFloat32Run(t *testing.T) {
	for _, tc := range []struct {
		sets string
		edit func(*train.Config)
	}{
		{"batch=64", func(c *train.Config) { c.Batch = 64 }},
		{"batch=96 xla=true optimizer=adam", func(c *train.Config) { c.Batch, c.XLA, c.Optimizer = 96, true, "adam" }},
		{"batch=128 memory.mode=growth", func(c *train.Config) { c.Batch, c.Memory.Mode = 128, "growth" }},
		{"batch=512", func(c *train.Config) { c.Batch = 512 }},
	} {
		sets := tc.sets
		f32, mixed := with("default", tc.edit), with("default", tc.edit)
		f32.Precision, mixed.Precision = "float32", "mixed_float16"
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
