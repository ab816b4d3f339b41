package models

import (
	"fmt"
	"strings"
	"testing"
)

// checkedPlan builds model's plan under o and verifies it with checkPlan.
func checkedPlan(t *testing.T, model string, o PlanOptions) *Plan {
	t.Helper()
	m, err := Get(model)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Plan(o)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, model, p)
	return p
}

// checkPlan verifies the plan's bookkeeping: every step tensor is allocated once and freed
// once, after its allocation; persistent tensors and slots are never in an op's lists;
// gradients are float32 and freed by the optimizer.
func checkPlan(t *testing.T, name string, p *Plan) {
	t.Helper()
	special := map[int]bool{}
	for _, i := range p.Persistent {
		special[i] = true
	}
	for _, i := range p.Slots {
		special[i] = true
	}
	alloc := make([]int, len(p.Tensors))
	free := make([]int, len(p.Tensors))
	for i := range alloc {
		alloc[i], free[i] = -1, -1
	}
	for k, op := range p.Ops {
		if op.Kernels < 0 || op.FLOPs < 0 || op.Bytes < 0 {
			t.Errorf("%s op %d %q: negative cost %+v", name, k, op.Name, op)
		}
		for _, i := range op.Alloc {
			if special[i] {
				t.Errorf("%s op %q allocates persistent tensor %q", name, op.Name, p.Tensors[i].Name)
			}
			if alloc[i] >= 0 {
				t.Errorf("%s tensor %q allocated twice (ops %d and %d)", name, p.Tensors[i].Name, alloc[i], k)
			}
			alloc[i] = k
		}
		for _, i := range op.Free {
			if free[i] >= 0 {
				t.Errorf("%s tensor %q freed twice (ops %d and %d)", name, p.Tensors[i].Name, free[i], k)
			}
			if alloc[i] < 0 || alloc[i] > k {
				t.Errorf("%s tensor %q freed at op %d before its allocation", name, p.Tensors[i].Name, k)
			}
			free[i] = k
		}
	}
	for i, tn := range p.Tensors {
		if special[i] {
			continue
		}
		if alloc[i] < 0 || free[i] < 0 {
			t.Errorf("%s tensor %q (%s): allocated at op %d, freed at op %d", name, tn.Name, tn.Role, alloc[i], free[i])
		}
		if tn.Bytes <= 0 && tn.Role != Workspace {
			t.Errorf("%s tensor %q has %d bytes", name, tn.Name, tn.Bytes)
		}
	}
	for _, i := range p.Gradients {
		if p.Tensors[i].DType != Float32 {
			t.Errorf("%s gradient %q is %s, want float32", name, p.Tensors[i].Name, p.Tensors[i].DType)
		}
		if f := free[i]; f < 0 || p.Ops[f].Phase != Optimizer {
			t.Errorf("%s gradient %q not freed by an optimizer op", name, p.Tensors[i].Name)
		}
	}
}

func TestPlanInvariants(t *testing.T) {
	for _, name := range Names() {
		m, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, prec := range []Precision{PrecisionFloat32, MixedFloat16, MixedBFloat16} {
			for _, xla := range []bool{false, true} {
				for _, opt := range []string{"sgd", "adam"} {
					o := PlanOptions{Batch: 2, Precision: prec, XLA: xla, Optimizer: opt}
					p, err := m.Plan(o)
					if err != nil {
						t.Fatalf("%s.Plan(%+v): %v", name, o, err)
					}
					checkPlan(t, fmt.Sprintf("%s %+v", name, o), p)
				}
			}
		}
	}
}

func TestPlanResNet50(t *testing.T) {
	m, err := Get("resnet50")
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Plan(PlanOptions{Batch: 32, Optimizer: "adam"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.PersistentBytes(), 4*m.Params; got != want {
		t.Errorf("PersistentBytes = %d, want %d (4 bytes x %d params)", got, want, m.Params)
	}
	if got, want := p.SlotBytes(), 2*4*m.TrainableParams; got != want {
		t.Errorf("Adam SlotBytes = %d, want %d (2 slots x 4 bytes x trainable)", got, want)
	}
	if got, want := p.GradientBytes(), 4*m.TrainableParams; got != want {
		t.Errorf("GradientBytes = %d, want %d", got, want)
	}
	// 161 trainable variables in ResNet50 (53 conv kernels + 53 conv biases + 53 BN gamma/beta
	// pairs / ... ): count them from the graph, and each must have one gradient.
	nt := 0
	for _, w := range m.g.weights {
		if w.trainable {
			nt++
		}
	}
	if len(p.Gradients) != nt {
		t.Errorf("len(Gradients) = %d, want %d trainable variables", len(p.Gradients), nt)
	}
	// The first op is the input batch: 32 x 224 x 224 x 3 float32 images plus 32 int32 labels.
	if got, want := p.Ops[0].Bytes, float64(32*224*224*3*4+32*4); got != want {
		t.Errorf("input op bytes = %v, want %v", got, want)
	}
	// Forward FLOPs of the plan: the model's per-sample FLOPs times the batch, plus the loss.
	f, _, _ := p.Totals(Forward)
	if want := 32 * (m.FLOPsPerSample + m.OtherFLOPsPerSample); f < want || f > want*1.001 {
		t.Errorf("forward FLOPs = %.4g, want %.4g", f, want)
	}
	b, _, _ := p.Totals(Backward)
	if r := b / f; r < 1.8 || r > 2.2 {
		t.Errorf("backward/forward FLOPs = %.2f, want about 2", r)
	}
}

// TestPlanPolicies compares precision policies and XLA on ResNet-50, batch 64.
func TestPlanPolicies(t *testing.T) {
	m, err := Get("resnet50")
	if err != nil {
		t.Fatal(err)
	}
	plan := func(prec Precision, xla bool) *Plan {
		p, err := m.Plan(PlanOptions{Batch: 64, Precision: prec, XLA: xla, Optimizer: "momentum"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	f32, f16, bf16 := plan(PrecisionFloat32, false), plan(MixedFloat16, false), plan(MixedBFloat16, false)
	x32, x16 := plan(PrecisionFloat32, true), plan(MixedFloat16, true)

	// Mixed precision halves activations: the saved bytes drop to a little over half (the
	// float32 input and cast weight copies stay).
	if r := float64(f16.SavedBytes) / float64(f32.SavedBytes); r < 0.5 || r > 0.56 {
		t.Errorf("mixed_float16/float32 saved activations = %.3f, want 0.50..0.56", r)
	}
	if f16.SavedBytes != bf16.SavedBytes {
		t.Errorf("bfloat16 saved %d, float16 saved %d: want equal", bf16.SavedBytes, f16.SavedBytes)
	}
	// Weights and slots stay float32 under both mixed policies.
	if f16.PersistentBytes() != f32.PersistentBytes() || f16.SlotBytes() != f32.SlotBytes() || f16.GradientBytes() != f32.GradientBytes() {
		t.Errorf("mixed policy changed variable, slot or gradient bytes")
	}
	// Loss scaling ops only for mixed_float16.
	has := func(p *Plan, name string) bool {
		for _, op := range p.Ops {
			if op.Name == name {
				return true
			}
		}
		return false
	}
	if !has(f16, "loss_scale/unscale") || has(bf16, "loss_scale/unscale") || has(f32, "loss_scale/unscale") {
		t.Errorf("loss_scale/unscale: float16 %v, bfloat16 %v, float32 %v; want true, false, false",
			has(f16, "loss_scale/unscale"), has(bf16, "loss_scale/unscale"), has(f32, "loss_scale/unscale"))
	}
	// The final softmax runs in float32 under mixed precision.
	for _, op := range f16.Ops {
		if op.Name == "predictions/softmax" && op.DType != Float32 {
			t.Errorf("mixed_float16 predictions/softmax dtype = %s, want float32", op.DType)
		}
		if op.Name == "conv2_block1_1_conv/Conv" && op.DType != Float16 {
			t.Errorf("mixed_float16 conv dtype = %s, want float16", op.DType)
		}
	}
	// XLA: fewer kernels, fewer bytes, lower peak, the same FLOPs (but for the weight casts
	// XLA folds into the fusions that read them).
	for _, c := range []struct {
		name  string
		a, xa *Plan
	}{{"float32", f32, x32}, {"mixed_float16", f16, x16}} {
		fa, ba, ka := c.a.Totals(-1)
		fx, bx, kx := c.xa.Totals(-1)
		if kx >= ka || bx >= ba || c.xa.PeakStepBytes() >= c.a.PeakStepBytes() {
			t.Errorf("%s XLA kernels %d vs %d, bytes %.3g vs %.3g, peak %d vs %d: want all lower with XLA",
				c.name, kx, ka, bx, ba, c.xa.PeakStepBytes(), c.a.PeakStepBytes())
		}
		if fx > fa || fx < 0.999*fa {
			t.Errorf("%s XLA FLOPs %.6g, without %.6g: want equal", c.name, fx, fa)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	m, err := Get("mlp")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []PlanOptions{{Batch: 0}, {Batch: 8, Precision: "float64"}, {Batch: 8, Optimizer: "sgdd"}} {
		if _, err := m.Plan(o); err == nil {
			t.Errorf("Plan(%+v) = nil error, want one", o)
		}
	}
}

func BenchmarkPlanResNet50(b *testing.B) {
	m, err := Get("resnet50")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Plan(PlanOptions{Batch: 64, Precision: MixedFloat16, Optimizer: "adam"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "plans/s")
}

func BenchmarkGetResNet50(b *testing.B) {
	for b.Loop() {
		if _, err := Get("resnet50"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "models/s")
}

func TestParsePrecision(t *testing.T) {
	for in, want := range map[string]Precision{"": PrecisionFloat32, "float32": PrecisionFloat32,
		"mixed_float16": MixedFloat16, "mixed_bfloat16": MixedBFloat16} {
		got, err := ParsePrecision(in)
		if err != nil || got != want {
			t.Errorf("ParsePrecision(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	if _, err := ParsePrecision("float16"); err == nil {
		t.Errorf("ParsePrecision(\"float16\") = nil error, want one")
	}
}

// TestXLAAfterReshape: an element-wise op after a view (Flatten) is not fused into the
// view's empty op; it keeps its own kernel.
func TestXLAAfterReshape(t *testing.T) {
	g := newGraph("t")
	x, _ := g.input("x", []int{4, 4, 2}, false)
	y, err := g.call("Flatten", "flat", cfg{}, x)
	if err != nil {
		t.Fatal(err)
	}
	y, _ = g.call("Activation", "act", cfg{"activation": "relu"}, y)
	y, _ = g.call("Dense", "d", cfg{"units": 3}, y)
	g.outputs = []int{y}
	m, err := g.finish()
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Plan(PlanOptions{Batch: 2, XLA: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range p.Ops {
		switch op.Name {
		case "flat/Reshape":
			if op.Kernels != 0 || op.Bytes != 0 {
				t.Errorf("flat/Reshape kernels %d bytes %v, want 0 0 (a view)", op.Kernels, op.Bytes)
			}
		case "act/relu":
			if op.Kernels != 1 {
				t.Errorf("act/relu kernels = %d, want 1", op.Kernels)
			}
		}
	}
	checkPlan(t, "flatten-relu", p)
}

// countOps counts the plan's ops of one phase that launch kernels and whose name ends with suffix.
func countOps(p *Plan, ph Phase, suffix string) int {
	n := 0
	for _, op := range p.Ops {
		if op.Phase == ph && op.Kernels > 0 && strings.HasSuffix(op.Name, suffix) {
			n++
		}
	}
	return n
}

// TestRemapperFusions checks grappler's remapper fusions without XLA: VGG16's 3x3
// convolutions absorb BiasAdd and Relu forward in float32 only (its dense layers keep theirs,
// no cuBLASLt), and ResNet-50's batch norms absorb Relu and Add+Relu only in float16 with
// TF_USE_CUDNN_BATCHNORM_SPATIAL_PERSISTENT.
func TestRemapperFusions(t *testing.T) {
	vgg, err := Get("vgg16")
	if err != nil {
		t.Fatal(err)
	}
	p, err := vgg.Plan(PlanOptions{Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := countOps(p, Forward, "/BiasAdd"), 3; got != want {
		t.Errorf("vgg16 forward BiasAdd ops = %d, want %d (the dense layers only)", got, want)
	}
	if got := countOps(p, Backward, "/BiasAdd/grad"); got != 16 {
		t.Errorf("vgg16 BiasAddGrad ops = %d, want 16 (the fusion is forward only)", got)
	}
	// A half-precision Conv2D is not fused (IsGpuCompatibleDataType: DT_FLOAT only).
	ph, err := vgg.Plan(PlanOptions{Batch: 8, Precision: MixedFloat16})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := countOps(ph, Forward, "/BiasAdd"), 16; got != want {
		t.Errorf("vgg16 mixed_float16 forward BiasAdd ops = %d, want %d (no float16 conv fusion)", got, want)
	}
	if got, want := countOps(ph, Forward, "/relu"), 15; got != want {
		t.Errorf("vgg16 mixed_float16 forward relu ops = %d, want %d", got, want)
	}
	r50, err := Get("resnet50")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		prec       Precision
		persistent bool
		relus      int
	}{
		{MixedFloat16, false, 49}, {MixedFloat16, true, 0}, {PrecisionFloat32, true, 49}, {MixedBFloat16, true, 49},
	} {
		p, err := r50.Plan(PlanOptions{Batch: 8, Precision: tc.prec, BatchNormSpatialPersistent: tc.persistent})
		if err != nil {
			t.Fatal(err)
		}
		if got := countOps(p, Forward, "/relu"); got != tc.relus {
			t.Errorf("resnet50 %s persistent=%v: forward relu ops = %d, want %d", tc.prec, tc.persistent, got, tc.relus)
		}
		if got := countOps(p, Backward, "/relu/grad"); got != tc.relus {
			t.Errorf("resnet50 %s persistent=%v: ReluGrad ops = %d, want %d", tc.prec, tc.persistent, got, tc.relus)
		}
	}
}
