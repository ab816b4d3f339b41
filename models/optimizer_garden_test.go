package models

import "testing"

// TestModelGardenAdamW: the TF2 BERT scripts' AdamWeightDecay moves Adam's bytes plus the
// global-norm clip and the weight decay (48 bytes per element against fused Adam's 28) inside
// XLA, far under the TF1 reference code's op-by-op update (bert-adamw, 168 bytes).
func TestModelGardenAdamW(t *testing.T) {
	m, err := Get("bert-base:seq=128")
	if err != nil {
		t.Fatal(err)
	}
	bytes := func(opt string) (b float64, outside bool) {
		p, err := m.Plan(PlanOptions{Batch: 8, Optimizer: opt, XLA: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range p.Ops {
			if op.Phase == Optimizer {
				b += op.Bytes
				outside = outside || op.OutsideXLA
			}
		}
		return b, outside
	}
	adam, _ := bytes("adam")
	garden, out := bytes("model-garden-adamw")
	ref, _ := bytes("bert-adamw")
	if r := garden / adam; r < 48.0/28*0.99 || r > 48.0/28*1.01 {
		t.Errorf("model-garden-adamw update moves %.3g bytes, adam %.3g: ratio %.3f, want 48/28", garden, adam, r)
	}
	if out {
		t.Errorf("model-garden-adamw runs outside XLA; its resource-variable update compiles")
	}
	if garden >= ref {
		t.Errorf("model-garden-adamw %.3g bytes, bert-adamw %.3g: want fewer", garden, ref)
	}
}
