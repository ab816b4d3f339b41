package analysis

import (
	"strings"
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
			for _, fc := range c.Changes {
				s = append(s, fc.Field+"="+fc.Value)
			}
		}
		return s
	}
	want := []string{"Input.ParallelCalls=autotune", "Input.Prefetch=autotune",
		"Input.ParallelCalls=autotune", "Input.Prefetch=autotune", "Input.Cache=file", "Batch=256"}
	if diff := cmp.Diff(want, names(Candidates(cfg))); diff != "" {
		t.Errorf("Candidates(default) (-want +got):\n%s", diff)
	}
	cfg.ParallelCalls, cfg.Prefetch, cfg.Cache = pipeline.Autotune, pipeline.Autotune, "memory"
	if diff := cmp.Diff([]string{"Batch=256"}, names(Candidates(cfg))); diff != "" {
		t.Errorf("Candidates(tuned) (-want +got):\n%s", diff)
	}
	cfg.Records = 1000 // 150 MB fits the RAM budget: memory cache
	cfg.Cache = "none"
	if got := names(Candidates(cfg)); got[0] != "Input.Cache=memory" {
		t.Errorf("Candidates(small dataset) = %v, want the memory cache first", got)
	}
}

// Each change does to a train.Config what its fields say, on a copy.
func TestChangeApplied(t *testing.T) {
	pc := pipeline.DefaultConfig()
	cfg := train.DefaultConfig()
	cfg.Input = &train.Input{Cache: "none"}
	got := map[string]train.Config{}
	for _, ch := range Candidates(pc) {
		c, err := ch.Applied(cfg)
		if err != nil {
			t.Fatal(err)
		}
		got[ch.Name] = c
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

// A field change sets ints (autotune is train.Autotune), bools and strings at any Go path, and
// says which field when the path, the value or the field's kind is wrong.
func TestFieldChangeApply(t *testing.T) {
	c := train.DefaultConfig()
	c.Input = &train.Input{}
	for _, fc := range []FieldChange{{"Batch", "96"}, {"XLA", "true"}, {"Input.Prefetch", "autotune"},
		{"Memory.Mode", "growth"}, {"Memory.LimitMiB", "4096"}} {
		if err := fc.apply(&c); err != nil {
			t.Fatalf("%+v: %v", fc, err)
		}
	}
	if c.Batch != 96 || !c.XLA || c.Input.Prefetch != train.Autotune || c.Memory.Mode != "growth" || c.Memory.LimitMiB != 4096 {
		t.Errorf("applied: batch %d xla %v prefetch %d memory %+v", c.Batch, c.XLA, c.Input.Prefetch, c.Memory)
	}
	noInput := train.DefaultConfig()
	for fc, want := range map[FieldChange]string{
		{"Batchh", "1"}:           "Batchh: train.Config has no such field",
		{"Batch", "many"}:         "Batch: strconv.ParseInt",
		{"XLA", "yes"}:            "XLA: strconv.ParseBool",
		{"Memory.Fraction", "1"}:  "Memory.Fraction: a float64 field",
		{"Input.Cache", "memory"}: "Input.Cache: not set in the configuration",
	} {
		if err := fc.apply(&noInput); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: error %v, want %q", fc, err, want)
		}
	}
}
