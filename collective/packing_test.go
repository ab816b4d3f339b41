package collective

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPack(t *testing.T) {
	tests := []struct {
		name        string
		grads       []int64
		packs       int
		wantPacks   []int64
		wantStages  []Stage
		wantOutputs []string
		wantExtra   int64
	}{
		{
			name: "one pack, aligned gradients: concat, in-place NCCL, slices back",
			// 64, 128, 256 float32 elements: every boundary is a multiple of 64 bytes.
			grads: []int64{256, 512, 1024}, packs: 1,
			wantPacks: []int64{1792},
			wantStages: []Stage{
				{Name: "pack.concat", Alloc: []Buffer{{"concat", 1792}}, Free: []string{GradientsName}},
				{Name: "allreduce"},
			},
			wantOutputs: []string{"concat"},
			wantExtra:   1792,
		},
		{
			name:  "one pack, unaligned gradients: the split back copies",
			grads: []int64{100, 200}, packs: 1,
			wantPacks: []int64{300},
			wantStages: []Stage{
				{Name: "pack.concat", Alloc: []Buffer{{"concat", 300}}, Free: []string{GradientsName}},
				{Name: "allreduce"},
				{Name: "unpack.split", Alloc: []Buffer{{"grad_reduced_0", 100}, {"grad_reduced_1", 200}}, Free: []string{"concat"}},
			},
			wantOutputs: []string{"grad_reduced_0", "grad_reduced_1"},
			wantExtra:   300,
		},
		{
			name: "two aligned packs: slices of the concat, NCCL allocates outputs",
			// 448 elements // 2 = 224 = 896 bytes, a multiple of 64.
			grads: []int64{256, 512, 1024}, packs: 2,
			wantPacks: []int64{896, 896},
			wantStages: []Stage{
				{Name: "pack.concat", Alloc: []Buffer{{"concat", 1792}}, Free: []string{GradientsName}},
				{Name: "allreduce", Alloc: []Buffer{{"reduced_0", 896}, {"reduced_1", 896}}, Free: []string{"concat"}},
				{Name: "unpack.concat", Alloc: []Buffer{{"unpacked", 1792}}, Free: []string{"reduced_0", "reduced_1"}},
			},
			wantOutputs: []string{"unpacked"},
			wantExtra:   1792,
		},
		{
			name: "three unaligned packs: split copies, last pack takes the remainder",
			// 448 // 3 = 149 elements = 596 bytes; the last gets 150 = 600 bytes.
			grads: []int64{256, 512, 1024}, packs: 3,
			wantPacks: []int64{596, 596, 600},
			wantStages: []Stage{
				{Name: "pack.concat", Alloc: []Buffer{{"concat", 1792}}, Free: []string{GradientsName}},
				{Name: "pack.split", Alloc: []Buffer{{"pack_0", 596}, {"pack_1", 596}, {"pack_2", 600}}, Free: []string{"concat"}},
				{Name: "allreduce"},
				{Name: "unpack.concat", Alloc: []Buffer{{"unpacked", 1792}}, Free: []string{"pack_0", "pack_1", "pack_2"}},
			},
			wantOutputs: []string{"unpacked"},
			wantExtra:   1792,
		},
		{
			name:  "num_packs=0: every gradient reduced in place",
			grads: []int64{100, 200}, packs: 0,
			wantPacks:   []int64{100, 200},
			wantStages:  []Stage{{Name: "allreduce"}},
			wantOutputs: []string{GradientsName},
			wantExtra:   0,
		},
		{
			name:  "a single gradient needs no concat",
			grads: []int64{1024}, packs: 1,
			wantPacks:   []int64{1024},
			wantStages:  []Stage{{Name: "allreduce"}},
			wantOutputs: []string{GradientsName},
			wantExtra:   0,
		},
	}
	for _, tc := range tests {
		p, err := Pack(tc.grads, PackOptions{NumPacks: tc.packs})
		if err != nil {
			t.Fatalf("%s: Pack: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.wantPacks, p.Packs); diff != "" {
			t.Errorf("%s: Packs (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(tc.wantStages, p.Stages); diff != "" {
			t.Errorf("%s: Stages (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(tc.wantOutputs, p.Outputs); diff != "" {
			t.Errorf("%s: Outputs (-want +got):\n%s", tc.name, diff)
		}
		if p.ExtraBytes != tc.wantExtra {
			t.Errorf("%s: ExtraBytes = %d, want %d", tc.name, p.ExtraBytes, tc.wantExtra)
		}
	}
}

func TestPackErrors(t *testing.T) {
	if _, err := Pack([]int64{4}, PackOptions{NumPacks: -1}); err == nil || !strings.Contains(err.Error(), "requires num_packs >= 0, but -1 is specified") {
		t.Errorf("Pack(num_packs=-1) error = %v, want TF's ValueError text", err)
	}
	if _, err := Pack([]int64{4, 6}, PackOptions{NumPacks: 1}); err == nil || !strings.Contains(err.Error(), "gradient 1") {
		t.Errorf("Pack(6 bytes of float32) error = %v, want it to name gradient 1", err)
	}
}

func TestSelectCrossDeviceOps(t *testing.T) {
	tests := []struct {
		name     string
		s        Selection
		want     string
		wantWarn string
	}{
		{"8 GPUs", Selection{LogicalGPUs: 8, PhysicalGPUs: 8}, ImplNCCL, ""},
		{"one GPU split in two", Selection{LogicalGPUs: 2, PhysicalGPUs: 1}, ImplReductionToOneDevice, "virtual GPUs"},
		{"a GPU hidden by set_visible_devices", Selection{LogicalGPUs: 1, PhysicalGPUs: 2}, ImplReductionToOneDevice, "virtual GPUs"},
		{"CPU in the device list", Selection{LogicalGPUs: 2, PhysicalGPUs: 2, NonGPUDevice: true}, ImplReductionToOneDevice, "non-GPU devices"},
		{"no NCCL kernel", Selection{LogicalGPUs: 2, PhysicalGPUs: 2, NoNCCLKernel: true}, ImplReductionToOneDevice, "Nccl kernel is not found"},
	}
	for _, tc := range tests {
		got, warn := SelectCrossDeviceOps(tc.s)
		if got != tc.want || !strings.Contains(warn, tc.wantWarn) || (tc.wantWarn == "" && warn != "") {
			t.Errorf("%s: SelectCrossDeviceOps = %q, %q; want %q with a warning containing %q", tc.name, got, warn, tc.want, tc.wantWarn)
		}
	}
}

// resnet50Grads stands in for a model's gradient list: 161 tensors, 25.5 M float32 parameters.
func resnet50Grads() []int64 {
	var g []int64
	var total int64
	for i := 0; i < 160; i++ {
		b := int64(4 * (64 << (i % 6)) * 9)
		g = append(g, b)
		total += b
	}
	return append(g, 102_228_128-total)
}

func TestPlanGradientAllReduceNCCL(t *testing.T) {
	grads := resnet50Grads()
	var total int64
	for _, b := range grads {
		total += b
	}
	one, err := PlanGradientAllReduce(dgxA100, grads, DefaultGradientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Calls) != 1 || one.Seconds != AllReduce(dgxA100, total, "auto").Seconds {
		t.Errorf("num_packs=1: %d calls, %v s; want one all-reduce of %d bytes (%v s)", len(one.Calls), one.Seconds, total, AllReduce(dgxA100, total, "auto").Seconds)
	}
	if one.Pack.ExtraBytes != total {
		t.Errorf("num_packs=1 ExtraBytes = %d, want the concat buffer, %d", one.Pack.ExtraBytes, total)
	}
	o := DefaultGradientOptions()
	o.Pack.NumPacks = 0
	unpacked, err := PlanGradientAllReduce(dgxA100, grads, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(unpacked.Calls) != len(grads) || unpacked.Seconds <= one.Seconds || unpacked.Pack.ExtraBytes != 0 {
		t.Errorf("num_packs=0: %d calls, %.3f ms, extra %d; want %d calls, slower than packed (%.3f ms), no extra memory", len(unpacked.Calls), unpacked.Seconds*1e3, unpacked.Pack.ExtraBytes, len(grads), one.Seconds*1e3)
	}
}

func TestPlanGradientAllReduceAlternatives(t *testing.T) {
	grads := []int64{100 << 20}
	nccl, err := PlanGradientAllReduce(dgxA100, grads, DefaultGradientOptions())
	if err != nil {
		t.Fatal(err)
	}
	hier, err := PlanGradientAllReduce(dgxA100, grads, GradientOptions{Impl: ImplHierarchicalCopy, Pack: PackOptions{NumPacks: 1}})
	if err != nil {
		t.Fatal(err)
	}
	rtod, err := PlanGradientAllReduce(dgxA100, grads, GradientOptions{Impl: ImplReductionToOneDevice})
	if err != nil {
		t.Fatal(err)
	}
	// Per byte of link bandwidth: ring 2(n-1)/n = 1.75; hierarchical copy's chain 3+1+1+3 = 8;
	// reduction to one device 7 in then 7 out = 14.
	s := float64(100<<20) / BusBandwidthOf(dgxA100)
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{{"nccl", nccl.Seconds, 1.75 * s}, {"hierarchical_copy", hier.Seconds, 8 * s}, {"reduction_to_one_device", rtod.Seconds, 14 * s}} {
		if !within(c.got, c.want, 0.10) {
			t.Errorf("%s: %.3f ms, want %.3f ms within 10%%", c.name, c.got*1e3, c.want*1e3)
		}
	}

	odd := dgxA100
	odd.GPUs = 3
	h3, err := PlanGradientAllReduce(odd, grads, GradientOptions{Impl: ImplHierarchicalCopy, Pack: PackOptions{NumPacks: 1}})
	if err != nil || len(h3.Warnings) == 0 {
		t.Errorf("hierarchical copy on 3 GPUs: err %v, warnings %q; want a warning about the GPU left out", err, h3.Warnings)
	}
}

func TestPlanGradientAllReduceVirtualGPUs(t *testing.T) {
	// Two logical devices on one H200: 4.13e12 B/s of device copy (testdata/copies_h200.json).
	virt := Topology{GPUs: 2, Kind: NVSwitch, LinkBandwidth: 450e9, CCMajor: 9, Physical: []int{0, 0}, MemBandwidth: 4.13e12}
	if _, err := PlanGradientAllReduce(virt, []int64{1 << 20}, DefaultGradientOptions()); err == nil || !strings.Contains(err.Error(), "duplicate GPU") {
		t.Errorf("NCCL on virtual GPUs: error = %v, want NCCL's duplicate GPU error", err)
	}
	g, err := PlanGradientAllReduce(virt, []int64{100 << 20}, GradientOptions{Impl: ImplReductionToOneDevice})
	if err != nil {
		t.Fatal(err)
	}
	// copy in (read+write), add_n of 2 (3 x S), copy out: 7 x S of memory traffic, 3 ops.
	want := 7*float64(100<<20)/4.13e12 + 3*copyOpSeconds
	if !within(g.Seconds, want, 0.05) {
		t.Errorf("ReductionToOneDevice on 2 virtual GPUs: %.1f us, want %.1f us", g.Seconds*1e6, want*1e6)
	}
}

func TestOverlapBucketed(t *testing.T) {
	const mib = 1 << 20
	grads := []ReadyGradient{{16 * mib, 1e-3}, {16 * mib, 2e-3}, {16 * mib, 3e-3}, {16 * mib, 4e-3}}
	o, err := OverlapBucketed(dgxA100, grads, 32*mib, "auto")
	if err != nil {
		t.Fatal(err)
	}
	ar := AllReduce(dgxA100, 32*mib, "auto").Seconds
	if len(o.Buckets) != 2 {
		t.Fatalf("%d buckets, want 2", len(o.Buckets))
	}
	if o.Buckets[0].Start != 2e-3 || o.Buckets[1].Start != 4e-3 || !within(o.End, 4e-3+ar, 1e-9) {
		t.Errorf("buckets start at %v and %v, end %v; want 2 ms, 4 ms, end 4 ms + %v", o.Buckets[0].Start, o.Buckets[1].Start, o.End, ar)
	}
	if !within(o.ExposedSeconds, ar, 1e-9) || o.ExposedSeconds >= o.AfterBackward.Seconds {
		t.Errorf("exposed %v s, after-backward %v s: want only the last bucket exposed, less than all at the end", o.ExposedSeconds, o.AfterBackward.Seconds)
	}
	if o.BucketBufferBytes != 64*mib {
		t.Errorf("BucketBufferBytes = %d, want %d", o.BucketBufferBytes, 64*mib)
	}
	// Gradients all ready at once: buckets queue on the NCCL stream.
	burst, _ := OverlapBucketed(dgxA100, []ReadyGradient{{16 * mib, 0}, {16 * mib, 0}}, 16*mib, "auto")
	if got := burst.Buckets[1].Start; !within(got, burst.Buckets[0].End, 1e-12) {
		t.Errorf("second bucket starts at %v, want when the first ends (%v)", got, burst.Buckets[0].End)
	}
}

// TestOverlapFused: Horovod never fuses past the threshold (Controller::FuseResponses adds a
// tensor only while tensor_size + new_tensor_size <= TensorFusionThresholdBytes()), and a
// tensor above it goes alone; OverlapBucketed's packs grow past their size instead.
func TestOverlapFused(t *testing.T) {
	const mib = 1 << 20
	grads := []ReadyGradient{{40 * mib, 0}, {30 * mib, 0}, {20 * mib, 0}, {100 * mib, 0}, {10 * mib, 0}}
	o, err := OverlapFused(dgxA100, grads, 64*mib, "auto")
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, b := range o.Buckets {
		got = append(got, b.Bytes/mib)
	}
	want := []int64{40, 50, 100, 10}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("OverlapFused buckets = %v MiB, want %v MiB", got, want)
	}
	b, _ := OverlapBucketed(dgxA100, grads, 64*mib, "auto")
	if len(b.Buckets) != 3 || b.Buckets[0].Bytes != 70*mib {
		t.Errorf("OverlapBucketed: %d buckets, first %d MiB; want 3, the first 70 MiB", len(b.Buckets), b.Buckets[0].Bytes/mib)
	}
}

func BenchmarkPlanGradientAllReduce(b *testing.B) {
	grads := resnet50Grads()
	opts := DefaultGradientOptions()
	var g GradientAllReduce
	for i := 0; i < b.N; i++ {
		g, _ = PlanGradientAllReduce(dgxA100, grads, opts)
	}
	b.ReportMetric(g.Seconds*1e3, "allreduce_ms/step")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "plans/s")
}
