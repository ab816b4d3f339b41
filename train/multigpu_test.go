package train

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/collective"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
)

// TestVisibilityRulesThroughRun checks the device-numbering rules of the guide on whole runs:
// which nvidia-smi card each TF device lands on, and the configurations that leave no GPU.
func TestVisibilityRulesThroughRun(t *testing.T) {
	type dev struct {
		name     string // short TF name
		physical int
		idle     bool
	}
	for _, tc := range []struct {
		name     string
		f        func(c *Config)
		want     []dev
		errField string
		errText  string
	}{
		{
			name: "CUDA_VISIBLE_DEVICES=2,3: GPU:0 is card 2",
			f:    func(c *Config) { c.Strategy, c.CUDAVisibleDevices = "mirrored", ptr("2,3") },
			want: []dev{{"GPU:0", 2, false}, {"GPU:1", 3, false}},
		},
		{
			name: "CUDA_VISIBLE_DEVICES=2,3 and a hard-coded GPU:1 lands on card 3",
			f:    func(c *Config) { c.CUDAVisibleDevices, c.Device = ptr("2,3"), "/GPU:1" },
			want: []dev{{"GPU:1", 3, false}, {"GPU:0", 2, true}},
		},
		{
			name: "CUDA_VISIBLE_DEVICES=3,1 reorders",
			f:    func(c *Config) { c.Strategy, c.CUDAVisibleDevices = "mirrored", ptr("3,1") },
			want: []dev{{"GPU:0", 3, false}, {"GPU:1", 1, false}},
		},
		{
			name: "a GPU:5 that does not exist is soft-placed on GPU:0",
			f:    func(c *Config) { c.Device = "/GPU:5" },
			want: []dev{{"GPU:0", 0, false}, {"GPU:1", 1, true}, {"GPU:2", 2, true}, {"GPU:3", 3, true}},
		},
		{
			name: "set_visible_devices([1, 3]) keeps physical order",
			f:    func(c *Config) { c.Strategy, c.VisibleDevices = "mirrored", []int{3, 1} },
			want: []dev{{"GPU:0", 1, false}, {"GPU:1", 3, false}},
		},
		{
			name:     "set_visible_devices([]) leaves no GPU",
			f:        func(c *Config) { c.VisibleDevices = []int{} },
			errField: "VisibleDevices", errText: "left no GPU",
		},
		{
			name:     "CUDA_VISIBLE_DEVICES empty shows no GPU",
			f:        func(c *Config) { c.CUDAVisibleDevices = ptr("") },
			errField: "CUDAVisibleDevices", errText: "CUDA shows no GPU",
		},
		{
			name:     "CUDA_VISIBLE_DEVICES=0,0 shows no GPU",
			f:        func(c *Config) { c.CUDAVisibleDevices = ptr("0,0") },
			errField: "CUDAVisibleDevices", errText: "repeats a device",
		},
		{
			name:     "set_visible_devices with a device CUDA hides",
			f:        func(c *Config) { c.CUDAVisibleDevices, c.VisibleDevices = ptr("2,3"), []int{2} },
			errField: "VisibleDevices", errText: "ValueError: Unrecognized device",
		},
		{
			name:     "GPU:5 without soft placement",
			f:        func(c *Config) { soft := false; c.Device, c.SoftPlacement = "/GPU:5", &soft },
			errField: "Device", errText: "InvalidArgumentError: Could not satisfy device specification",
		},
		{
			name:     "tf.device under MirroredStrategy",
			f:        func(c *Config) { c.Strategy, c.Device = "mirrored", "/GPU:1" },
			errField: "Device", errText: "MirroredStrategy",
		},
	} {
		c := cfgWith(func(c *Config) { c.GPUCount, c.Batch, c.Steps = 4, 64, 2 })
		tc.f(&c)
		res, err := Run(context.Background(), c)
		if tc.errField != "" {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tc.errField || !strings.Contains(err.Error(), tc.errText) {
				t.Errorf("%s: error %v, want a %s error containing %q", tc.name, err, tc.errField, tc.errText)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var got []dev
		for _, d := range res.Devices {
			_, short, _ := strings.Cut(d.Name, "/device:")
			got = append(got, dev{short, d.Physical, d.Idle})
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: devices %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: devices %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}

// TestDeviceTableInResult: the run carries the mapping table, one row per host GPU (hidden
// ones with the reason).
func TestDeviceTableInResult(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) { c.GPUCount, c.Strategy, c.Steps, c.CUDAVisibleDevices = 4, "mirrored", 2, ptr("2,3") }))
	want := []struct {
		smi    int
		tf     string
		status string
	}{{0, "", "hidden by CUDA_VISIBLE_DEVICES"}, {1, "", "hidden by CUDA_VISIBLE_DEVICES"}, {2, "/device:GPU:0", "used"}, {3, "/device:GPU:1", "used"}}
	if len(res.DeviceTable) != len(want) {
		t.Fatalf("device table has %d rows, want %d: %+v", len(res.DeviceTable), len(want), res.DeviceTable)
	}
	for i, w := range want {
		r := res.DeviceTable[i]
		if r.NvidiaSMI != w.smi || r.TFDevice != w.tf || r.Status != w.status {
			t.Errorf("row %d = GPU %d %q %q, want GPU %d %q %q", i, r.NvidiaSMI, r.TFDevice, r.Status, w.smi, w.tf, w.status)
		}
	}
}

// TestCrossDeviceOpsSelection: TF compares logical and physical GPU counts; hiding a GPU with
// set_visible_devices or splitting one falls back to ReductionToOneDevice.
func TestCrossDeviceOpsSelection(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(c *Config)
		want string
	}{
		{"4 GPUs", func(c *Config) {}, collective.ImplNCCL},
		{"set_visible_devices hides one", func(c *Config) { c.VisibleDevices = []int{0, 1, 2} }, collective.ImplReductionToOneDevice},
		{"CUDA_VISIBLE_DEVICES hides one", func(c *Config) { c.CUDAVisibleDevices = ptr("0,1,2") }, collective.ImplNCCL},
		{"logical devices", func(c *Config) { c.Memory.LogicalMiB = []int64{8192, 8192} }, collective.ImplReductionToOneDevice},
	} {
		res := mustRun(t, cfgWith(func(c *Config) {
			c.GPUCount, c.Strategy, c.Batch, c.Steps = 4, "mirrored", 96, 2
			tc.f(c)
		}))
		if res.AllReduce == nil || res.AllReduce.Impl != tc.want {
			t.Errorf("%s: all-reduce %+v, want %s", tc.name, res.AllReduce, tc.want)
		}
	}
}

// gradientSizes returns one replica's gradient sizes for model at batch.
func gradientSizes(t *testing.T, model string, batch int) []int64 {
	t.Helper()
	m, err := models.Get(model)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Plan(models.PlanOptions{Batch: batch, Precision: "float32", Optimizer: "sgd"})
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, ti := range p.Gradients {
		out = append(out, p.Tensors[ti].Bytes)
	}
	return out
}

// bfcBytes is what BFC books for a request (256-byte units, kMinAllocationSize).
func bfcBytes(n int64) int64 { return (n + 255) / 256 * 256 }

// TestResNet50OneVsEightA100 is the scaling case: ResNet-50, 64 samples per GPU, on 1
// and 8 A100-40GB. The 8-GPU step is the 1-GPU step plus the NCCL all-reduce (no input
// pipeline, equal shares: nobody waits), and every GPU holds the 1-GPU memory plus the pack buffers while the all-reduce
// runs.
func TestResNet50OneVsEightA100(t *testing.T) {
	// cuda_malloc_async books exactly the bytes requested (BFC may hand out a chunk up to twice
	// the request when the rest would be too small to split), so memory adds up exactly.
	one := mustRun(t, cfgWith(func(c *Config) { c.Steps, c.Memory.Allocator = 20, "cuda_malloc_async" }))
	// Symmetric replicas, each GPU with its own host threads (TF_GPU_THREAD_MODE=gpu_private):
	// the step adds up exactly (replicas_test.go covers stragglers and the shared host).
	eight := mustRun(t, cfgWith(func(c *Config) {
		c.GPUCount, c.Strategy, c.Batch, c.Steps, c.Memory.Allocator = 8, "mirrored", 512, 20, "cuda_malloc_async"
		c.SymmetricReplicas, c.Env = true, map[string]string{"TF_GPU_THREAD_MODE": "gpu_private"}
	}))
	if eight.Replicas != 8 || len(eight.Devices) != 8 {
		t.Fatalf("replicas %d, devices %d; want 8 and 8", eight.Replicas, len(eight.Devices))
	}
	ar := eight.AllReduce
	if ar == nil || ar.Impl != collective.ImplNCCL || ar.Topology != collective.NVSwitch || ar.Calls != 1 {
		t.Fatalf("all-reduce %+v, want one NCCL call over NVSwitch", ar)
	}
	if math.Abs(eight.AllReduceTime-ar.Seconds-ar.LaunchSeconds) > 1e-9 || ar.Seconds <= 0 || ar.LaunchSeconds <= 0 {
		t.Errorf("all-reduce time %v, planned %v + NCCL launches %v; want equal and positive", eight.AllReduceTime, ar.Seconds, ar.LaunchSeconds)
	}
	if got, want := eight.StepTime, one.StepTime+eight.AllReduceTime; math.Abs(got-want) > 1e-9 {
		t.Errorf("8-GPU step %v, want the 1-GPU step %v + all-reduce %v = %v", got, one.StepTime, ar.Seconds, want)
	}
	// The breakdown's estimate (analysis.TestScalingAgainstOneGPU compares with the 1-GPU run).
	if eight.ScalingEfficiency < 0.95 || eight.ScalingEfficiency >= 1 {
		t.Errorf("scaling efficiency %v on NVSwitch, want in [0.95, 1)", eight.ScalingEfficiency)
	}

	// Memory: the all-reduce starts from the 1-GPU state at the end of the backward pass and
	// adds the concat buffer of TF's packer (num_packs=1); the peak is the larger of the two.
	pack, err := collective.Pack(gradientSizes(t, "resnet50", 64), collective.PackOptions{NumPacks: 1})
	if err != nil {
		t.Fatal(err)
	}
	d1 := one.Devices[0]
	for _, d := range eight.Devices {
		if d.AllReduceStartBytes != d1.AllReduceStartBytes {
			t.Errorf("%s: %d bytes in use when the all-reduce starts, want the 1-GPU %d", d.Name, d.AllReduceStartBytes, d1.AllReduceStartBytes)
		}
		if got, want := d.AllReducePeakBytes, d1.AllReduceStartBytes+pack.ExtraBytes; got != want {
			t.Errorf("%s: all-reduce peak %d, want 1-GPU %d + pack buffers %d = %d", d.Name, got, d1.AllReduceStartBytes, pack.ExtraBytes, want)
		}
		if got, want := d.PeakBytesInUse, max(d1.PeakBytesInUse, d.AllReducePeakBytes); got != want {
			t.Errorf("%s: peak %d, want max(1-GPU peak %d, all-reduce peak %d)", d.Name, got, d1.PeakBytesInUse, d.AllReducePeakBytes)
		}
	}
	if ar.PackBufferBytes != pack.ExtraBytes {
		t.Errorf("reported pack buffers %d, want %d", ar.PackBufferBytes, pack.ExtraBytes)
	}
}

// TestPackBuffersSetThePeak: BERT-Base with one sample per replica holds more gradients than
// activations, so the 4-GPU peak is the 1-GPU state plus the pack buffers, above the 1-GPU peak.
func TestPackBuffersSetThePeak(t *testing.T) {
	one := mustRun(t, cfgWith(func(c *Config) {
		c.Model, c.Batch, c.Steps, c.Memory.Allocator = "bert-base", 1, 3, "cuda_malloc_async"
	}))
	four := mustRun(t, cfgWith(func(c *Config) {
		c.Model, c.Batch, c.GPUCount, c.Strategy, c.Steps, c.Memory.Allocator = "bert-base", 4, 4, "mirrored", 3, "cuda_malloc_async"
	}))
	d1, d4 := one.Devices[0], four.Devices[0]
	want := d1.AllReduceStartBytes + four.AllReduce.PackBufferBytes
	if d4.PeakBytesInUse != want || want <= d1.PeakBytesInUse {
		t.Errorf("4-GPU peak %d, want 1-GPU state %d + pack buffers %d = %d, above the 1-GPU peak %d",
			d4.PeakBytesInUse, d1.AllReduceStartBytes, four.AllReduce.PackBufferBytes, want, d1.PeakBytesInUse)
	}
}

// TestAccumulationOnV100 is the accumulation case: ResNet-50 with a batch of 256
// runs out of memory on a 16 GB V100 but fits as 4 micro-batches of 64; the update costs four
// micro-steps of compute plus one all-reduce, and the accumulators stay in memory.
func TestAccumulationOnV100(t *testing.T) {
	v100 := func(f func(c *Config)) Config {
		return cfgWith(func(c *Config) {
			c.GPU, c.Steps = "v100-16gb", 6
			f(c)
		})
	}
	if full := mustRun(t, v100(func(c *Config) { c.Batch = 256 })); full.OOM == nil {
		t.Fatal("batch 256 fit on a V100-16GB")
	}
	micro := mustRun(t, v100(func(c *Config) { c.Batch = 64 }))
	acc := mustRun(t, v100(func(c *Config) { c.Batch, c.AccumulationSteps = 256, 4 }))
	if acc.OOM != nil {
		t.Fatalf("4 x 64 ran out of memory: %s", acc.OOM.Message)
	}
	cat := func(r *Result, name string) float64 {
		for _, s := range r.Breakdown {
			if s.Category == name {
				return s.Seconds
			}
		}
		return 0
	}
	if got, want := cat(acc, CatForward), 4*cat(micro, CatForward); math.Abs(got-want) > 1e-9 {
		t.Errorf("forward %v, want 4 x the micro-batch's %v", got, cat(micro, CatForward))
	}
	// Backward: four micro-batches plus four accumulate ops (3 x gradient bytes each).
	bwd, want := cat(acc, CatBackward), 4*cat(micro, CatBackward)
	if bwd < want || bwd > 1.05*want {
		t.Errorf("backward %v, want 4 x %v plus the accumulate ops (< 5%%)", bwd, cat(micro, CatBackward))
	}
	if got, want := cat(acc, CatOptimizer), cat(micro, CatOptimizer); got != want {
		t.Errorf("optimizer %v, want one update %v", got, want)
	}
	if r := acc.StepTime / micro.StepTime; r < 3.8 || r > 4.2 {
		t.Errorf("accumulated update %v = %.2f x the micro-step %v, want about 4", acc.StepTime, r, micro.StepTime)
	}

	// The accumulators (one per trainable variable, float32) are persistent: when the run
	// ends, the timeline holds the variables plus them.
	grads := gradientSizes(t, "resnet50", 64)
	var accBytes, booked int64
	for _, g := range grads {
		accBytes += g
		booked += bfcBytes(g)
	}
	da, dm := acc.Devices[0], micro.Devices[0]
	if da.AccumulatorBytes != accBytes {
		t.Errorf("accumulator bytes %d, want the gradients' %d", da.AccumulatorBytes, accBytes)
	}
	last := func(d Device) int64 { return d.Timeline[len(d.Timeline)-1].InUse }
	if got, want := last(da), last(dm)+booked; got != want {
		t.Errorf("timeline ends at %d in use, want %d (variables + accumulators)", got, want)
	}
	found := false
	for _, w := range acc.Warnings {
		found = found || strings.Contains(w, "BatchNorm statistics see only the micro-batch")
	}
	if !found {
		t.Errorf("warnings %q lack the BatchNorm micro-batch warning", acc.Warnings)
	}
}

// TestAccumulationAllReducesOncePerUpdate: on two V100s, 4 micro-steps per update and one
// all-reduce of the accumulators, whose reduced copies are new buffers.
func TestAccumulationAllReducesOncePerUpdate(t *testing.T) {
	alone := mustRun(t, cfgWith(func(c *Config) {
		c.GPU, c.Batch, c.AccumulationSteps, c.Steps, c.Memory.Allocator = "v100-16gb", 256, 4, 4, "cuda_malloc_async"
	}))
	for _, packs := range []int{0, 1} {
		res := mustRun(t, cfgWith(func(c *Config) {
			c.GPU, c.GPUCount, c.Strategy, c.Batch, c.AccumulationSteps, c.NumPacks, c.Steps = "v100-16gb", 2, "mirrored", 512, 4, packs, 4
			c.Memory.Allocator = "cuda_malloc_async"
			c.SymmetricReplicas, c.Env = true, map[string]string{"TF_GPU_THREAD_MODE": "gpu_private"}
		}))
		var ar float64
		for _, s := range res.Breakdown {
			if s.Category == CatAllReduce {
				ar = s.Seconds
			}
		}
		if math.Abs(ar-res.AllReduceTime) > 1e-12 || ar <= 0 {
			t.Errorf("num_packs=%d: all-reduce share %v, want one all-reduce %v per update", packs, ar, res.AllReduceTime)
		}
		if got, want := res.StepTime, alone.StepTime+res.AllReduceTime; math.Abs(got-want) > 1e-9 {
			t.Errorf("num_packs=%d: update %v, want one GPU's 4 micro-steps %v + one all-reduce %v", packs, got, alone.StepTime, res.AllReduceTime)
		}
		// The gradients went into the accumulators before the all-reduce; it reads those
		// (variables, never forwarded) and writes new buffers: one output per gradient
		// (num_packs=0); or the concat, reduced in place, then split back into copies while
		// the concat is alive (num_packs=1: ResNet-50's gradient boundaries are not all
		// 64-byte aligned, so SplitV copies), twice the gradients.
		grads := gradientSizes(t, "resnet50", 64)
		var total int64
		for _, g := range grads {
			total += g
		}
		want := total
		if packs == 1 {
			pack, err := collective.Pack(grads, collective.PackOptions{NumPacks: 1})
			if err != nil {
				t.Fatal(err)
			}
			if st := pack.Stages[len(pack.Stages)-1]; st.Name != "unpack.split" {
				t.Fatalf("last pack stage %s, want unpack.split (copies)", st.Name)
			}
			want = 2 * total
		}
		d := res.Devices[0]
		if got := d.AllReducePeakBytes - d.AllReduceStartBytes; got != want || res.AllReduce.PackBufferBytes != want {
			t.Errorf("num_packs=%d: all-reduce adds %d (reported %d), want %d", packs, got, res.AllReduce.PackBufferBytes, want)
		}
	}
}

// TestReductionToOneDeviceMemory: with virtual GPUs TF reduces on the first device, which
// holds the received copies and the sum on top of the other replica's memory.
func TestReductionToOneDeviceMemory(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) { c.Strategy, c.Memory.LogicalMiB, c.Steps = "mirrored", []int64{12000, 12000}, 3 }))
	ar := res.AllReduce
	if ar.Impl != collective.ImplReductionToOneDevice || ar.ReduceDeviceExtraBytes <= 0 {
		t.Fatalf("all-reduce %+v, want reduction to one device with extra memory", ar)
	}
	d0, d1 := res.Devices[0], res.Devices[1]
	if got, want := d0.AllReducePeakBytes-d1.AllReducePeakBytes, bfcBytes(ar.ReduceDeviceExtraBytes); got != want {
		t.Errorf("GPU:0 all-reduce peak exceeds GPU:1's by %d, want the reduction's %d", got, want)
	}
}

// TestBridgedNVLinkPairsOnly: an RTX 3090 NVLink bridge joins two cards; four need PCIe.
func TestBridgedNVLinkPairsOnly(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{2, collective.NVLink}, {4, collective.PCIe}} {
		res := mustRun(t, cfgWith(func(c *Config) {
			c.GPU, c.GPUCount, c.Strategy, c.Batch, c.Steps = "rtx3090", tc.n, "mirrored", 16*tc.n, 2
		}))
		if res.AllReduce.Topology != tc.want {
			t.Errorf("%d x RTX 3090: topology %s, want %s", tc.n, res.AllReduce.Topology, tc.want)
		}
	}
}

// TestExplicitCrossDeviceOps: MirroredStrategy(cross_device_ops=...) overrides TF's choice;
// NcclAllReduce over two logical GPUs of one card is NCCL's duplicate-GPU error.
func TestExplicitCrossDeviceOps(t *testing.T) {
	for _, impl := range []string{collective.ImplHierarchicalCopy, collective.ImplReductionToOneDevice} {
		res := mustRun(t, cfgWith(func(c *Config) {
			c.GPUCount, c.Strategy, c.Batch, c.Steps, c.CrossDeviceOps = 4, "mirrored", 128, 2, impl
		}))
		if res.AllReduce.Impl != impl {
			t.Errorf("cross_device_ops=%s: ran %s", impl, res.AllReduce.Impl)
		}
	}
	_, err := Run(context.Background(), cfgWith(func(c *Config) {
		c.Strategy, c.Memory.LogicalMiB, c.CrossDeviceOps = "mirrored", []int64{8192, 8192}, collective.ImplNCCL
	}))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "CrossDeviceOps" || !strings.Contains(err.Error(), "duplicate GPU") {
		t.Errorf("NCCL over virtual GPUs: error %v, want a strategy.cross_device_ops duplicate-GPU error", err)
	}
}

// TestMultiGPUFastForwardMatchesFullSimulation: the buffers this file's code adds (copy-based
// reduction on GPU:0, out-of-place accumulator all-reduce) keep fast-forward exact.
func TestMultiGPUFastForwardMatchesFullSimulation(t *testing.T) {
	for name, f := range map[string]func(c *Config){
		"reduction to one device":  func(c *Config) { c.GPUCount, c.CrossDeviceOps = 4, collective.ImplReductionToOneDevice },
		"accumulation num_packs=0": func(c *Config) { c.GPUCount, c.AccumulationSteps, c.NumPacks = 2, 2, 0 },
		"hard-coded GPU:1":         func(c *Config) { c.Strategy, c.GPUCount, c.Device = "default", 2, "/GPU:1" },
	} {
		base := func(ff bool) *Result {
			return mustRun(t, cfgWith(func(c *Config) {
				c.Strategy, c.Batch, c.Steps, c.FastForward, c.SymmetricReplicas = "mirrored", 128, 8, ff, true
				f(c)
			}))
		}
		full, fast := base(false), base(true)
		if fast.FastForwarded == 0 {
			t.Errorf("%s: nothing fast-forwarded", name)
		}
		if full.StepTime != fast.StepTime || len(full.StepTimes) != len(fast.StepTimes) {
			t.Errorf("%s: step %v (%d steps) fast-forwarded, %v (%d) in full", name, fast.StepTime, len(fast.StepTimes), full.StepTime, len(full.StepTimes))
		}
		for i := range full.Devices {
			a, b := full.Devices[i], fast.Devices[i]
			if a.PeakBytesInUse != b.PeakBytesInUse || a.BytesInUse != b.BytesInUse || a.AllReducePeakBytes != b.AllReducePeakBytes {
				t.Errorf("%s: %s peak %d / end %d / all-reduce peak %d fast-forwarded, %d / %d / %d in full", name, a.Name,
					b.PeakBytesInUse, b.BytesInUse, b.AllReducePeakBytes, a.PeakBytesInUse, a.BytesInUse, a.AllReducePeakBytes)
			}
		}
	}
}

// TestStrategyDevices: MirroredStrategy(devices=["/gpu:0", "/gpu:1"]) runs on two of four
// GPUs, named after CUDA_VISIBLE_DEVICES (the guide: the list takes logical device strings).
func TestStrategyDevices(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) {
		c.GPUCount, c.Strategy, c.Batch, c.Steps, c.CUDAVisibleDevices, c.StrategyDevices = 8, "mirrored", 64, 2, ptr("4,5,6,7"), []int{0, 1}
	}))
	if res.Replicas != 2 || res.Devices[0].Physical != 4 || res.Devices[1].Physical != 5 || !res.Devices[2].Idle {
		t.Errorf("replicas %d on cards %d, %d (GPU:2 idle %v); want 2 on cards 4 and 5", res.Replicas, res.Devices[0].Physical, res.Devices[1].Physical, res.Devices[2].Idle)
	}
	if !slices.Equal(res.ReplicaBatches, []int{32, 32}) {
		t.Errorf("replica batches %v, want [32 32]", res.ReplicaBatches)
	}
	for _, bad := range [][]int{{}, {0, 0}, {4}} {
		_, err := Run(context.Background(), cfgWith(func(c *Config) { c.GPUCount, c.Strategy, c.StrategyDevices = 4, "mirrored", bad }))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "StrategyDevices" {
			t.Errorf("strategy.devices=%v: error %v, want one on strategy.devices", bad, err)
		}
	}
}

// TestAccumulationClipsEveryMicroStep: NVIDIA's TF1 BERT optimizers (bert-adamw, bert-lamb)
// clip every micro-step's gradients before accumulating them, and under AMP unscale and check
// them too (models.OptimizerSpec's MicroStep fields), so the backward category of an
// accumulated update grows, per micro-step, by those passes over the float32 gradients over
// Keras Adam's, whose accumulation adds the gradients only.
func TestAccumulationClipsEveryMicroStep(t *testing.T) {
	bwd := func(opt, precision string) float64 {
		res := mustRun(t, cfgWith(func(c *Config) {
			c.Model, c.GPU, c.Batch, c.AccumulationSteps, c.Steps = "bert-base", "v100-16gb", 32, 4, 4
			c.Optimizer, c.Precision = opt, precision
		}))
		for _, s := range res.Breakdown {
			if s.Category == CatBackward {
				return s.Seconds
			}
		}
		return 0
	}
	grads := 0.0
	for _, g := range gradientSizes(t, "bert-base", 8) {
		grads += float64(g)
	}
	gpu, err := hw.LookupGPU("v100-16gb")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		precision string
		bytes     float64 // per float32 gradient element and micro-step
	}{{"float32", 12}, {"mixed_float16", 24}} {
		extra := bwd("bert-adamw", tc.precision) - bwd("adam", tc.precision)
		// Four micro-steps, each bytes/4 passes over the gradients at the GPU's bandwidth.
		floor := 4 * tc.bytes / 4 * grads / gpu.MemBandwidth
		if extra < floor || extra > 2*floor {
			t.Errorf("%s: bert-adamw's accumulated backward is %.3g s longer than adam's, want %.3g to %.3g s (%g bytes per element per micro-step)",
				tc.precision, extra, floor, 2*floor, tc.bytes)
		}
	}
}
