package models

import (
	"fmt"
	"slices"
	"testing"
)

// TestPlanTensorShapes: every tensor of every zoo model's plan has a shape whose size is its
// bytes (a workspace is 1-D uint8), and the shapes are TF's: batch first for activations and
// their gradients, the variable's shape for weights and weight gradients.
func TestPlanTensorShapes(t *testing.T) {
	for _, name := range Names() {
		m, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, prec := range []Precision{PrecisionFloat32, MixedFloat16} {
			for _, xla := range []bool{false, true} {
				o := PlanOptions{Batch: 3, Precision: prec, XLA: xla, Optimizer: "adam"}
				p, err := m.Plan(o)
				if err != nil {
					t.Fatalf("%s.Plan(%+v): %v", name, o, err)
				}
				for _, x := range p.Tensors {
					size := x.DType.Size()
					if x.Role == Workspace {
						size = 1
					}
					n := int64(1)
					for _, d := range x.Shape {
						if d <= 0 {
							n = -1
							break
						}
						n *= d
					}
					if n*size != x.Bytes { // a scalar variable has shape [] (TF prints shape[])
						t.Errorf("%s %+v: tensor %s (%s, %d B): shape %v does not hold its bytes", name, o, x.Name, x.Role, x.Bytes, x.Shape)
					}
					if (x.Role == Activation || x.Role == Input) && x.Shape[0] != 3 {
						t.Errorf("%s %+v: %s %s shape %v: want the batch (3) first", name, o, x.Role, x.Name, x.Shape)
					}
				}
			}
		}
	}
}

func TestPlanTensorShapesResNet50(t *testing.T) {
	m, err := Get("resnet50")
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Plan(PlanOptions{Batch: 32, Precision: MixedFloat16})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int64{
		"conv1_conv/kernel":                  {7, 7, 3, 64},
		"conv1_conv/kernel/Cast":             {7, 7, 3, 64},
		"conv1_conv/kernel/grad":             {7, 7, 3, 64}, // float16, cast back to float32 below
		"conv1_conv/kernel/grad/Cast":        {7, 7, 3, 64},
		"conv1_conv/Conv":                    {32, 112, 112, 64},
		"conv1_conv/Conv/grad":               {32, 112, 112, 64},
		"conv5_block3_out/relu":              {32, 7, 7, 2048},
		"predictions/kernel":                 {2048, 1000},
		"labels":                             {32},
		"conv2_block1_2_conv/Conv/workspace": nil, // 1-D, its bytes
	}
	seen := map[string]bool{}
	for _, x := range p.Tensors {
		w, ok := want[x.Name]
		if !ok || seen[x.Name] {
			continue
		}
		seen[x.Name] = true
		if w == nil {
			w = []int64{x.Bytes}
		}
		if !slices.Equal(x.Shape, w) {
			t.Errorf("%s: shape %v, want %v", x.Name, x.Shape, w)
		}
	}
	for n := range want {
		if !seen[n] {
			t.Errorf("no tensor %s in the plan (names: %s ...)", n, fmt.Sprint(p.Tensors[len(p.Persistent)].Name))
		}
	}
}
