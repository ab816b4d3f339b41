package train

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParallelRunsAreIndependent runs the same configuration on several goroutines, as sweeps
// do: every run must give the sequential result (no shared mutable state).
func TestParallelRunsAreIndependent(t *testing.T) {
	c := cfgWith(func(c *Config) { c.GPUCount, c.Strategy, c.Precision = 2, "mirrored", "mixed_float16" })
	want := mustRun(t, c)
	var wg sync.WaitGroup
	got := make([]*Result, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := Run(context.Background(), c)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = res
		}()
	}
	wg.Wait()
	for i, g := range got {
		if diff := cmp.Diff(want, g); diff != "" {
			t.Errorf("parallel run %d differs (-sequential +parallel):\n%s", i, diff)
		}
	}
}
