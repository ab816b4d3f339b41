package models

import (
	"sync"
	"testing"
)

// TestGetBuildsOnce checks that every caller gets one shared model and one shared plan per
// options, also when they ask at the same time (run with -race), and that equivalent
// options ("" and "float32", "" and "sgd", an alias) share the entry.
func TestGetBuildsOnce(t *testing.T) {
	const n = 8
	models := make([]*Model, n)
	plans := make([]*Plan, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := Get("mobilenetv2")
			if err != nil {
				t.Error(err)
				return
			}
			p, err := m.Plan(PlanOptions{Batch: 16, Precision: MixedFloat16, Optimizer: "adam"})
			if err != nil {
				t.Error(err)
				return
			}
			models[i], plans[i] = m, p
		}()
	}
	wg.Wait()
	for i := 1; i < n; i++ {
		if models[i] != models[0] || plans[i] != plans[0] {
			t.Fatalf("caller %d got model %p plan %p, want the shared %p %p", i, models[i], plans[i], models[0], plans[0])
		}
	}
	m, _ := Get("MobileNetV2")
	if m != models[0] {
		t.Errorf("Get(MobileNetV2) = %p, want the shared model %p", m, models[0])
	}
	a, err := m.Plan(PlanOptions{Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Plan(PlanOptions{Batch: 4, Precision: PrecisionFloat32, Optimizer: "sgd"})
	if a != b {
		t.Errorf("Plan with defaults left out = %p, with them spelled out = %p: want one shared plan", a, b)
	}
	if a.Options.Optimizer != "sgd" || a.Options.Precision != PrecisionFloat32 {
		t.Errorf("plan options = %+v, want the defaults filled in", a.Options)
	}
	c, _ := m.Plan(PlanOptions{Batch: 5})
	if c == a {
		t.Error("plans of batch 4 and 5 are one object")
	}
	r1, _ := Get("resnet50:image=160")
	r2, _ := Get("resnet50")
	if r1 == r2 {
		t.Error("resnet50 at image 160 and 224 are one object")
	}
}

func TestKnown(t *testing.T) {
	for _, tc := range []struct {
		spec string
		ok   bool
	}{
		{"resnet50", true}, {"BERT_base:seq=512", true}, {"resnet5", false}, {"resnet50:depth=3", false}, {"mlp:hidden=0", false},
	} {
		err := Known(tc.spec)
		if (err == nil) != tc.ok {
			t.Errorf("Known(%q) = %v, want ok %v", tc.spec, err, tc.ok)
		}
		if _, gerr := Get(tc.spec); (gerr == nil) != tc.ok {
			t.Errorf("Get(%q) = %v but Known says ok %v", tc.spec, gerr, tc.ok)
		}
	}
}
