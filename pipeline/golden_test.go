package pipeline

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/summary.golden")

// TestSummaryGolden runs a table of pipelines against the input-bound scenario's training loop
// and compares a one-line summary of each with testdata/summary.golden (rewrite it with
// go test ./pipeline -run Golden -update, and review the diff).
func TestSummaryGolden(t *testing.T) {
	c := Consumer{Steps: 120, Warmup: 10, GPUPerElement: inputBoundGPUStep / 128}
	type row struct {
		name string
		mut  func(*Config)
	}
	rows := []row{
		{"defaults", func(*Config) {}},
		{"parallel_calls=4", func(c *Config) { c.ParallelCalls = 4 }},
		{"parallel_calls=4 prefetch=2", func(c *Config) { c.ParallelCalls, c.Prefetch = 4, 2 }},
		{"autotune both", func(c *Config) { c.ParallelCalls, c.Prefetch = Autotune, Autotune }},
		{"autotune both, 12 busy cores", func(c *Config) {
			c.ParallelCalls, c.Prefetch, c.Host.BusyCores = Autotune, Autotune, 12
		}},
		{"autotune both, pinned, to device", func(c *Config) {
			c.ParallelCalls, c.Prefetch, c.Pinned, c.PrefetchToDevice = Autotune, Autotune, true, true
		}},
		{"shuffle 1000, epochs of 2560", func(c *Config) {
			c.ParallelCalls, c.Prefetch, c.ShuffleBuffer, c.Records = Autotune, Autotune, 1000, 2560
		}},
		{"cache memory, epochs of 2560", func(c *Config) {
			c.ParallelCalls, c.Prefetch, c.Cache, c.Records = 8, 2, "memory", 2560
		}},
		{"slow storage 50 MB/s", func(c *Config) {
			c.ParallelCalls, c.Prefetch, c.StorageBandwidth = Autotune, Autotune, 50e6
		}},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-34s %9s %7s %7s %6s %5s %5s %6s %s\n", "config", "step", "util", "empty", "wbusy", "par", "pref", "epochs", "epoch s")
	for _, r := range rows {
		cfg := inputBound()
		r.mut(&cfg)
		run, err := Simulate(cfg, 1, c)
		if err != nil {
			t.Fatal(err)
		}
		s := run.Stats
		var eps []string
		for _, e := range s.Epochs {
			eps = append(eps, fmt.Sprintf("%.3f", e.Duration().Seconds()))
		}
		fmt.Fprintf(&b, "%-34s %7.2fms %7.3f %7.3f %6.3f %5d %5d %6d %s\n", r.name, 1e3*run.StepTimeMean.Seconds(),
			run.Utilization, s.BufferEmptyFraction, s.WorkerBusyFraction, s.Parallelism, s.PrefetchLimit, len(s.Epochs), strings.Join(eps, " "))
	}
	got := b.String()
	const path = "testdata/summary.golden"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("summary differs from %s (-want +got):\n%s", path, diff)
	}
}

func FuzzTunableText(f *testing.F) {
	for _, s := range []string{"autotune", "0", "16", "-1", "x", " 3 ", "AUTOTUNE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v Tunable
		if err := v.UnmarshalText([]byte(s)); err != nil {
			return
		}
		if v < Autotune {
			t.Fatalf("UnmarshalText(%q) = %d, below Autotune", s, v)
		}
		var back Tunable
		if err := back.UnmarshalText([]byte(v.String())); err != nil || back != v {
			t.Fatalf("round trip of %q: %v -> %q -> %v, %v", s, v, v.String(), back, err)
		}
	})
}
