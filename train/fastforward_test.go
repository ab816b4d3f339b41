package train

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/pipeline"
)

// keyedAlloc gives an allocator a state key built from its statistics, so that the
// fast-forward machinery can be compared with a full simulation. (Statistics are not a proof
// of equal state; the test checks that replaying gives exactly what simulating gives.)
type keyedAlloc struct{ allocator.Allocator }

func (k keyedAlloc) AppendState(dst []byte) []byte {
	s := k.Stats()
	for _, v := range []int64{s.BytesInUse, s.PoolBytes, s.LargestFreeBlockBytes, s.BytesLimit} {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
	}
	return dst
}

func runKeyed(t *testing.T, c Config) *Result {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := newRunner(c, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, rep := range r.replicas {
		rep.alloc = keyedAlloc{rep.alloc}
	}
	r.replay.ffPossible = c.FastForward && r.feed.input == nil
	res, err := r.run()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestFastForwardMatchesFullSimulation(t *testing.T) {
	for name, f := range map[string]func(c *Config){
		"default":  nil,
		"growth":   func(c *Config) { g := true; c.Memory.Growth = &g },
		"mirrored": func(c *Config) { c.GPUCount, c.Strategy, c.Batch, c.SymmetricReplicas = 2, "mirrored", 64, true },
		// Loss scaling skips some steps: those are simulated, the stretches between replayed.
		"mixed_float16": func(c *Config) { c.Precision = "mixed_float16" },
	} {
		c := cfgWith(f)
		c.Steps = 200
		c.FastForward = false
		full := runKeyed(t, c)
		c.FastForward = true
		ff := runKeyed(t, c)
		if ff.FastForwarded == 0 {
			t.Errorf("%s: nothing was fast-forwarded", name)
		}
		if full.FastForwarded != 0 {
			t.Errorf("%s: FastForward=false still fast-forwarded %d steps", name, full.FastForwarded)
		}
		opts := cmpopts.IgnoreFields(Result{}, "FastForwarded", "Events")
		if diff := cmp.Diff(expandReplayed(full), expandReplayed(ff), opts); diff != "" {
			t.Errorf("%s: fast-forwarded result differs from the full simulation (-full +ff):\n%s", name, diff)
		}
	}
}

// TestBFCFastForwardMatchesFullSimulation checks the structural proof on TF's BFC itself:
// for configurations that grow the pool, share GPUs, accumulate, skip steps or run next to
// another process, the fast-forwarded result equals the step-by-step one.
func TestBFCFastForwardMatchesFullSimulation(t *testing.T) {
	g := true
	for name, f := range map[string]func(c *Config){
		"default": nil,
		"growth":  func(c *Config) { c.Memory.Growth = &g },
		"growth-gpt2": func(c *Config) {
			c.Memory.Growth, c.Model, c.Batch, c.GPU, c.Optimizer = &g, "gpt2", 4, "a100-80gb", "adam"
		},
		"mirrored": func(c *Config) {
			c.GPUCount, c.Strategy, c.Batch, c.NumPacks, c.SymmetricReplicas = 4, "mirrored", 96, 2, true
		},
		"accumulation": func(c *Config) { c.AccumulationSteps, c.Batch = 4, 128 },
		"mixed":        func(c *Config) { c.Precision, c.Optimizer = "mixed_float16", "adam" },
		"xla":          func(c *Config) { c.XLA, c.Optimizer = true, "rmsprop" },
		"xla-shapes":   func(c *Config) { c.XLA, c.XLADistinctShapes = true, 3 },
		"xla-growth":   func(c *Config) { c.XLA, c.Memory.Growth, c.Precision = true, &g, "mixed_float16" },
		"near-limit":   func(c *Config) { c.GPU, c.Batch, c.Memory.Growth = "t4", 160, &g },
		"virtual": func(c *Config) {
			c.Strategy, c.Memory.LogicalMiB, c.SymmetricReplicas = "mirrored", []int64{12000, 12000}, true
		},
		"jupyter": func(c *Config) {
			c.Processes = []Process{{Name: "jupyter", UsedBytes: 3 << 30, Memory: Memory{Growth: &g}}}
		},
	} {
		c := cfgWith(f)
		c.Steps = 120
		c.FastForward = false
		full := mustRun(t, c)
		c.FastForward = true
		ff := mustRun(t, c)
		if full.OOM == nil && ff.FastForwarded == 0 {
			t.Errorf("%s: nothing was fast-forwarded", name)
		}
		opts := cmpopts.IgnoreFields(Result{}, "FastForwarded", "Events")
		if diff := cmp.Diff(expandReplayed(full), expandReplayed(ff), opts); diff != "" {
			t.Errorf("%s: fast-forwarded result differs from the full simulation (-full +ff):\n%s", name, diff)
		}
	}
}

// expandReplayed returns a copy of res with the replayed stretches' spans and utilization
// points written out into Spans and Utilization, as a step-by-step run records them.
func expandReplayed(res *Result) *Result {
	c := *res
	c.Spans, c.Utilization, c.Replayed = nil, nil, nil
	res.visitSpans(func(s Span) { c.Spans = append(c.Spans, s) })
	res.visitUtilization(func(u UtilPoint) { c.Utilization = append(c.Utilization, u) })
	return &c
}

// TestFastForwardLongRunMatchesFullSimulation runs long enough for the memory timeline to
// merge its buckets many times (few points, many steps) and for the nvidia-smi windows to hold
// several steps, where the replay works on whole buckets and windows at once.
func TestFastForwardLongRunMatchesFullSimulation(t *testing.T) {
	for name, f := range map[string]func(c *Config){
		"default":  nil,
		"mlp":      func(c *Config) { c.Model, c.Batch = "mlp", 32 },
		"mirrored": func(c *Config) { c.GPUCount, c.Strategy, c.Batch, c.SymmetricReplicas = 2, "mirrored", 64, true },
		"mixed":    func(c *Config) { c.Precision = "mixed_float16" },
	} {
		c := cfgWith(f)
		c.Steps, c.TimelinePoints = 1500, 7
		c.FastForward = false
		full := mustRun(t, c)
		c.FastForward = true
		ff := mustRun(t, c)
		if ff.FastForwarded < 1000 {
			t.Errorf("%s: %d steps fast-forwarded, want most of %d", name, ff.FastForwarded, c.Steps)
		}
		opts := cmpopts.IgnoreFields(Result{}, "FastForwarded", "Events")
		if diff := cmp.Diff(expandReplayed(full), expandReplayed(ff), opts); diff != "" {
			t.Errorf("%s: fast-forwarded result differs from the full simulation (-full +ff):\n%s", name, diff)
		}
	}
}

// TestInputReplayMatchesFullSimulation checks the replay of a step's GPU part after its
// batch (runs fed by tf.data) against simulating every op: input-bound, GPU-bound with a
// prefetching pipeline, a cache filling in the first epoch, memory growth, and mixed
// precision with its loss-scale skips, which are simulated again.
func TestInputReplayMatchesFullSimulation(t *testing.T) {
	g := true
	for name, f := range map[string]func(in *Input, c *Config){
		"sequential": nil,
		"autotune":   func(in *Input, c *Config) { in.Prefetch, in.ParallelCalls = Autotune, Autotune },
		"cache":      func(in *Input, c *Config) { in.Cache, in.Pipeline.Records = "memory", 640 },
		"growth":     func(in *Input, c *Config) { in.Prefetch, c.Memory.Growth = 2, &g },
		"mixed":      func(in *Input, c *Config) { in.ParallelCalls, c.Precision = 4, "mixed_float16" },
		"xla":        func(in *Input, c *Config) { in.ParallelCalls, c.XLA = Autotune, true },
	} {
		c := cfgWith(func(c *Config) {
			in := Input{Cache: "none", Pipeline: pipeline.DefaultConfig()}
			if f != nil {
				f(&in, c)
			}
			c.Input = &in
		})
		c.Steps = 150
		c.FastForward = false
		full := mustRun(t, c)
		c.FastForward = true
		ff := mustRun(t, c)
		if ff.FastForwarded < 100 {
			t.Errorf("%s: %d of %d steps replayed, want most", name, ff.FastForwarded, c.Steps)
		}
		opts := cmpopts.IgnoreFields(Result{}, "FastForwarded", "Events")
		if diff := cmp.Diff(expandReplayed(full), expandReplayed(ff), opts); diff != "" {
			t.Errorf("%s: replayed result differs from the full simulation (-full +replay):\n%s", name, diff)
		}
	}
}
