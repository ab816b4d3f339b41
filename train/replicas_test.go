package train

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/gpusim/gpusim/collective"
	"github.com/gpusim/gpusim/hw"
)

func breakdownOf(res *Result, cat string) float64 {
	for _, s := range res.Breakdown {
		if s.Category == cat {
			return s.Seconds
		}
	}
	return 0
}

// TestHostBoundWithoutXLA: MirroredStrategy's one TF runtime dispatches the kernels of all 8
// replicas. ResNet-50 in mixed_float16 on 8 A100s has short kernels and ~1,500 of them per
// replica without XLA: the host cannot keep 8 GPUs busy and the step is launch-bound; XLA's
// few fused kernels lift it (public 8-GPU logs gain up to 2.7x, REFERENCE.md). Separate host
// threads per GPU (TF_GPU_THREAD_MODE=gpu_private) lift most of it too.
func TestHostBoundWithoutXLA(t *testing.T) {
	run := func(xla bool, env map[string]string) (*Result, *Result) {
		one := mustRun(t, cfgWith(func(c *Config) { c.Precision, c.XLA, c.Steps, c.Env = "mixed_float16", xla, 10, env }))
		eight := mustRun(t, cfgWith(func(c *Config) {
			c.Precision, c.XLA, c.Steps, c.Env = "mixed_float16", xla, 10, env
			c.GPUCount, c.Strategy, c.Batch = 8, "mirrored", 512
		}))
		return one, eight
	}
	one, eager := run(false, nil)
	_, xla := run(true, nil)
	oneP, private := run(false, map[string]string{"TF_GPU_THREAD_MODE": "gpu_private"})
	launch := breakdownOf(eager, CatLaunch) / eager.StepTime
	if launch < 0.2 {
		t.Errorf("8 GPUs without XLA: launch %.0f%% of the step, want host-bound (>= 20%%)", 100*launch)
	}
	if s := eager.Throughput / one.Throughput; s > 6.5 {
		t.Errorf("8 GPUs without XLA: %.2fx one GPU, want a host-bound scaling below 6.5x", s)
	}
	if r := eager.StepTime / xla.StepTime; r < 2 {
		t.Errorf("XLA step %v vs %v without: %.2fx, want XLA to lift the host bound (>= 2x)", xla.StepTime, eager.StepTime, r)
	}
	t.Logf("8 GPUs: step %v without XLA (launch %v), %v with (launch %v); one GPU %v",
		eager.StepTime, breakdownOf(eager, CatLaunch), xla.StepTime, breakdownOf(xla, CatLaunch), one.StepTime)
	// What is left under XLA is Keras fit's per-step host work (hw.GPU.StepOverhead), the same
	// on one GPU: the dispatch of the replicas' ops is gone.
	if le, lx := breakdownOf(eager, CatLaunch), breakdownOf(xla, CatLaunch); lx > le/3 {
		t.Errorf("launch per step %v with XLA, %v without; want XLA to remove most of it", lx, le)
	}
	if sp, se := private.Throughput/oneP.Throughput, eager.Throughput/one.Throughput; sp < se+0.5 {
		t.Errorf("gpu_private threads: %.2fx, shared runtime %.2fx; want per-GPU threads to scale better", sp, se)
	}
}

// TestStragglersWait: replicas draw their kernel-time factors from their own seeded streams,
// so the slowest sets each step (the sync category) and the step is longer than with
// symmetric replicas; the same seed gives the same run, another seed another one.
func TestStragglersWait(t *testing.T) {
	cfg := func(seed uint64, sym bool) Config {
		return cfgWith(func(c *Config) {
			c.GPUCount, c.Strategy, c.Batch, c.Steps, c.XLA = 8, "mirrored", 512, 30, true
			c.Seed, c.SymmetricReplicas = seed, sym
		})
	}
	a, b, other, sym := mustRun(t, cfg(1, false)), mustRun(t, cfg(1, false)), mustRun(t, cfg(2, false)), mustRun(t, cfg(1, true))
	if a.StepTime != b.StepTime || len(a.StepTimes) != len(b.StepTimes) {
		t.Errorf("same seed: step %v and %v, want identical runs", a.StepTime, b.StepTime)
	}
	same := true
	for i := range a.StepTimes {
		if a.StepTimes[i] != other.StepTimes[i] {
			same = false
		}
	}
	if same {
		t.Error("seeds 1 and 2 give identical step times: the jitter ignores the seed")
	}
	if a.StepTime <= sym.StepTime {
		t.Errorf("jittered step %v, symmetric %v: want the slowest replica to cost time", a.StepTime, sym.StepTime)
	}
	if breakdownOf(a, CatSync) <= breakdownOf(sym, CatSync) {
		t.Errorf("sync %v jittered vs %v symmetric, want replicas waiting for the slowest", breakdownOf(a, CatSync), breakdownOf(sym, CatSync))
	}
	if sym.FastForwarded == 0 || a.FastForwarded != 0 {
		t.Errorf("fast-forwarded %d symmetric, %d jittered: want symmetric replicas replayed, jittered ones not", sym.FastForwarded, a.FastForwarded)
	}
}

// TestPCIeScalesWorseThanNVLink: the same 8 A100s on a DGX A100 (NVSwitch) and on a PCIe
// server whose rings cross the sockets: NCCL runs at the inter-socket link's 16 GB/s, the
// all-reduce takes ~15x longer and the scaling falls.
func TestPCIeScalesWorseThanNVLink(t *testing.T) {
	run := func(host string) *Result {
		return mustRun(t, cfgWith(func(c *Config) {
			c.GPUCount, c.Strategy, c.Batch, c.Steps, c.XLA, c.Host = 8, "mirrored", 512, 20, true, host
		}))
	}
	one := mustRun(t, cfgWith(func(c *Config) { c.XLA, c.Steps = true, 20 }))
	nv, pcie := run("dgx-a100"), run("pcie-8x")
	if nv.AllReduce.Topology != collective.NVSwitch || pcie.AllReduce.Topology != collective.PCIe {
		t.Fatalf("topologies %s and %s, want nvswitch and pcie", nv.AllReduce.Topology, pcie.AllReduce.Topology)
	}
	sn, sp := nv.Throughput/one.Throughput, pcie.Throughput/one.Throughput
	if sp >= sn-0.5 {
		t.Errorf("scaling over one GPU: PCIe %.2fx, NVSwitch %.2fx; want PCIe clearly worse", sp, sn)
	}
	if pcie.AllReduceTime < 10*nv.AllReduceTime {
		t.Errorf("all-reduce PCIe %v, NVSwitch %v; want the socket link's 16 GB/s against 235 GB/s", pcie.AllReduceTime, nv.AllReduceTime)
	}
}

// TestBusBandwidthPerTopology: the nccl-tests busbw of a large all-reduce (8 GiB, as
// all_reduce_perf -e 8G reports it) that each built-in box gives, against published figures:
//   - DGX A100: "should reach 230 GB/s" (sjeaugey, NVIDIA/nccl-tests#149);
//   - HGX H100: "NCCL can get an effective NVLink bandwidth of 370GB/s" (NVIDIA/nccl-tests#212);
//   - DGX-1 and DGX-2 (V100, 6 NVLinks per GPU): ~20 GB/s effective per NVLink
//     (sjeaugey, nccl-tests#149: 25 GB/s line rate, 128 B payloads), 120 GB/s for six.
//
// The PCIe box has no published counterpart here: its 16 GB/s is NCCL's own model (PCI_BW
// scaled to Gen4, capped at AMD_BW across the sockets), kept as a golden value.
func TestBusBandwidthPerTopology(t *testing.T) {
	for _, tc := range []struct {
		host, gpu string
		n, nodes  int
		published float64
	}{
		{"dgx-a100", "a100-40gb", 8, 1, 230e9},
		{"hgx-h100", "h100-80gb", 8, 1, 370e9},
		{"dgx-1", "v100-16gb", 8, 1, 120e9},
		{"dgx-2", "v100-32gb", 16, 1, 120e9},
		{"pcie-8x", "a100-40gb", 8, 1, 16e9},
	} {
		r := collective.AllReduce(busTopology(t, tc.host, tc.gpu, tc.n, tc.nodes), 8<<30, "")
		if e := r.BusBW/tc.published - 1; math.Abs(e) > 0.10 {
			t.Errorf("%s (%d x %s): busbw %.1f GB/s, published %.0f GB/s: %+.0f%%, want within 10%%", tc.host, tc.n, tc.gpu, r.BusBW/1e9, tc.published/1e9, 100*e)
		}
	}
}

// busTopology is the topology train builds for n GPUs of the named kind over nodes hosts of
// the named kind, each host's first n/nodes cards.
func busTopology(t *testing.T, host, gpu string, n, nodes int) collective.Topology {
	t.Helper()
	h, err := hw.LookupHost(host)
	if err != nil {
		t.Fatal(err)
	}
	g, err := hw.LookupGPU(gpu)
	if err != nil {
		t.Fatal(err)
	}
	topo, err := topologyOf(g, h, true, n, nodes, firstGPUs(n/max(nodes, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// TestDGX1QuadBusBandwidth: four GPUs of a DGX-1 (Horovod's local ranks 0-3) ring over the
// links between them only, 4 of each GPU's 6 (hw.Host.NVLinkShare), so their busbw is 4/6 of
// the whole box's; a DGX-2's NVSwitch gives any 4 of its GPUs every link.
func TestDGX1QuadBusBandwidth(t *testing.T) {
	busbw := func(host, gpu string, n int) float64 {
		return collective.AllReduce(busTopology(t, host, gpu, n, 1), 8<<30, "").BusBW
	}
	four, eight := busbw("dgx-1", "v100-16gb", 4), busbw("dgx-1", "v100-16gb", 8)
	if r := four / eight; math.Abs(r-4.0/6) > 0.02 {
		t.Errorf("DGX-1 busbw: 4 GPUs %.1f GB/s, 8 GPUs %.1f GB/s: ratio %.3f, want 4/6", four/1e9, eight/1e9, r)
	}
	four2, sixteen := busbw("dgx-2", "v100-sxm3-32gb", 4), busbw("dgx-2", "v100-sxm3-32gb", 16)
	if r := four2 / sixteen; math.Abs(r-1) > 0.02 {
		t.Errorf("DGX-2 busbw: 4 GPUs %.1f GB/s, 16 GPUs %.1f GB/s: ratio %.3f, want 1 (NVSwitch)", four2/1e9, sixteen/1e9, r)
	}
}

// TestDGX1RingsFollowTheCards: on a DGX-1 the cards a run uses set its rings' links, through
// CUDA_VISIBLE_DEVICES to nvidia-smi indices: GPUs 0 and 4 share two NVLinks (NV2), GPUs 0 and
// 1 one (NV1), so MirroredStrategy's all-reduce over the first pair has twice the bus bandwidth.
func TestDGX1RingsFollowTheCards(t *testing.T) {
	busbw := func(visible string) float64 {
		res := mustRun(t, cfgWith(func(c *Config) {
			c.GPU, c.Host, c.GPUCount, c.Strategy, c.Batch, c.Steps = "v100-16gb", "dgx-1", 8, "mirrored", 128, 3
			c.CUDAVisibleDevices = &visible
		}))
		if res.AllReduce == nil || res.Replicas != 2 {
			t.Fatalf("CUDA_VISIBLE_DEVICES=%s: %d replicas, all-reduce %v; want 2 and one", visible, res.Replicas, res.AllReduce)
		}
		return res.AllReduce.BusBW
	}
	nv2, nv1 := busbw("0,4"), busbw("0,1")
	if r := nv2 / nv1; math.Abs(r-2) > 0.1 {
		t.Errorf("DGX-1 busbw: GPUs 0,4 (NV2) %.1f GB/s, GPUs 0,1 (NV1) %.1f GB/s: ratio %.2f, want 2", nv2/1e9, nv1/1e9, r)
	}
}

// TestHorovodCycleHidden: under XLA the hosts have issued the backward pass (and enqueued every
// HorovodAllreduce) long before the GPUs finish it, so Horovod's background thread negotiated
// the buckets in an earlier cycle and the all-reduce follows the backward pass at once: what
// is exposed is the buckets' copies, NCCL and launches, the coordination and nothing for the
// 5 ms cycle.
func TestHorovodCycleHidden(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) {
		c.Model, c.GPU, c.Host, c.GPUCount, c.Strategy, c.Batch, c.Steps = "resnet50-v1.5", "a100-40gb", "dgx-a100", 8, "horovod", 8*256, 8
		c.XLA, c.Precision, c.SymmetricReplicas = true, "mixed_float16", true
	}))
	a := res.AllReduce
	if a == nil || a.Horovod == nil {
		t.Fatalf("no Horovod all-reduce: %+v", a)
	}
	h := a.Horovod
	want := h.NCCLSeconds + h.CopySeconds + a.LaunchSeconds + h.PostReduceSeconds + processSyncPerLevel*3
	if math.Abs(a.ExposedSeconds-want) > 1e-6 {
		t.Errorf("exposed all-reduce %.4f ms, want copies %.4f + NCCL %.4f + launches %.4f + post %.4f + coordination %.4f = %.4f ms (no cycle wait)",
			1e3*a.ExposedSeconds, 1e3*h.CopySeconds, 1e3*h.NCCLSeconds, 1e3*a.LaunchSeconds, 1e3*h.PostReduceSeconds, 1e3*processSyncPerLevel*3, 1e3*want)
	}
}

// TestMultiNode: 32 A100s on 4 DGX A100s train with MultiWorkerMirroredStrategy over the
// hosts' InfiniBand: NCCL's rings cross the network, so the all-reduce is slower than on one
// box, and a box cannot hold 16 GPUs.
func TestMultiNode(t *testing.T) {
	run := func(count, nodes int) *Result {
		return mustRun(t, cfgWith(func(c *Config) {
			c.GPUCount, c.Nodes, c.Strategy, c.Batch, c.Steps, c.XLA, c.Host = count, nodes, "multi_worker_mirrored", 64*count*max(nodes, 1), 10, true, "dgx-a100"
		}))
	}
	box, four := run(8, 1), run(8, 4)
	if four.Replicas != 32 {
		t.Fatalf("4 nodes of 8: %d replicas, want 32", four.Replicas)
	}
	if four.AllReduce.Seconds <= box.AllReduce.Seconds {
		t.Errorf("all-reduce on 4 nodes %v, on one box %v: want the network to cost", four.AllReduce.Seconds, box.AllReduce.Seconds)
	}
	if _, err := Run(context.Background(), cfgWith(func(c *Config) { c.GPUCount, c.Strategy, c.Batch, c.Host = 16, "mirrored", 1024, "dgx-a100" })); err == nil {
		t.Error("16 GPUs in one DGX A100: no error, want a hardware.count error (the box holds 8)")
	}
	if _, err := Run(context.Background(), cfgWith(func(c *Config) { c.GPUCount, c.Nodes, c.Strategy, c.Batch = 8, 2, "mirrored", 1024 })); err == nil {
		t.Error("MirroredStrategy on 2 nodes: no error, want hardware.nodes to need a multi-worker strategy")
	}
}

// TestNCCLBuffersCounted: NCCL's channel buffers come out of the GPU memory TF's pool left
// free. With TF's default limit there is room (MinSystemMemory keeps 1.5 GiB on an A100); a
// logical device of all but 100 MiB of the card leaves too little, and the first all-reduce
// fails as NCCL's cudaMalloc does.
func TestNCCLBuffersCounted(t *testing.T) {
	ok := mustRun(t, cfgWith(func(c *Config) { c.GPUCount, c.Strategy, c.Batch, c.Steps = 2, "mirrored", 128, 2 }))
	if ok.OOM != nil || ok.AllReduce.NCCLBufferBytes <= 0 {
		t.Fatalf("default limit: OOM %v, NCCL buffers %d; want a run with NCCL buffers counted", ok.OOM, ok.AllReduce.NCCLBufferBytes)
	}
	g, err := hw.LookupGPU("a100-40gb")
	if err != nil {
		t.Fatal(err)
	}
	limit := (g.MemoryBytes-g.ContextBytes)>>20 - 100
	full := mustRun(t, cfgWith(func(c *Config) {
		c.GPUCount, c.Strategy, c.Batch, c.Steps, c.Memory.LimitMiB = 2, "mirrored", 128, 2, limit
	}))
	if full.OOM == nil || full.OOM.Tensor != "nccl_buffers" {
		t.Fatalf("memory.limit_mib=%d: OOM %+v, want NCCL's buffers to find no memory", limit, full.OOM)
	}
	t.Log(full.OOM.Message)
}

// TestHierarchicalCopyRootsHoldTheSum: HierarchicalCopyAllReduce sums each pack on two roots,
// GPU 0 and GPU n/2 for the first pack; both hold the received copies, the others do not.
func TestHierarchicalCopyRootsHoldTheSum(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) {
		c.GPUCount, c.Strategy, c.Batch, c.Steps, c.CrossDeviceOps = 8, "mirrored", 512, 2, collective.ImplHierarchicalCopy
		c.Memory.Allocator = "cuda_malloc_async"
	}))
	if res.OOM != nil {
		t.Fatal(res.OOM.Message)
	}
	p := func(i int) int64 { return res.Devices[i].AllReducePeakBytes }
	if p(0) != p(4) || p(0) <= p(1) {
		t.Errorf("all-reduce peaks GPU:0 %d, GPU:4 %d, GPU:1 %d; want the two roots equal and above the others", p(0), p(4), p(1))
	}
}

// TestHorovodCompressionAndFusionCopies: Compression.fp16 halves the bytes of float32
// gradients on the wire, so the all-reduce after backward shrinks; and Horovod's fused
// buckets pay their fusion-buffer copies (in and out) on top of the NCCL time.
func TestHorovodCompressionAndFusionCopies(t *testing.T) {
	base := func(comp string) Config {
		c := DefaultConfig()
		c.Model, c.GPU, c.Host, c.XLA, c.Steps = "bert-large:seq=384", "v100-16gb", "dgx-1", true, 8
		c.Precision, c.Optimizer, c.GPUCount, c.Batch = "mixed_float16", "adam", 8, 32
		c.Strategy, c.HorovodCompression, c.SymmetricReplicas = "horovod", comp, true
		return c
	}
	none, fp16 := mustRun(t, base("none")), mustRun(t, base("fp16"))
	if !(fp16.AllReduceTime < 0.7*none.AllReduceTime) {
		t.Errorf("all-reduce with Compression.fp16 %.2f ms, without %.2f ms: want fp16 under 70%%", 1e3*fp16.AllReduceTime, 1e3*none.AllReduceTime)
	}
	// The NCCL time alone of none's buckets is below its exposed all-reduce by the copies.
	r, err := newRunner(base("none"), false)
	if err != nil || r.sync.multi.overlap == nil {
		t.Fatalf("newRunner: %v, overlap %v", err, r.sync.multi.overlap)
	}
	var nccl float64
	for _, b := range r.sync.multi.overlap.Buckets {
		nccl += b.Result.Seconds
	}
	if !(none.AllReduceTime > nccl+2e-3) {
		t.Errorf("exposed all-reduce %.2f ms, NCCL alone %.2f ms: want the fusion-buffer copies (1.3 GB in and out) on top", 1e3*none.AllReduceTime, 1e3*nccl)
	}
	bad := base("fp16")
	bad.Strategy = "default"
	if _, err := Run(context.Background(), bad); err == nil {
		t.Errorf("Compression.fp16 without a multi-GPU strategy ran; want an error naming HorovodCompression")
	}
}

// TestHorovodAllReduceInfo: a Horovod run reports its own fusion buckets: one NCCL call per
// bucket, each within HOROVOD_FUSION_THRESHOLD unless it is one tensor, the buckets holding every
// gradient once (half the float32 bytes under Compression.fp16), and the reported time and
// busbw those of the buckets; MirroredStrategy reports none.
func TestHorovodAllReduceInfo(t *testing.T) {
	run := func(strategy, comp string) *Result {
		c := DefaultConfig()
		c.Model, c.GPU, c.Host, c.XLA, c.Steps = "bert-large:seq=384", "v100-16gb", "dgx-1", true, 8
		c.Precision, c.Optimizer, c.GPUCount, c.Batch = "mixed_float16", "adam", 8, 32
		c.Strategy, c.HorovodCompression, c.SymmetricReplicas = strategy, comp, true
		return mustRun(t, c)
	}
	for _, comp := range []string{"none", "fp16"} {
		res := run("horovod", comp)
		a := res.AllReduce
		if a == nil || a.Horovod == nil {
			t.Fatalf("horovod %s: AllReduce %+v, want Horovod's plan", comp, a)
		}
		h := a.Horovod
		if a.Calls != len(h.Buckets) || a.NumPacks != 0 {
			t.Errorf("horovod %s: %d NCCL calls, num_packs %d; want one call per bucket (%d) and no packs", comp, a.Calls, a.NumPacks, len(h.Buckets))
		}
		var bytes int64
		var grads int
		var nccl float64
		for i, b := range h.Buckets {
			if b.Bytes > h.FusionThresholdBytes && b.Gradients > 1 {
				t.Errorf("horovod %s: bucket %d holds %d bytes in %d tensors, over the %d threshold", comp, i, b.Bytes, b.Gradients, h.FusionThresholdBytes)
			}
			bytes += b.Bytes
			grads += b.Gradients
			nccl += b.Seconds
		}
		want := a.GradientBytes
		if comp == "fp16" {
			want /= 2 // every BERT gradient is float32 (the variables' dtype)
		}
		if bytes != h.WireBytes || bytes < want-int64(grads) || bytes > want {
			t.Errorf("horovod %s: buckets hold %d bytes, WireBytes %d, want %d (gradients %d)", comp, bytes, h.WireBytes, want, a.GradientBytes)
		}
		if math.Abs(nccl-h.NCCLSeconds) > 1e-12 || a.Seconds < h.NCCLSeconds || a.BusBW <= 0 {
			t.Errorf("horovod %s: time %v, NCCL %v (buckets %v), busbw %v", comp, a.Seconds, h.NCCLSeconds, nccl, a.BusBW)
		}
	}
	if m := run("mirrored", ""); m.AllReduce == nil || m.AllReduce.Horovod != nil {
		t.Errorf("mirrored: AllReduce %+v, want MirroredStrategy's plan without Horovod's", m.AllReduce)
	}
}

// TestTopologyOverridesHost: Config.Topology replaces the host profile's interconnect and
// keeps the rest of the box: DGX A100's GPUs over PCIe through one root complex, then across
// the sockets, all-reduce slower each time; without a host profile it sets the interconnect of
// the GPU's guessed server.
func TestTopologyOverridesHost(t *testing.T) {
	run := func(host, topo string) *Result {
		c := DefaultConfig()
		c.Model, c.GPU, c.Host, c.Topology = "resnet50", "a100-40gb", host, topo
		c.GPUCount, c.Batch, c.Strategy, c.Steps, c.SymmetricReplicas = 8, 512, "mirrored", 6, true
		return mustRun(t, c)
	}
	sw, phb, sys := run("dgx-a100", ""), run("dgx-a100", "pcie"), run("dgx-a100", "pcie-sys")
	if got := phb.AllReduce.Topology; got != collective.PCIe {
		t.Errorf("dgx-a100 with topology pcie runs over %q, want pcie", got)
	}
	if !(sw.AllReduceTime < phb.AllReduceTime && phb.AllReduceTime < sys.AllReduceTime) {
		t.Errorf("all-reduce nvswitch %.2f ms, pcie %.2f ms, pcie-sys %.2f ms: want increasing", 1e3*sw.AllReduceTime, 1e3*phb.AllReduceTime, 1e3*sys.AllReduceTime)
	}
	if got := run("", "pcie").AllReduce.Topology; got != collective.PCIe {
		t.Errorf("no host, topology pcie: runs over %q, want pcie", got)
	}
	c := DefaultConfig()
	c.GPU, c.Topology, c.GPUCount, c.Batch, c.Strategy = "t4", "nvlink", 4, 64, "mirrored"
	_, err := Run(context.Background(), c)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "Topology" {
		t.Errorf("t4 over nvlink: error %v, want a FieldError on Topology (a T4 has no NVLink)", err)
	}
}

// firstGPUs is 0..n-1: the GPUs one host's Horovod ranks take.
func firstGPUs(n int) []int {
	g := make([]int, n)
	for i := range g {
		g[i] = i
	}
	return g
}
