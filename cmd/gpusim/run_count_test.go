package main

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/gpusim/gpusim/train"
)

// countingRun wraps train.Run and counts the simulations of each configuration.
type countingRun struct {
	mu    sync.Mutex
	runs  map[string]int
	names []string
}

func (c *countingRun) run(ctx context.Context, cfg train.Config) (*train.Result, error) {
	key, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.runs == nil {
		c.runs = map[string]int{}
	}
	c.runs[string(key)]++
	c.names = append(c.names, cfg.Name)
	c.mu.Unlock()
	return train.Run(ctx, cfg)
}

// gpusim run mirrored-4xa100 simulates the run, its one-GPU baseline and its float32 baseline,
// each once, and prints what gpusim run prints (testdata/scenarios/run.txt holds it: what it
// printed when train.Run ran itself again for each comparison).
func TestRunSimulatesEachConfigOnce(t *testing.T) {
	var c countingRun
	var out, errb bytes.Buffer
	if err := runWith(context.Background(), &out, &errb, []string{"mirrored-4xa100"}, c.run); err != nil {
		t.Fatalf("gpusim run mirrored-4xa100: %v\n%s", err, errb.String())
	}
	for key, n := range c.runs {
		if n != 1 {
			t.Errorf("simulated %d times: %s", n, key)
		}
	}
	if len(c.names) != 3 {
		t.Errorf("simulations %q, want 3: the run, one GPU and float32", c.names)
	}
	want, _, code := runCLI(t, "run", "mirrored-4xa100")
	if code != 0 || out.String() != want {
		t.Errorf("output differs from gpusim run mirrored-4xa100 (exit %d):\n%s", code, out.String())
	}
}
