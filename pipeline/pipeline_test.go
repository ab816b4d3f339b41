package pipeline

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpusim/gpusim/sim"
)

// small returns a quick pipeline: 2 ms of CPU per element, batches of 32, 16 cores.
func small() Config {
	c := DefaultConfig()
	c.Records = 3200
	c.Batch = 32
	c.MapCost = Const(2e-3)
	c.RecordBytes = 1 << 10
	c.ElementBytes = 48 << 10
	return c
}

func TestCacheSecondEpochSkipsReadAndMap(t *testing.T) {
	// Storage is slow (1 MB/s for 100 KB records: 100 ms a record) and the map costs 2 ms on
	// 16 workers, so the first epoch is read-bound; the consumer takes 1 ms a step.
	base := small()
	base.Records = 320
	base.RecordBytes = 100_000
	base.StorageBandwidth = 1e6
	base.ParallelCalls = 16
	base.Prefetch = 2
	readEpoch := 320 * 0.1 // seconds: the serial reader
	for _, tc := range []struct {
		name       string
		cache      string
		beforeMap  bool
		lo2, hi2   float64 // bounds on epoch 2's duration, seconds
		fromCache2 bool
	}{
		{"none", "none", false, 0.98 * readEpoch, 1.05 * readEpoch, false},
		// Mapped elements come from memory: only the consumer's 10 steps of 1 ms remain.
		{"memory", "memory", false, 0, 0.05, true},
		// A file cache reads 48 KB elements at 7 GB/s, then no map.
		{"file", "file", false, 0, 0.05, true},
		// Caching the raw records skips the read, not the map: 320 × 2 ms on 16 workers.
		{"memory before map", "memory", true, 0.035, 0.07, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			cfg.Cache = tc.cache
			cfg.CacheBeforeMap = tc.beforeMap
			r, err := Simulate(cfg, 1, Consumer{Steps: 20, GPUFixed: 1e-3})
			if err != nil {
				t.Fatal(err)
			}
			ep := r.Stats.Epochs
			if len(ep) != 2 {
				t.Fatalf("%d epochs, want 2", len(ep))
			}
			d1, d2 := ep[0].Duration().Seconds(), ep[1].Duration().Seconds()
			if d1 < 0.98*readEpoch || d1 > 1.05*readEpoch {
				t.Errorf("epoch 1 took %.3f s, want the read time %.1f s", d1, readEpoch)
			}
			if d2 < tc.lo2 || d2 > tc.hi2 {
				t.Errorf("epoch 2 took %.4f s, want %.3f..%.3f s", d2, tc.lo2, tc.hi2)
			}
			if ep[1].FromCache != tc.fromCache2 {
				t.Errorf("epoch 2 FromCache = %v, want %v", ep[1].FromCache, tc.fromCache2)
			}
			if tc.cache == "memory" {
				want := int64(320) * cfg.ElementBytes
				if tc.beforeMap {
					want = int64(320) * cfg.RecordBytes
				}
				if r.Stats.CacheBytes != want {
					t.Errorf("CacheBytes = %d, want %d", r.Stats.CacheBytes, want)
				}
			}
		})
	}
}

func TestMemoryCacheLargerThanHostIsHostOOM(t *testing.T) {
	cfg := small()
	cfg.Cache = "memory"
	cfg.Host.MemoryBytes = 100 * cfg.ElementBytes // room for 100 of 3200 elements
	cfg.ParallelCalls = 8
	cfg.Prefetch = 1
	r, err := Simulate(cfg, 1, Consumer{Steps: 150, GPUFixed: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Stats.HostOOM || r.Stats.CacheComplete || len(r.Stats.Notes) == 0 {
		t.Errorf("HostOOM %v, CacheComplete %v, notes %q: want an OOM note and no complete cache",
			r.Stats.HostOOM, r.Stats.CacheComplete, r.Stats.Notes)
	}
	if r.Stats.CacheBytes > cfg.Host.MemoryBytes {
		t.Errorf("CacheBytes %d above the host's %d", r.Stats.CacheBytes, cfg.Host.MemoryBytes)
	}
}

func TestAutotuneRaisesThroughputOfInputBoundRun(t *testing.T) {
	cfg := small()
	cfg.ParallelCalls = 1
	cfg.Prefetch = 1
	c := Consumer{Steps: 400, Warmup: 20, GPUFixed: 8e-3}
	slow, err := Simulate(cfg, 1, c)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ParallelCalls, cfg.Prefetch = Autotune, Autotune
	fast, err := Simulate(cfg, 1, c)
	if err != nil {
		t.Fatal(err)
	}
	// One worker makes a batch in 64 ms; 16 make it in 4 ms, under the 8 ms step.
	if got, want := fast.SamplesPerSecond/slow.SamplesPerSecond, 6.0; got < want {
		t.Errorf("autotune throughput %.0f/s vs %.0f/s: ratio %.2f, want >= %.1f",
			fast.SamplesPerSecond, slow.SamplesPerSecond, got, want)
	}
	if fast.Stats.Parallelism != 16 {
		t.Errorf("autotuned parallelism = %d, want the 16 cores", fast.Stats.Parallelism)
	}
	if len(fast.Stats.Autotune) == 0 || fast.Stats.Autotune[0].Value != 16 {
		t.Errorf("autotune events %v: want an initial parallelism of min(16, cores)", fast.Stats.Autotune)
	}
	if fast.Utilization < 0.9 || slow.Utilization > 0.2 {
		t.Errorf("utilization %.3f -> %.3f, want <= 0.2 -> >= 0.9", slow.Utilization, fast.Utilization)
	}
}

func TestAutotuneParallelismStartsAtMin16Cores(t *testing.T) {
	for _, tc := range []struct{ cores, want int }{{4, 4}, {16, 16}, {64, 16}} {
		cfg := small()
		cfg.Host.Cores = tc.cores
		cfg.ParallelCalls = Autotune
		e := sim.NewEngine()
		p := New(e, cfg, sim.Stream(1, "input"))
		p.Get(func(sim.Time) {})
		e.Run(sim.Millisecond) // before the first optimization at 10 ms
		if got := p.Stats().Parallelism; got != tc.want {
			t.Errorf("cores %d: initial parallelism %d, want %d", tc.cores, got, tc.want)
		}
	}
}

func TestAutotuneHillClimbReachesCoresAndRespectsRAMBudget(t *testing.T) {
	cfg := small()
	cfg.Host.Cores = 64
	cfg.ParallelCalls = Autotune
	r, err := Simulate(cfg, 1, Consumer{Steps: 60, GPUFixed: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Stats.Parallelism != 64 {
		t.Errorf("parallelism after hill climb = %d, want 64 (the cores)", r.Stats.Parallelism)
	}
	// A RAM budget (half the host's memory) of 20 elements stops the climb at 21.
	cfg.Host.MemoryBytes = 40 * cfg.ElementBytes
	cfg.Prefetch = 0
	r, err = Simulate(cfg, 1, Consumer{Steps: 60, GPUFixed: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Stats.Parallelism != 21 {
		t.Errorf("parallelism under a 20-element RAM budget = %d, want 21", r.Stats.Parallelism)
	}
}

func TestPrefetchTuner(t *testing.T) {
	type step struct {
		empty bool // RecordEmpty, else RecordConsumption(size)
		size  int
		limit int // limit after the step
	}
	for _, tc := range []struct {
		name  string
		free  int64
		steps []step
	}{
		{"grows only after reaching its limit", 1 << 40, []step{
			{false, 1, 1}, // upswing, buffer at limit: downswing
			{true, 0, 2},  // empty in downswing: double, upswing
			{true, 0, 2},  // empty in upswing: nothing
			{false, 1, 2}, // below limit
			{false, 2, 2}, // at limit: downswing
			{true, 0, 4},
		}},
		{"capped by free memory", 3, []step{
			{false, 1, 1}, {true, 0, 2}, {false, 2, 2}, {true, 0, 3}, {false, 3, 3}, {true, 0, 3},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tu := newPrefetchTuner(Autotune)
			for i, s := range tc.steps {
				if s.empty {
					tu.recordEmpty(tc.free, 1)
				} else {
					tu.recordConsumption(s.size)
				}
				if tu.limit != s.limit {
					t.Fatalf("step %d: limit %d, want %d", i, tu.limit, s.limit)
				}
			}
		})
	}
	// Past kBufferLimitThreshold (2048) the limit grows by 2048.
	tu := prefetchTuner{auto: true, limit: 2048}
	tu.recordEmpty(1<<40, 1)
	if tu.limit != 4096 {
		t.Errorf("limit 2048 grew to %d, want 4096", tu.limit)
	}
	fixed := newPrefetchTuner(3)
	fixed.recordConsumption(3)
	fixed.recordEmpty(1<<40, 1)
	if fixed.limit != 3 {
		t.Errorf("prefetch(3) limit became %d", fixed.limit)
	}
}

func TestPrefetchAutotuneGrowsWithBurstyConsumer(t *testing.T) {
	// The consumer alternates a long and a short step, so the buffer fills, then drains.
	cfg := small()
	cfg.ParallelCalls = 4
	cfg.Prefetch = Autotune
	e := sim.NewEngine()
	p := New(e, cfg, sim.Stream(1, "input"))
	steps := 0
	var next func()
	next = func() {
		p.Get(func(ready sim.Time) {
			steps++
			d := sim.Millisecond
			if steps%8 == 0 {
				d = 200 * sim.Millisecond
			}
			if steps < 90 {
				e.After(d, next)
			}
		})
	}
	next()
	e.Run(-1)
	if got := p.Stats().PrefetchLimit; got < 4 {
		t.Errorf("prefetch limit %d after a bursty consumer, want it grown to >= 4", got)
	}
}

func TestShuffleBufferFillsAtEachEpochStart(t *testing.T) {
	cfg := small()
	cfg.Records = 640
	cfg.ParallelCalls = 16
	cfg.Prefetch = 2
	cfg.ShuffleBuffer = 320 // 320 elements × 2 ms / 16 workers = 40 ms before the first batch
	r, err := Simulate(cfg, 1, Consumer{Steps: 40, GPUFixed: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range r.Stats.Epochs {
		lat := (ep.FirstBatch - ep.Start).Seconds()
		if lat < 0.040 || lat > 0.046 {
			t.Errorf("epoch %d: first batch after %.4f s, want the 40 ms shuffle fill (+ a batch)", ep.Index, lat)
		}
	}
	if want := int64(320) * cfg.ElementBytes; r.Stats.PeakHostBytes < want {
		t.Errorf("PeakHostBytes %d, want at least the shuffle buffer's %d", r.Stats.PeakHostBytes, want)
	}
}

func TestKerasEpochsRestartButRepeatDoesNot(t *testing.T) {
	cfg := small()
	cfg.Records = 320
	cfg.ParallelCalls = 8
	cfg.Prefetch = 4
	c := Consumer{Steps: 40, GPUFixed: 10e-3}
	keras, err := Simulate(cfg, 1, c)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Repeat = true
	rep, err := Simulate(cfg, 1, c)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh iterator per epoch refills its pipeline: 3 restarts of ~8 ms (32 × 2 ms / 8).
	if d := (keras.End - rep.End).Seconds(); d < 0.020 {
		t.Errorf("Keras-style epochs end %.4f s after repeat(), want the refill stalls (>= 20 ms)", d)
	}
	if len(keras.Stats.Epochs) != 4 || len(rep.Stats.Epochs) < 4 {
		t.Errorf("epochs: Keras %d, repeat %d, want 4 and >= 4", len(keras.Stats.Epochs), len(rep.Stats.Epochs))
	}
}

func TestPartialLastBatch(t *testing.T) {
	for _, drop := range []bool{false, true} {
		cfg := small()
		cfg.Records = 100 // 3 batches of 32 and one of 4
		cfg.DropRemainder = drop
		cfg.ParallelCalls = 4
		cfg.Prefetch = 2
		r, err := Simulate(cfg, 1, Consumer{Steps: 8, GPUFixed: 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		want := []int{4, 100}
		if drop {
			want = []int{3, 96}
		}
		ep := r.Stats.Epochs[0]
		if got := []int{ep.Batches, ep.Elements}; !cmp.Equal(got, want) {
			t.Errorf("drop_remainder=%v: epoch 1 batches, elements = %v, want %v", drop, got, want)
		}
	}
}

func TestDeterministic(t *testing.T) {
	cfg := small()
	cfg.MapCost = Dist{Kind: "lognormal", Mean: 2e-3, Stddev: 1e-3}
	cfg.ParallelCalls = Autotune
	cfg.Prefetch = Autotune
	cfg.ShuffleBuffer = 100
	c := Consumer{Steps: 300, GPUFixed: 5e-3}
	a, err := Simulate(cfg, 42, c)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Simulate(cfg, 42, c)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different runs (-first +second):\n%s", diff)
	}
	d, _ := Simulate(cfg, 43, c)
	if a.End == d.End {
		t.Errorf("seeds 42 and 43 ended at the same time %v: the map costs are not drawn", a.End)
	}
}

func TestSequentialMapIsSerialWithConsumer(t *testing.T) {
	// No parallelism, no prefetch: every step pays the whole batch on the consumer's thread.
	cfg := small()
	cfg.Pinned = true
	r, err := Simulate(cfg, 1, Consumer{Steps: 50, Warmup: 5, GPUFixed: 10e-3})
	if err != nil {
		t.Fatal(err)
	}
	copy := (float64(32*cfg.ElementBytes)/cfg.H2DBandwidth + cfg.H2DLatency)
	read := float64(cfg.RecordBytes) / cfg.StorageBandwidth
	want := 32*(read+2e-3) + copy + 10e-3
	if got := r.StepTimeMean.Seconds(); math.Abs(got-want) > 1e-6 {
		t.Errorf("step %.6f s, want batch (read + map) + copy + GPU = %.6f s", got, want)
	}
	if r.Stats.BufferEmptyFraction != 1 {
		t.Errorf("BufferEmptyFraction = %v, want 1 without prefetch", r.Stats.BufferEmptyFraction)
	}
	if r.Stats.WorkerBusyFraction < 0.85 {
		t.Errorf("WorkerBusyFraction %.2f: the one pulling thread is busy most of the time", r.Stats.WorkerBusyFraction)
	}
}

func TestBusyCoresLimitTheMap(t *testing.T) {
	cfg := small()
	cfg.ParallelCalls = 16
	cfg.Prefetch = 4
	c := Consumer{Steps: 200, Warmup: 20, GPUFixed: 1e-3}
	free, _ := Simulate(cfg, 1, c)
	cfg.Host.BusyCores = 12 // 4 cores left
	busy, _ := Simulate(cfg, 1, c)
	// 16 workers make a batch in 4 ms; on 4 cores it takes 16 ms.
	if got := busy.StepTimeMean.Seconds() / free.StepTimeMean.Seconds(); got < 3.5 || got > 4.5 {
		t.Errorf("step with 12 busy cores / free = %.2f, want ~4", got)
	}
}

func TestLevelSeriesIsDownsampled(t *testing.T) {
	cfg := small()
	cfg.Records = 100000
	cfg.ParallelCalls = 16
	cfg.Prefetch = 8
	e := sim.NewEngine()
	p := NewWithOptions(e, cfg, sim.Stream(1, "input"), Options{LevelPoints: 64, LevelPeriod: sim.Millisecond})
	n := 0
	var next func()
	next = func() {
		p.Get(func(sim.Time) {
			if n++; n < 2000 {
				e.After(5*sim.Millisecond, next)
			}
		})
	}
	next()
	e.Run(-1)
	lv := p.Stats().BufferLevel
	if len(lv) == 0 || len(lv) > 64 {
		t.Fatalf("%d level samples, want 1..64", len(lv))
	}
	var sum float64
	var width sim.Time
	for _, s := range lv {
		if s.Mean > s.Max+1e-9 || s.Max > 8 {
			t.Fatalf("sample %+v: mean above max, or above the limit 8", s)
		}
		sum += s.Mean * float64(s.Width)
		width += s.Width
	}
	if width != e.Now() {
		t.Errorf("samples cover %v, want the run's %v", width, e.Now())
	}
	if avg := sum / float64(width); avg < 6 {
		t.Errorf("mean buffer level %.2f, want nearly full (8) for a fast producer", avg)
	}
}

// Validate names the bad field by its Go path (train prefixes Input.Pipeline, scenarios maps
// it to the key).
func TestValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.Records = 0 }, "Records"},
		{func(c *Config) { c.Batch = -1 }, "Batch"},
		{func(c *Config) { c.ParallelCalls = -3 }, "ParallelCalls"},
		{func(c *Config) { c.Prefetch = -2 }, "Prefetch"},
		{func(c *Config) { c.Cache = "disk" }, "Cache"},
		{func(c *Config) { c.MapCost.Kind = "gamma" }, "MapCost"},
		{func(c *Config) { c.StorageBandwidth = math.NaN() }, "StorageBandwidth"},
		{func(c *Config) { c.Host.BusyCores = 16 }, "Host.BusyCores"},
	} {
		c := DefaultConfig()
		tc.mut(&c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want+":") {
			t.Errorf("Validate() = %v, want an error starting %q", err, tc.want+":")
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("DefaultConfig().Validate() = %v", err)
	}
}

func TestTunableText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Tunable
		bad  bool
	}{{"autotune", Autotune, false}, {"AUTOTUNE", Autotune, false}, {"tf.data.AUTOTUNE", Autotune, false},
		{"-1", Autotune, false}, {"0", 0, false}, {"12", 12, false}, {"-2", 0, true}, {"lots", 0, true}} {
		var got Tunable
		err := got.UnmarshalText([]byte(tc.in))
		if (err != nil) != tc.bad || (!tc.bad && got != tc.want) {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
	if s := Autotune.String(); s != "autotune" {
		t.Errorf("Autotune.String() = %q", s)
	}
}

func TestDistSample(t *testing.T) {
	r := sim.Stream(7, "dist")
	for _, d := range []Dist{Const(2), {Kind: "normal", Mean: 2, Stddev: 0.5}, {Kind: "lognormal", Mean: 2, Stddev: 0.5},
		{Kind: "exponential", Mean: 2}, {Kind: "uniform", Mean: 2, Stddev: 0.5}} {
		const n = 20000
		var s, s2 float64
		for i := 0; i < n; i++ {
			x := d.Sample(r)
			if x < 0 {
				t.Fatalf("%+v drew %v < 0", d, x)
			}
			s += x
			s2 += x * x
		}
		mean := s / n
		sd := math.Sqrt(s2/n - mean*mean)
		wantSD := d.Stddev
		if d.Kind == "exponential" {
			wantSD = d.Mean
		}
		if math.Abs(mean-d.Mean) > 0.03*d.Mean || math.Abs(sd-wantSD) > 0.05*d.Mean {
			t.Errorf("%+v: mean %.3f sd %.3f, want %.3f and %.3f", d, mean, sd, d.Mean, wantSD)
		}
	}
}

// BenchmarkPipeline simulates 1,000 training steps fed by a 16-worker map (batches of 32,
// 2 ms per element, prefetch 2) and reports simulated steps per wall-clock second.
func BenchmarkPipeline(b *testing.B) {
	cfg := small()
	cfg.Records = 1 << 20
	cfg.ParallelCalls = 16
	cfg.Prefetch = 2
	c := Consumer{Steps: 1000, GPUFixed: 5e-3}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Simulate(cfg, uint64(i), c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*c.Steps)/b.Elapsed().Seconds(), "steps/s")
}

func TestFinishedRunLeavesNoTimers(t *testing.T) {
	cfg := small()
	cfg.ParallelCalls = Autotune
	cfg.Prefetch = Autotune
	e := sim.NewEngine()
	p := New(e, cfg, sim.Stream(1, "input"))
	var last sim.Time
	n := 0
	var next func()
	next = func() {
		p.Get(func(ready sim.Time) {
			last = ready
			if n++; n < 50 {
				e.After(5*sim.Millisecond, next)
			}
		})
	}
	next()
	e.Run(-1)
	// After the last Get the pipeline only tops up its buffers (a batch: 4 ms on 16 workers).
	if d := e.Now() - last; d > 50*sim.Millisecond {
		t.Errorf("engine ran %v past the last batch: the pipeline left events behind", d)
	}
}

func TestReplicasCopyTheirSharesInParallel(t *testing.T) {
	cfg := small()
	cfg.Pinned = true
	cfg.ElementBytes = 10 << 20 // a 320 MiB batch: the copy dominates
	cfg.MapCost = Const(0)
	cfg.ParallelCalls, cfg.Prefetch = 4, 2
	c := Consumer{Steps: 30, Warmup: 5, GPUFixed: 1e-3}
	one, _ := Simulate(cfg, 1, c)
	cfg.Replicas = 4
	four, _ := Simulate(cfg, 1, c)
	per := func(r *Run) float64 { return r.Stats.H2DTime.Seconds() / float64(r.Stats.Batches) }
	if got := per(one) / per(four); math.Abs(got-4) > 0.05 {
		t.Errorf("copy time per batch, 1 GPU / 4 GPUs = %.3f, want ~4", got)
	}
}
