package train

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpusim/gpusim/hw"
)

func cfgWith(f func(c *Config)) Config {
	c := DefaultConfig()
	c.Steps = 5
	if f != nil {
		f(&c)
	}
	return c
}

func mustRun(t *testing.T, c Config) *Result {
	t.Helper()
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestDefaultRunCompletes(t *testing.T) {
	res := mustRun(t, cfgWith(nil))
	if res.OOM != nil {
		t.Fatalf("default run OOMed: %s", res.OOM.Message)
	}
	if got, want := len(res.StepTimes), 5; got != want {
		t.Errorf("completed steps = %d, want %d", got, want)
	}
	if res.StepTime <= 0 || res.Throughput <= 0 {
		t.Errorf("step time %v, throughput %v: want both positive", res.StepTime, res.Throughput)
	}
	if got, want := res.Throughput, 64/res.StepTime; math.Abs(got-want) > 1e-9*want {
		t.Errorf("throughput = %v, want batch/step time = %v", got, want)
	}
	if res.GPUUtilization <= 0 || res.GPUUtilization > 1 {
		t.Errorf("GPU utilization = %v, want in (0, 1]", res.GPUUtilization)
	}
	d := res.Devices[0]
	if d.PeakBytesInUse <= 0 || d.PeakBytesInUse > d.BytesLimit || d.PeakPoolBytes > d.BytesLimit {
		t.Errorf("device stats peak in use %d, peak pool %d, limit %d: want 0 < peak <= limit", d.PeakBytesInUse, d.PeakPoolBytes, d.BytesLimit)
	}
	// TF's default preallocates the whole limit as one region at GPU initialization.
	if len(d.Growth) != 1 || !wholeLimit(d.Growth[0].PoolBytes, d.BytesLimit) {
		t.Errorf("pool growth = %+v, want one region of the whole limit %d", d.Growth, d.BytesLimit)
	}
}

// TestBreakdownSumsToStepTime checks the step-time breakdown of several configurations: the
// categories of the median step add up to its time.
func TestBreakdownSumsToStepTime(t *testing.T) {
	for name, c := range map[string]Config{
		"default":      cfgWith(nil),
		"mixed":        cfgWith(func(c *Config) { c.Precision = "mixed_float16"; c.Optimizer = "adam" }),
		"accumulation": cfgWith(func(c *Config) { c.AccumulationSteps = 4 }),
		"mirrored": cfgWith(func(c *Config) {
			c.GPUCount, c.Strategy, c.Batch = 4, "mirrored", 130
		}),
		"xla": cfgWith(func(c *Config) { c.XLA = true; c.Model = "bert-base"; c.GPU = "h200" }),
	} {
		res := mustRun(t, c)
		if res.OOM != nil {
			t.Errorf("%s: OOM %s", name, res.OOM.Message)
			continue
		}
		var sum float64
		for _, s := range res.Breakdown {
			if s.Seconds < 0 {
				t.Errorf("%s: category %s = %v, want >= 0", name, s.Category, s.Seconds)
			}
			sum += s.Seconds
		}
		if math.Abs(sum-res.StepTime) > 1e-8 {
			t.Errorf("%s: breakdown sums to %v, want step time %v (%+v)", name, sum, res.StepTime, res.Breakdown)
		}
	}
}

func TestOOMOnT4WithTFMessage(t *testing.T) {
	c := cfgWith(func(c *Config) { c.Batch, c.GPU = 4096, "t4" })
	res := mustRun(t, c)
	if res.OOM == nil {
		t.Fatal("ResNet-50 batch 4096 on a T4 did not OOM")
	}
	// The shape is the failing layer output's, batch first, as TF prints a TensorShape.
	for _, want := range []string{"ResourceExhaustedError: OOM when allocating tensor with shape[4096,", "and type float on", "by allocator GPU_0_bfc", "/device:GPU:0"} {
		if !strings.Contains(res.OOM.Message, want) {
			t.Errorf("OOM message %q does not contain %q", res.OOM.Message, want)
		}
	}
	if !strings.HasPrefix(res.OOM.Log, "Allocator (GPU_0_bfc) ran out of memory trying to allocate") {
		t.Errorf("OOM log starts %q, want TF's allocator warning", firstLine(res.OOM.Log))
	}
	if res.OOM.Step != 1 || res.OOM.Op == "" || res.OOM.Tensor == "" {
		t.Errorf("OOM at step %d op %q tensor %q, want step 1 with op and tensor", res.OOM.Step, res.OOM.Op, res.OOM.Tensor)
	}
	if len(res.StepTimes) != 0 {
		t.Errorf("%d steps completed after an OOM in step 1", len(res.StepTimes))
	}
}

func TestGrowthOOMGrowsInDoublingRegions(t *testing.T) {
	g := true
	c := cfgWith(func(c *Config) { c.Batch, c.GPU, c.Memory.Growth = 4096, "t4", &g })
	res := mustRun(t, c)
	if res.OOM == nil {
		t.Fatal("with memory growth, ResNet-50 batch 4096 on a T4 did not OOM")
	}
	gr := res.Devices[0].Growth
	if len(gr) < 4 {
		t.Fatalf("pool grew %d times, want several regions: %+v", len(gr), gr)
	}
	// tsl BFCAllocator::Extend: the first region is 2 MiB, each later one at least doubles.
	if gr[0].RegionBytes != 2<<20 {
		t.Errorf("first region = %d bytes, want 2 MiB", gr[0].RegionBytes)
	}
	for i := 1; i < len(gr); i++ {
		prev, cur := gr[i-1].RegionBytes, gr[i].RegionBytes
		last := i == len(gr)-1 // the last region may be cut to what is left under the limit
		if !last && cur != prev && cur < 2*prev {
			t.Errorf("region %d = %d bytes after %d: want equal (after a forced doubling) or at least double", i, cur, prev)
		}
	}
	if p := res.Devices[0].PeakPoolBytes; p > res.Devices[0].BytesLimit {
		t.Errorf("peak pool %d above the limit %d", p, res.Devices[0].BytesLimit)
	}
}

func TestBatch32FitsOnT4(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) { c.Batch, c.GPU = 32, "t4" }))
	if res.OOM != nil {
		t.Fatalf("batch 32 on a T4 OOMed: %s", res.OOM.Message)
	}
}

func TestDeterministic(t *testing.T) {
	c := cfgWith(func(c *Config) {
		c.Precision = "mixed_float16"
		c.GPUCount, c.Strategy = 2, "mirrored"
		c.Steps = 30
	})
	a, b := mustRun(t, c), mustRun(t, c)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two runs of the same config differ (-first +second):\n%s", diff)
	}
}

func TestSplitBatch(t *testing.T) {
	for _, tc := range []struct {
		n, k int
		want []int
	}{
		{64, 1, []int{64}},
		{10, 4, []int{3, 3, 2, 2}},
		{8, 4, []int{2, 2, 2, 2}},
		{3, 4, []int{1, 1, 1, 0}},
	} {
		if got := splitBatch(tc.n, tc.k); !cmp.Equal(got, tc.want) {
			t.Errorf("splitBatch(%d, %d) = %v, want %v", tc.n, tc.k, got, tc.want)
		}
	}
}

func TestCUDAVisibleDevices(t *testing.T) {
	for _, tc := range []struct {
		env      *string
		replicas int
		errField string
	}{
		{nil, 4, ""},
		{ptr("2,3"), 2, ""},
		{ptr("1,x,0"), 1, ""}, // CUDA stops at the first invalid entry
		{ptr(""), 0, "CUDAVisibleDevices"},
		{ptr("5"), 0, "CUDAVisibleDevices"},
		{ptr("0,0"), 0, "CUDAVisibleDevices"}, // a repeated device empties the list
	} {
		c := cfgWith(func(c *Config) {
			c.GPUCount, c.Strategy, c.Batch, c.Steps, c.CUDAVisibleDevices = 4, "mirrored", 64, 2, tc.env
		})
		res, err := Run(context.Background(), c)
		name := "unset"
		if tc.env != nil {
			name = *tc.env
		}
		if tc.errField != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errField+":") {
				t.Errorf("CUDA_VISIBLE_DEVICES=%q: error %v, want one on %s", name, err, tc.errField)
			}
			continue
		}
		if err != nil {
			t.Errorf("CUDA_VISIBLE_DEVICES=%q: %v", name, err)
			continue
		}
		if res.Replicas != tc.replicas {
			t.Errorf("CUDA_VISIBLE_DEVICES=%q: %d replicas, want %d", name, res.Replicas, tc.replicas)
		}
		// TF's GPU:0 is the first listed card ("2,3": physical GPU 2).
		wantPhys := 0
		if tc.env != nil {
			wantPhys = int((*tc.env)[0] - '0')
		}
		if got := res.Devices[0].Physical; got != wantPhys {
			t.Errorf("CUDA_VISIBLE_DEVICES=%q: GPU:0 is card %d, want %d", name, got, wantPhys)
		}
	}
}

func ptr(s string) *string { return &s }

func TestMirroredSplitsBatchAndAllReduces(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) { c.GPUCount, c.Strategy, c.Batch = 4, "mirrored", 130 }))
	if got, want := res.ReplicaBatches, []int{33, 33, 32, 32}; !cmp.Equal(got, want) {
		t.Errorf("replica batches = %v, want %v", got, want)
	}
	if res.Replicas != 4 || len(res.Devices) != 4 {
		t.Fatalf("replicas %d, devices %d, want 4 and 4", res.Replicas, len(res.Devices))
	}
	if res.AllReduceTime <= 0 {
		t.Errorf("all-reduce time = %v, want > 0", res.AllReduceTime)
	}
	if res.ScalingEfficiency <= 0 || res.ScalingEfficiency > 1 {
		t.Errorf("scaling efficiency = %v, want in (0, 1]", res.ScalingEfficiency)
	}
	// The slower replicas (33 samples) decide the step; the others wait at the barrier.
	single := mustRun(t, cfgWith(func(c *Config) { c.Batch = 33 }))
	if res.StepTime < single.StepTime {
		t.Errorf("mirrored step %v shorter than one replica of 33 alone %v", res.StepTime, single.StepTime)
	}
}

// TestAllReducePackBuffers uses a model whose gradients outweigh its activations (BERT-Base,
// one sample per replica): the packed all-reduce's concat and output buffers then set the peak.
func TestAllReducePackBuffers(t *testing.T) {
	one := mustRun(t, cfgWith(func(c *Config) { c.Model, c.Batch = "bert-base", 1 }))
	four := mustRun(t, cfgWith(func(c *Config) { c.Model, c.Batch, c.GPUCount, c.Strategy = "bert-base", 4, 4, "mirrored" }))
	if one.OOM != nil || four.OOM != nil {
		t.Fatalf("unexpected OOM: %v %v", one.OOM, four.OOM)
	}
	if four.Devices[0].PeakBytesInUse <= one.Devices[0].PeakBytesInUse {
		t.Errorf("replica peak with all-reduce %d <= single GPU %d; want the pack buffers on top", four.Devices[0].PeakBytesInUse, one.Devices[0].PeakBytesInUse)
	}
}

func TestAccumulationLowersPeakAndKeepsUpdates(t *testing.T) {
	full := mustRun(t, cfgWith(func(c *Config) { c.Batch = 256 }))
	acc := mustRun(t, cfgWith(func(c *Config) { c.Batch, c.AccumulationSteps = 256, 4 }))
	if full.OOM != nil || acc.OOM != nil {
		t.Fatalf("unexpected OOM: %v %v", full.OOM, acc.OOM)
	}
	if acc.Devices[0].PeakBytesInUse >= full.Devices[0].PeakBytesInUse {
		t.Errorf("peak with 4 micro-batches of 64 = %d, want below batch 256's %d", acc.Devices[0].PeakBytesInUse, full.Devices[0].PeakBytesInUse)
	}
	if acc.StepTime <= full.StepTime {
		t.Errorf("accumulated step %v not slower than the full batch %v", acc.StepTime, full.StepTime)
	}
	if got := len(acc.StepTimes); got != 5 {
		t.Errorf("accumulated run completed %d updates, want 5", got)
	}
}

func TestOtherProcessStarvesTraining(t *testing.T) {
	c := cfgWith(func(c *Config) {
		c.GPU, c.Batch = "v100-16gb", 128
		c.Processes = []Process{{Name: "jupyter", GPUs: []int{0}, UsedBytes: 3 << 30}}
	})
	res := mustRun(t, c)
	if res.OOM == nil {
		t.Fatal("training next to a preallocating Jupyter kernel did not OOM")
	}
	if len(res.Processes) != 1 || res.Processes[0].PoolBytes[0] < 10<<30 {
		t.Errorf("jupyter process = %+v, want it to hold its preallocated pool (> 10 GiB)", res.Processes)
	}
	// nvidia-smi shows the card almost full: both contexts and both pools.
	if p := res.Physical[0]; float64(p.UsedBytes) < 0.9*float64(p.TotalBytes) {
		t.Errorf("GPU 0 used %d of %d bytes, want over 90%% (two processes' contexts and pools)", p.UsedBytes, p.TotalBytes)
	}
	// With memory growth in the kernel, it holds only what it uses (3 GiB in a 4 GiB region)
	// and a smaller batch fits next to it.
	g := true
	c.Processes[0].Memory.Growth = &g
	c.Batch = 96
	res = mustRun(t, c)
	if res.OOM != nil {
		t.Errorf("with growth in the Jupyter kernel, training OOMed: %s", res.OOM.Message)
	}
}

func TestMemoryLimitCaps(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) { c.Memory.LimitMiB = 2048 }))
	if got, want := res.Devices[0].BytesLimit, int64(2048<<20); got != want {
		t.Errorf("bytes limit = %d, want memory_limit 2048 MiB = %d", got, want)
	}
	if res.OOM == nil {
		t.Error("ResNet-50 batch 64 fit in 2 GiB")
	}
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     func(c *Config)
		field string
	}{
		{"negative batch", func(c *Config) { c.Batch = -1 }, "Batch"},
		{"unknown gpu", func(c *Config) { c.GPU = "k80-nope" }, "GPU"},
		{"unknown model", func(c *Config) { c.Model = "resnet51" }, "Model"},
		{"precision", func(c *Config) { c.Precision = "fp8" }, "Precision"},
		{"batch below replicas", func(c *Config) { c.GPUCount, c.Strategy, c.Batch = 4, "mirrored", 3 }, "Batch"},
		{"mode contradicts growth", func(c *Config) { f := false; c.Memory.Mode, c.Memory.Growth = "growth", &f }, "Memory.Mode"},
	} {
		_, err := Run(context.Background(), cfgWith(tc.f))
		if err == nil {
			t.Errorf("%s: Run succeeded, want an error on %s", tc.name, tc.field)
			continue
		}
		if !strings.Contains(err.Error(), tc.field+":") {
			t.Errorf("%s: error %q does not name field %s", tc.name, err, tc.field)
		}
	}
}

func TestTimelineBounded(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) { c.Steps = 300; c.TimelinePoints = 50 }))
	tl := res.Devices[0].Timeline
	if len(tl) == 0 || len(tl) > 50 {
		t.Fatalf("timeline has %d points, want 1..50", len(tl))
	}
	var peak int64
	for _, p := range tl {
		peak = max(peak, p.MaxInUse)
	}
	if peak != res.Devices[0].PeakBytesInUse {
		t.Errorf("timeline peak %d, want the allocator's peak %d (downsampling keeps maxima)", peak, res.Devices[0].PeakBytesInUse)
	}
}

func TestSampler(t *testing.T) {
	s := newSampler(4)
	// 1 µs buckets; the 5th bucket forces a merge to 2 µs.
	s.record(0, 10, 100)
	s.record(1500, 30, 100)
	s.record(2500, 5, 100)
	s.record(4500, 7, 200)
	got := s.timeline()
	want := []MemPoint{
		{Time: 0, MaxInUse: 30, InUse: 30, PoolBytes: 100},
		// 30 was in use from 1.5 µs to 2.5 µs: the interval from 2 µs has it as its maximum.
		{Time: 2e-6, MaxInUse: 30, InUse: 5, PoolBytes: 100},
		{Time: 4e-6, MaxInUse: 7, InUse: 7, PoolBytes: 200},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestInputPipeline reproduces the guide's performance pitfall: a sequential map without
// prefetch starves the GPU (utilization well under 70%, the step waits for input); AUTOTUNE
// map parallelism and prefetch feed it. The fed pipeline's elements are the model's float32
// input copied at the GPU profile's pinned PCIe rate, the bytes and the rate of the step's own
// copy without a pipeline, so a pipeline that keeps up gives the synthetic step within 0.5%:
// the pipeline's copy replaces the step's (1.6% of this step; made twice, or not at all, the
// step would be that much slower or faster).
func TestInputPipeline(t *testing.T) {
	slow := mustRun(t, cfgWith(func(c *Config) {
		c.Steps = 30
		c.Input = &Input{Cache: "none"}
	}))
	g, err := hw.LookupGPU(DefaultConfig().GPU)
	if err != nil {
		t.Fatal(err)
	}
	fed := DefaultInput()
	fed.Prefetch, fed.ParallelCalls = Autotune, Autotune
	fed.Pipeline.ElementBytes, fed.Pipeline.Pinned = 224*224*3*4, true
	fed.Pipeline.H2DBandwidth, fed.Pipeline.H2DLatency = g.PCIeBandwidth*g.Efficiency.PCIe, g.Efficiency.PCIeLatency
	fast := mustRun(t, cfgWith(func(c *Config) {
		c.Steps = 30
		c.Input = &fed
	}))
	synthetic := mustRun(t, cfgWith(func(c *Config) { c.Steps = 30 }))
	if slow.InputStallFraction < 0.3 || slow.GPUUtilization > 0.7 {
		t.Errorf("sequential map, no prefetch: input stall %.2f, GPU utilization %.2f; want stall >= 0.3 and utilization <= 0.7", slow.InputStallFraction, slow.GPUUtilization)
	}
	if fast.InputStallFraction > 0.1 || fast.GPUUtilization < 0.85 {
		t.Errorf("AUTOTUNE map and prefetch: input stall %.2f, GPU utilization %.2f; want stall <= 0.1 and utilization >= 0.85", fast.InputStallFraction, fast.GPUUtilization)
	}
	if d := fast.StepTime/synthetic.StepTime - 1; math.Abs(d) > 0.005 {
		t.Errorf("step with a pipeline that keeps up %v, with synthetic data %v: %+.2f%%, want within 0.5%%", fast.StepTime, synthetic.StepTime, 100*d)
	}
	if synthetic.InputStallFraction != 0 {
		t.Errorf("synthetic data stalled %.3f of the time", synthetic.InputStallFraction)
	}
}

// TestEnvForcesGrowth checks that TF_FORCE_GPU_ALLOW_GROWTH=true turns preallocation into
// growth (gpu_bfc_allocator.cc reads it over the session config).
func TestEnvForcesGrowth(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) { c.Env = map[string]string{"TF_FORCE_GPU_ALLOW_GROWTH": "true"} }))
	d := res.Devices[0]
	if len(d.Growth) < 2 || d.Growth[0].RegionBytes != 2<<20 || d.PeakPoolBytes >= d.BytesLimit {
		t.Errorf("with TF_FORCE_GPU_ALLOW_GROWTH=true: pool changes %+v, peak pool %d of limit %d; want growth from 2 MiB, below the limit", d.Growth, d.PeakPoolBytes, d.BytesLimit)
	}
}

// TestLogicalDevicesShareTheGPU splits one GPU into two logical GPUs: MirroredStrategy runs a
// replica on each, they share the card's compute, and TF falls back from NCCL.
func TestLogicalDevicesShareTheGPU(t *testing.T) {
	virtual := mustRun(t, cfgWith(func(c *Config) { c.Strategy, c.Memory.LogicalMiB = "mirrored", []int64{8192, 8192} }))
	alone := mustRun(t, cfgWith(func(c *Config) { c.Batch = 32 }))
	if virtual.Replicas != 2 || virtual.GPUs != 1 {
		t.Fatalf("replicas %d on %d GPUs, want 2 on 1", virtual.Replicas, virtual.GPUs)
	}
	if got, want := virtual.Devices[1].BytesLimit, int64(8192<<20); got != want {
		t.Errorf("logical GPU 1 limit = %d, want %d", got, want)
	}
	if virtual.StepTime < 1.8*alone.StepTime {
		t.Errorf("two replicas of 32 on one GPU step in %v, want about twice one replica's %v", virtual.StepTime, alone.StepTime)
	}
	found := false
	for _, n := range virtual.Notes {
		found = found || strings.Contains(n, "NCCL is not supported when using virtual GPUs")
	}
	if !found {
		t.Errorf("notes %q lack TF's NCCL fallback warning", virtual.Notes)
	}
}

// TestCardFullBeforeContext: two processes that take every byte they can leave no room for
// the training process's CUDA context; TF fails at GPU initialization (a result, not an error).
func TestCardFullBeforeContext(t *testing.T) {
	hog := Process{Name: "hog", Memory: Memory{Fraction: 1}}
	res := mustRun(t, cfgWith(func(c *Config) { c.Processes = []Process{hog, hog} }))
	if res.OOM == nil || !strings.Contains(res.OOM.Message, "CUDA runtime implicit initialization on GPU:0 failed") {
		t.Fatalf("OOM = %+v, want TF's CUDA initialization failure", res.OOM)
	}
	if len(res.StepTimes) != 0 || len(res.Devices) != 0 {
		t.Errorf("steps %d, devices %d after a failed start, want none", len(res.StepTimes), len(res.Devices))
	}
}

// TestGPUProfileInMemory runs with a profile built in memory (as calibration does): a GPU
// with twice the bandwidth and peaks of a T4 steps faster than the T4.
func TestGPUProfileInMemory(t *testing.T) {
	base := mustRun(t, cfgWith(func(c *Config) { c.GPU, c.Batch = "t4", 32 }))
	g, err := hw.LookupGPU("t4")
	if err != nil {
		t.Fatal(err)
	}
	g.Name = "t4-doubled"
	g.MemBandwidth *= 2
	g.PeakFP32, g.PeakFP16, g.PeakTF32, g.PeakBF16 = 2*g.PeakFP32, 2*g.PeakFP16, 2*g.PeakTF32, 2*g.PeakBF16
	fast := mustRun(t, cfgWith(func(c *Config) { c.GPU, c.GPUProfile, c.Batch = "", &g, 32 }))
	if fast.GPU != "t4-doubled" || fast.StepTime >= base.StepTime {
		t.Errorf("in-memory profile %q stepped in %v, want a faster step than the T4's %v", fast.GPU, fast.StepTime, base.StepTime)
	}
}

// TestDefaultStrategyStillGrabsEveryVisibleGPU: without a strategy TF runs on GPU:0 but
// initializes, and by default preallocates, every visible GPU (seed guide, pitfall 2).
func TestDefaultStrategyStillGrabsEveryVisibleGPU(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) { c.GPUCount = 3 }))
	if res.Replicas != 1 || len(res.Devices) != 3 {
		t.Fatalf("replicas %d, devices %d; want 1 replica and 3 devices", res.Replicas, len(res.Devices))
	}
	for _, d := range res.Devices[1:] {
		if !d.Idle || !wholeLimit(d.PeakPoolBytes, d.BytesLimit) || d.PeakBytesInUse != 0 {
			t.Errorf("%s: idle %v, pool %d, limit %d, in use %d; want an idle GPU holding its whole preallocated pool", d.Name, d.Idle, d.PeakPoolBytes, d.BytesLimit, d.PeakBytesInUse)
		}
	}
}

// wholeLimit reports whether a pool is the whole limit, which BFC may round down to its 256-byte
// allocation unit (tsl bfc_allocator.cc kMinAllocationSize).
func wholeLimit(pool, limit int64) bool { return pool <= limit && limit-pool < 256 }

// TestResultSizeIsOStepsNotOEvents: a 1,000-step run keeps every op only for TraceSteps steps;
// everything else it holds grows with the steps, not with the events.
func TestResultSizeIsOStepsNotOEvents(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) { c.Steps = 1000 }))
	ops := 0
	for _, s := range res.Spans {
		if s.Track == TrackCompute {
			ops++
		}
	}
	perStep := ops / DefaultConfig().TraceSteps
	if got, limit := len(res.Spans), ops+3*res.StepsRequested; got > limit {
		t.Errorf("%d spans for 1,000 steps, want at most %d (ops of %d steps + 3 per step)", got, limit, DefaultConfig().TraceSteps)
	}
	if res.SpansDropped < perStep*(res.StepsRequested-DefaultConfig().TraceSteps)/2 {
		t.Errorf("dropped %d op spans, want about %d per later step", res.SpansDropped, perStep)
	}
	if n := len(res.Utilization) + len(res.StepTimes); n > 3*res.StepsRequested {
		t.Errorf("%d per-step samples for 1,000 steps", n)
	}
	if n := len(res.Devices[0].Timeline); n > DefaultConfig().TimelinePoints {
		t.Errorf("timeline has %d points", n)
	}
}
