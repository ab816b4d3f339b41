package analysis

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpusim/gpusim/pipeline"
	"github.com/gpusim/gpusim/train"
)

func TestCandidatesSkipWhatIsInForce(t *testing.T) {
	cfg := pipeline.DefaultConfig()
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
	cfg.ParallelCalls, cfg.Prefetch, cfg.Cache = pipeline.Autotune, pipeline.Autotune, "memory"
	if diff := cmp.Diff([]string{"batch=256"}, names(Candidates(cfg))); diff != "" {
		t.Errorf("Candidates(tuned) (-want +got):\n%s", diff)
	}
	cfg.Records = 1000 // 150 MB fits the RAM budget: memory cache
	cfg.Cache = "none"
	if got := names(Candidates(cfg)); got[0] != "input.cache=memory" {
		t.Errorf("Candidates(small dataset) = %v, want the memory cache first", got)
	}
}

// Each change does to a train.Config what its --set text says, on a copy.
func TestChangeApplied(t *testing.T) {
	pc := pipeline.DefaultConfig()
	cfg := train.DefaultConfig()
	cfg.Input = &train.Input{Cache: "none"}
	got := map[string]train.Config{}
	for _, ch := range Candidates(pc) {
		got[ch.Name] = ch.Applied(cfg)
	}
	both := got["map(num_parallel_calls=AUTOTUNE) + prefetch(AUTOTUNE)"]
	if both.Input.ParallelCalls != train.Autotune || both.Input.Prefetch != train.Autotune {
		t.Errorf("parallel map + prefetch: input %+v, want both autotune", both.Input)
	}
	if c := got["cache(filename) on local disk"]; c.Input.Cache != "file" {
		t.Errorf("file cache: cache %q", c.Input.Cache)
	}
	if c := got["batch twice as large"]; c.Batch != 2*pc.Batch {
		t.Errorf("batch twice as large: batch %d, want %d", c.Batch, 2*pc.Batch)
	}
	if cfg.Input.ParallelCalls != 0 || cfg.Input.Prefetch != 0 || cfg.Input.Cache != "none" {
		t.Errorf("the original config changed: %+v", cfg.Input)
	}
}
