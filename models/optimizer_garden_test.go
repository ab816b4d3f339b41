package models

import (
	"math"
	"strings"
	"testing"
)

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

// TestResourceVariablesAssignWithoutCopy: TF1's reference variables make bert-adamw's three
// assigns copy the new values into the variables (Assign into an initialized buffer: 24 of its
// 168 bytes per element and 3 of its 19 kernels); with resource variables
// (tf.enable_resource_variables(), PlanOptions.ResourceVariables) AssignVariableOp adopts the
// new value's buffer, with or without XLA, and the rest of the update is unchanged: still TF
// ops outside the XLA clusters, with its early tensors.
func TestResourceVariablesAssignWithoutCopy(t *testing.T) {
	m, err := Get("bert-base:seq=128")
	if err != nil {
		t.Fatal(err)
	}
	update := func(xla, resource bool) (b float64, kernels int, outside bool, early int) {
		p, err := m.Plan(PlanOptions{Batch: 8, Optimizer: "bert-adamw", XLA: xla, ResourceVariables: resource})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range p.Ops {
			if op.Phase == Optimizer && op.Kind == KindOptimizer {
				b += op.Bytes
				kernels += op.Kernels
				outside = outside || op.OutsideXLA
			}
		}
		for _, tn := range p.Tensors {
			if strings.Contains(tn.Name, "/bert-adamw/early") {
				early++
			}
		}
		return b, kernels, outside, early
	}
	for _, xla := range []bool{false, true} {
		ref, refK, _, refEarly := update(xla, false)
		res, resK, resOut, resEarly := update(xla, true)
		if r := res / ref; math.Abs(r-144.0/168) > 0.001 {
			t.Errorf("xla %v: resource variables move %.3g bytes, reference variables %.3g: ratio %.4f, want 144/168", xla, res, ref, r)
		}
		if refK*16 != resK*19 {
			t.Errorf("xla %v: kernels %d with reference variables, %d with resource variables: want 19:16", xla, refK, resK)
		}
		if xla && !resOut {
			t.Errorf("xla: the update with resource variables left the TF ops (OutsideXLA false)")
		}
		if refEarly == 0 || resEarly != refEarly {
			t.Errorf("xla %v: early tensors %d with reference variables, %d with resource variables: want the same, some", xla, refEarly, resEarly)
		}
	}
	lamb, _ := LookupOptimizer("bert-lamb")
	if r := lamb.WithResourceVariables(); r.BytesPerElement != 168 || r.Kernels != 21 {
		t.Errorf("bert-lamb with resource variables: %g bytes, %d kernels; want 168, 21", r.BytesPerElement, r.Kernels)
	}
	adam, _ := LookupOptimizer("adam")
	if r := adam.WithResourceVariables(); r.BytesPerElement != adam.BytesPerElement || r.Kernels != adam.Kernels {
		t.Errorf("adam (a fused resource op) changed with resource variables")
	}
}
