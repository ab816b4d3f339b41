package models

import (
	"strings"
	"testing"
)

// TestL2DecayPlan: NVIDIA's ConvNets ResNet-50 adds weight_decay * sum(tf.nn.l2_loss(v)) over
// every trainable variable but batch norm's to its loss (model/resnet.py), and under --amp
// divides the gradients by a fixed loss scale with no finiteness check (utils/optimizers.py
// FixedLossScalerOptimizer). The plan reads each penalized variable once in forward and adds
// its penalty's gradient to the model's; the fixed scale drops the all_finite reduction.
func TestL2DecayPlan(t *testing.T) {
	m, err := New("resnet50-v1.5", ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The variables outside batch norm: the trainable ones less batch norm's gamma and beta
	// (53,120, as many as its moving statistics).
	const decayed = 25_559_081 - 53_120
	for _, xla := range []bool{false, true} {
		base, err := m.Plan(PlanOptions{Batch: 32, Precision: MixedFloat16, XLA: xla, Optimizer: "momentum"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Plan(PlanOptions{Batch: 32, Precision: MixedFloat16, XLA: xla, Optimizer: "momentum", L2Decay: true, StaticLossScale: true})
		if err != nil {
			t.Fatal(err)
		}
		var fwd, grad float64
		var grads int
		finite := map[bool]bool{}
		for _, pp := range []*Plan{base, p} {
			for _, op := range pp.Ops {
				if op.Name == "loss_scale/all_finite" {
					finite[pp == p] = true
				}
			}
		}
		for _, op := range p.Ops {
			switch {
			case op.Name == "l2_loss":
				if op.Phase != Forward || op.DType != Float32 {
					t.Errorf("xla=%v: l2_loss is %v %v, want a float32 forward op", xla, op.Phase, op.DType)
				}
				fwd += op.Bytes
			case strings.HasSuffix(op.Name, "/l2_loss/grad"):
				grad += op.Bytes
				grads++
				if strings.Contains(op.Name, "_bn/") {
					t.Errorf("xla=%v: %s: batch norm's variables are not decayed", xla, op.Name)
				}
			}
		}
		if fwd != 4*decayed {
			t.Errorf("xla=%v: l2_loss reads %.0f bytes, want %d (the %d decayed float32 elements)", xla, fwd, 4*decayed, decayed)
		}
		// 53 convolution kernels, the dense kernel and its bias.
		if grads != 55 {
			t.Errorf("xla=%v: %d l2_loss gradients, want 55", xla, grads)
		}
		// Gradient Mul (8 bytes) and AddN (12) op by op; one fusion of 12 under XLA.
		var extra float64
		for _, op := range p.Ops {
			if strings.HasSuffix(op.Name, "/grad/AddN") {
				extra += op.Bytes
			}
		}
		for _, op := range base.Ops {
			if strings.HasSuffix(op.Name, "/grad/AddN") {
				extra -= op.Bytes
			}
		}
		want := 20.0 * decayed
		if xla {
			want = 12 * decayed
		}
		if got := grad + extra; got != want {
			t.Errorf("xla=%v: the penalty's gradients move %.0f bytes, want %.0f", xla, got, want)
		}
		if !finite[false] || finite[true] {
			t.Errorf("xla=%v: all_finite with the dynamic scale %v, with the fixed one %v; want true, false", xla, finite[false], finite[true])
		}
	}
}
