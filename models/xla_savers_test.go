package models

import (
	"strings"
	"testing"
)

// keptInto lists the tensors whose names end with one of the suffixes that are alive when the
// first backward op starts (kept from forward for backward).
func keptInto(t *testing.T, model string, o PlanOptions, suffixes ...string) map[string]int {
	t.Helper()
	p := checkedPlan(t, model, o)
	live := map[int]bool{}
	for _, op := range p.Ops {
		if op.Phase == Backward {
			break
		}
		for _, x := range op.Alloc {
			live[x] = true
		}
		for _, x := range op.Free {
			delete(live, x)
		}
	}
	out := map[string]int{}
	for x := range live {
		for _, s := range suffixes {
			if strings.HasSuffix(p.Tensors[x].Name, s) {
				out[s]++
			}
		}
	}
	return out
}

// TestXLAKeptForBackward: what the XLA plan keeps from forward to backward follows XLA's
// buffer assignment of the real Keras steps (testdata/h200/keras/xla): ResNet-50 keeps its 53
// convolution outputs and the 47 ReLU outputs a convolution reads, no batch-norm output, no
// stem ReLU or padding, one zero tensor for its max pool and a transposed filter per
// convolution; VGG16 under JAX keeps every pre-activation and two zero tensors per pool, under
// TF's gradients neither.
func TestXLAKeptForBackward(t *testing.T) {
	r := keptInto(t, "resnet50", PlanOptions{Batch: 8, XLA: true, JAX: true, Optimizer: "momentum"},
		"_conv/BiasAdd", "/relu", "/FusedBatchNormV3", "pad/Pad", "/grad/zeros", "kernel/transpose")
	want := map[string]int{"_conv/BiasAdd": 53, "/relu": 47, "/FusedBatchNormV3": 0, "pad/Pad": 0, "/grad/zeros": 1, "kernel/transpose": 52}
	for k, v := range want {
		if r[k] != v {
			t.Errorf("resnet50 XLA: %d kept tensors *%s, want %d (all: %v)", r[k], k, v, r)
		}
	}
	// Without XLA, TF keeps the batch-norm inputs and every ReLU output, and no zeros.
	op := keptInto(t, "resnet50", PlanOptions{Batch: 8, Optimizer: "momentum"}, "/relu", "/grad/zeros")
	if op["/relu"] != 49 || op["/grad/zeros"] != 0 {
		t.Errorf("resnet50 op by op: kept %v, want 49 ReLU outputs and no zeros", op)
	}
	jax := keptInto(t, "vgg16", PlanOptions{Batch: 8, XLA: true, JAX: true, Optimizer: "momentum"}, "/BiasAdd", "/relu", "/grad/zeros")
	if jax["/BiasAdd"] != 15 || jax["/relu"] != 10 || jax["/grad/zeros"] != 10 {
		t.Errorf("vgg16 XLA+JAX: kept %v, want 15 pre-activations (13 convolutions, fc1, fc2), 10 ReLU outputs (8 read by a convolution, fc1, fc2), 10 zero tensors", jax)
	}
	tf := keptInto(t, "vgg16", PlanOptions{Batch: 8, XLA: true, Optimizer: "momentum"}, "/BiasAdd", "/relu", "/grad/zeros")
	if tf["/BiasAdd"] != 0 || tf["/relu"] != 15 || tf["/grad/zeros"] != 5 {
		t.Errorf("vgg16 XLA with TF's gradients: kept %v, want no pre-activation, 15 ReLU outputs (cuDNN and cuBLAS fuse the ReLU), 5 zero tensors", tf)
	}
}

// TestXLACublasWorkspace: under XLA each GEMM call carries its own cuBLAS workspace in the
// temp buffer, min(the architecture's size, the operands' bytes), for the duration of the
// call: 32 MiB for VGG16's fc1 (a 392 MiB kernel), the operands' 18.4 MB for the
// predictions layer (4096x1000 kernel, batch 128); none without XLA.
func TestXLACublasWorkspace(t *testing.T) {
	m, err := Get("vgg16")
	if err != nil {
		t.Fatal(err)
	}
	ws := func(o PlanOptions) map[string]int64 {
		p, err := m.Plan(o)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, "vgg16", p)
		out := map[string]int64{}
		for _, op := range p.Ops {
			for _, x := range op.Alloc {
				if tt := p.Tensors[x]; strings.HasSuffix(tt.Name, "cublas_workspace") {
					out[tt.Name] = tt.Bytes
					if tt.Role != Workspace {
						t.Errorf("%s: role %v, want workspace", tt.Name, tt.Role)
					}
				}
			}
		}
		return out
	}
	got := ws(PlanOptions{Batch: 128, XLA: true, BlasWorkspace: 32 << 20, Optimizer: "momentum"})
	want := map[string]int64{
		"fc1/MatMul/cublas_workspace": 32 << 20, "fc1/MatMul/grad/cublas_workspace": 32 << 20,
		"predictions/MatMul/cublas_workspace": 128*4096*4 + 4096*1000*4,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	if n := ws(PlanOptions{Batch: 128, BlasWorkspace: 32 << 20, Optimizer: "momentum"}); len(n) != 0 {
		t.Errorf("without XLA: %v, want no XLA GEMM workspace", n)
	}
}

// TestXLASqueezeSideOutput: in EfficientNetB0's squeeze-and-excitation blocks XLA keeps the
// swish output the squeeze's mean reads where that mean is a race-free column reduction of
// 784..4096 rows (blocks 2a-3b at 224x224: 56x56 and 28x28), and recomputes it from the
// depthwise convolution's output elsewhere (block 1a: 112x112 is split by the tree
// reduction rewriter; blocks 4a-7a: 14x14 and 7x7), as the recorded buffer assignment shows
// (testdata/h200/keras/xla/efficientnetb0_float32_b128.peak.txt).
func TestXLASqueezeSideOutput(t *testing.T) {
	names := []string{"block1a_activation/swish", "block2a_activation/swish", "block2b_activation/swish",
		"block3a_activation/swish", "block3b_activation/swish", "block4a_activation/swish", "block6d_activation/swish"}
	got := keptInto(t, "efficientnetb0", PlanOptions{Batch: 4, XLA: true, JAX: true, Optimizer: "momentum"}, names...)
	for i, n := range names {
		want := 0
		if i >= 1 && i <= 4 {
			want = 1
		}
		if got[n] != want {
			t.Errorf("efficientnetb0 XLA: %s kept %d times, want %d", n, got[n], want)
		}
	}
}

// TestJAXBatchNormCentered: Keras 3's batch normalization on JAX keeps its float32 x - mean
// (jnp.var's) for backward where the statistics' column reduction is race-free (at most 4096
// batch x spatial rows): ResNet-50 at batch 64 keeps it for the ten 7x7 batch norms
// (64x49 = 3136 rows) in every precision, at batch 128 (6272 rows) for none; TF's gradients
// (JAX off) never.
func TestJAXBatchNormCentered(t *testing.T) {
	for _, c := range []struct {
		batch int
		prec  Precision
		jax   bool
		want  int
	}{
		{64, PrecisionFloat32, true, 10}, {64, MixedFloat16, true, 10}, {64, MixedBFloat16, true, 10},
		{128, PrecisionFloat32, true, 0}, {64, PrecisionFloat32, false, 0},
	} {
		o := PlanOptions{Batch: c.batch, Precision: c.prec, XLA: true, JAX: c.jax, Optimizer: "momentum"}
		got := keptInto(t, "resnet50", o, "_bn/FusedBatchNormV3/centered")
		if n := got["_bn/FusedBatchNormV3/centered"]; n != c.want {
			t.Errorf("resnet50 b%d %s JAX=%v: %d centered batch-norm inputs kept, want %d", c.batch, c.prec, c.jax, n, c.want)
		}
	}
	m, _ := Get("resnet50")
	p, err := m.Plan(PlanOptions{Batch: 64, Precision: MixedFloat16, XLA: true, JAX: true, Optimizer: "momentum"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range p.Tensors {
		if strings.HasSuffix(tt.Name, "conv5_block1_0_bn/FusedBatchNormV3/centered") {
			if want := int64(64 * 7 * 7 * 2048 * 4); tt.Bytes != want || tt.DType != Float32 {
				t.Errorf("%s: %d bytes %v, want %d float32 (Keras computes moments in float32)", tt.Name, tt.Bytes, tt.DType, want)
			}
		}
	}
}
