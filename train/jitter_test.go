package train

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func mirrored8(c *Config) { c.GPUCount, c.Strategy, c.Batch = 8, "mirrored", 512 }

func meanStep(res *Result) float64 {
	var s float64
	for _, t := range res.StepTimes {
		s += t
	}
	return s / float64(len(res.StepTimes))
}

// TestJitterFastForwardMatchesFullSimulation runs 2,000 jittered steps of 8 replicas
// step by step and fast-forwarded (a window of jitterWindow steps replayed): the memory
// figures must be identical (jitter never changes an allocation), the mean step time,
// throughput and Horovod's exposed all-reduce within 0.5% (the window's standard error is
// about 0.1%).
func TestJitterFastForwardMatchesFullSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 3 x 2,000 steps of 8 GPUs in full")
	}
	for name, f := range map[string]func(c *Config){
		"mirrored8": mirrored8,
		"horovod8":  func(c *Config) { mirrored8(c); c.Strategy = "horovod" },
		// Loss scaling skips steps: each is simulated, the window reused after it.
		"mixed_float16": func(c *Config) { mirrored8(c); c.Precision = "mixed_float16" },
	} {
		c := cfgWith(f)
		c.Steps = 2000
		c.FastForward = false
		full := mustRun(t, c)
		c.FastForward = true
		ff := mustRun(t, c)
		if full.OOM != nil || ff.OOM != nil {
			t.Fatalf("%s: OOM", name)
		}
		if ff.FastForwarded < c.Steps/2 || full.FastForwarded != 0 {
			t.Errorf("%s: fast-forwarded %d steps (full simulation %d)", name, ff.FastForwarded, full.FastForwarded)
		}
		if len(ff.StepTimes) != c.Steps || ff.SkippedSteps != full.SkippedSteps {
			t.Errorf("%s: %d steps, %d skipped; full simulation %d, %d", name, len(ff.StepTimes), ff.SkippedSteps, len(full.StepTimes), full.SkippedSteps)
		}
		within := func(what string, a, b float64) {
			t.Logf("%s: %s %.6g simulated, %.6g fast-forwarded (%+.3f%%)", name, what, a, b, 100*(b/a-1))
			if math.Abs(a-b) > 0.005*math.Abs(a) {
				t.Errorf("%s: %s %.6g fast-forwarded, %.6g simulated (%.2f%%)", name, what, b, a, 100*(b/a-1))
			}
		}
		within("mean step", meanStep(full), meanStep(ff))
		within("median step", full.StepTime, ff.StepTime)
		within("throughput", full.Throughput, ff.Throughput)
		within("elapsed", full.Elapsed, ff.Elapsed)
		if full.AllReduce != nil && full.AllReduce.ExposedSeconds > 0 {
			// The exposed all-reduce is the small difference of two jittered times (the
			// all-reduce's end and the backward's), so its relative spread is wider.
			a, b := full.AllReduce.ExposedSeconds, ff.AllReduce.ExposedSeconds
			t.Logf("%s: exposed all-reduce %.6g simulated, %.6g fast-forwarded (%+.3f%%)", name, a, b, 100*(b/a-1))
			if math.Abs(a-b) > 0.02*a {
				t.Errorf("%s: exposed all-reduce %.6g fast-forwarded, %.6g simulated (%.2f%%, want within 2%%)", name, b, a, 100*(b/a-1))
			}
		}
		for i := range full.Devices {
			a, b := full.Devices[i], ff.Devices[i]
			within("busy fraction of "+a.Name, a.BusyFraction, b.BusyFraction)
			// The memory figures, less the timeline (its buckets lie at the steps' times)
			// and the busy fraction: identical.
			opts := cmpopts.IgnoreFields(Device{}, "Timeline", "BusyFraction")
			if diff := cmp.Diff(a, b, opts); diff != "" {
				t.Errorf("%s: %s memory differs (-full +ff):\n%s", name, a.Name, diff)
			}
			if pa, pb := peakOf(a.Timeline), peakOf(b.Timeline); pa != pb {
				t.Errorf("%s: %s timeline peak %d fast-forwarded, %d simulated", name, a.Name, pb, pa)
			}
		}
		// The replayed spans and utilization points cover every step, in time order.
		n, last := 0, -1.0
		ff.visitUtilization(func(u UtilPoint) {
			n++
			if u.T < last {
				t.Fatalf("%s: utilization point at %g after %g", name, u.T, last)
			}
			last = u.T
		})
		if n != c.Steps*c.GPUCount {
			t.Errorf("%s: %d utilization points, want %d", name, n, c.Steps*c.GPUCount)
		}
	}
}

func peakOf(tl []MemPoint) int64 {
	var m int64
	for _, p := range tl {
		m = max(m, p.MaxInUse)
	}
	return m
}

// TestJitterFastForwardOff checks where the jittered fast-forward must not run: an allocator
// whose state is proven by its bytes (the proof also asks for equal step times, which jitter
// never gives), one that is not TF's classic BFC, and a run shorter than the window, which
// stays exactly the step-by-step simulation.
func TestJitterFastForwardOff(t *testing.T) {
	c := cfgWith(func(c *Config) { c.GPUCount, c.Strategy, c.Batch = 2, "mirrored", 128 })
	c.Steps = 150
	if res := runKeyed(t, c); res.FastForwarded != 0 {
		t.Errorf("state-bytes allocator under jitter: %d steps fast-forwarded", res.FastForwarded)
	}
	async := c
	async.Memory.Allocator = "cuda_malloc_async"
	if res := mustRun(t, async); res.FastForwarded != 0 {
		t.Errorf("cuda_malloc_async under jitter: %d steps fast-forwarded", res.FastForwarded)
	}
	short := c
	short.Steps = jitterWindow
	ff := mustRun(t, short)
	short.FastForward = false
	full := mustRun(t, short)
	if ff.FastForwarded != 0 {
		t.Errorf("%d steps: %d fast-forwarded, want none (the window is not complete)", short.Steps, ff.FastForwarded)
	}
	if diff := cmp.Diff(full, ff, cmpopts.IgnoreFields(Result{}, "Events")); diff != "" {
		t.Errorf("a run shorter than the window differs from the full simulation (-full +ff):\n%s", diff)
	}
}

// TestJitterFastForwardDeterministic: the same seed gives the same result.
func TestJitterFastForwardDeterministic(t *testing.T) {
	c := cfgWith(mirrored8)
	c.Steps = 500
	a, b := mustRun(t, c), mustRun(t, c)
	if a.FastForwarded == 0 {
		t.Fatal("nothing fast-forwarded")
	}
	if diff := cmp.Diff(expandReplayed(a), expandReplayed(b), cmpopts.IgnoreFields(Result{}, "Events")); diff != "" {
		t.Errorf("two runs of one seed differ:\n%s", diff)
	}
}

// BenchmarkRunMirrored8Jitter is the long-run budget with the replicas' jitter on (the
// default): ResNet-50 on 8 GPUs, MirroredStrategy, 1M steps; target < 1 s.
func BenchmarkRunMirrored8Jitter(b *testing.B) {
	c := DefaultConfig()
	mirrored8(&c)
	c.Steps = 1_000_000
	b.ReportAllocs()
	benchRun(b, c)
}
