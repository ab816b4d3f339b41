package models

import "testing"

// opBytes returns the bytes of the plan's ops by name.
func opBytes(t *testing.T, model string, o PlanOptions) map[string]float64 {
	t.Helper()
	p := checkedPlan(t, model, o)
	out := map[string]float64{}
	for _, op := range p.Ops {
		out[op.Name] = op.Bytes
	}
	return out
}

// TestXLAGradientsAsKerasTraces: the backward ops that the traced Keras steps of
// EfficientNetB0 and ResNet-50 on the H200 (testdata/h200/keras/trace) show to be no pass of
// their own. The gradient of squeeze-excite's per-channel scale is a reduction to that scale's
// size, so the sigmoid and bias gradients behind it move a batch of channel vectors, not the
// activation; an activation on a batch norm's output has its gradient inside the batch norm
// gradient's fusions, and so does the bias gradient of a convolution a batch norm reads; a
// ReLU after a residual add keeps its own pass (ResNet-50's loop_select_fusion kernels).
func TestXLAGradientsAsKerasTraces(t *testing.T) {
	const batch = 8
	o := PlanOptions{Batch: batch, XLA: true, JAX: true, Optimizer: "momentum"}
	eff := opBytes(t, "efficientnetb0", o)
	// block1a works on 112x112x32 activations; its squeeze-excite scale is 1x1x32.
	act := float64(batch * 112 * 112 * 32 * 4)
	for _, name := range []string{"block1a_se_expand/sigmoid/grad", "block1a_se_expand/BiasAdd/grad"} {
		if got, ok := eff[name]; !ok || got > act/100 {
			t.Errorf("%s bytes = %.0f (found %v), want at most %.0f (channel vectors, not the %.0f-byte activation)", name, got, ok, act/100, act)
		}
	}
	if got := eff["block1a_se_excite/Multiply/grad"]; got < 2*act {
		t.Errorf("block1a_se_excite/Multiply/grad bytes = %.0f, want at least %.0f (dy and the activation read)", got, 2*act)
	}
	for _, name := range []string{"stem_activation/swish/grad", "block1a_activation/swish/grad", "block2a_expand_activation/swish/grad"} {
		if got, ok := eff[name]; !ok || got != 0 {
			t.Errorf("%s bytes = %.0f (found %v), want 0: it runs inside the batch norm gradient", name, got, ok)
		}
	}
	r50 := opBytes(t, "resnet50", o)
	if got := r50["conv2_block1_1_relu/relu/grad"]; got != 0 {
		t.Errorf("conv2_block1_1_relu/relu/grad bytes = %.0f, want 0", got)
	}
	// A convolution's bias gradient reduces the dy the batch norm gradient writes, inside its
	// fusion: it writes the 64 or 256 float32 bias gradients only.
	if got := r50["conv2_block1_1_conv/BiasAdd/grad"]; got != 4*64 {
		t.Errorf("conv2_block1_1_conv/BiasAdd/grad bytes = %.0f, want %d (the bias gradient written)", got, 4*64)
	}
	if got := r50["conv2_block1_out/relu/grad"]; got == 0 {
		t.Errorf("conv2_block1_out/relu/grad bytes = 0, want its own pass (after the residual add)")
	}
	// TF's XLA keeps its priced passes (the DLE tables' calibration).
	tf := opBytes(t, "resnet50", PlanOptions{Batch: batch, XLA: true, Optimizer: "momentum"})
	if got := tf["conv2_block1_1_relu/relu/grad"]; got == 0 {
		t.Errorf("TF XLA conv2_block1_1_relu/relu/grad bytes = 0, want its pass")
	}
}
