package models

import (
	"strings"
	"testing"
)

// keptInto lists the tensors whose names end with one of the suffixes that are alive when the
// first backward op starts (kept from forward for backward).
func keptInto(t *testing.T, model string, o PlanOptions, suffixes ...string) map[string]int {
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
