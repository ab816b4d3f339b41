package models

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestCatalogJSONKeys(t *testing.T) {
	infos, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != len(Names()) {
		t.Fatalf("Catalog has %d entries, want %d", len(infos), len(Names()))
	}
	b, err := json.Marshal(infos[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"name"`, `"params"`, `"trainable_params"`, `"flops_per_sample"`, `"activation_bytes_per_sample"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("Info JSON %s lacks key %s", b, k)
		}
	}
	for _, in := range infos {
		if in.Params <= 0 || in.FLOPsPerSample <= 0 || in.ActivationBytesPerSample <= 0 {
			t.Errorf("%s: %+v has a non-positive figure", in.Name, in)
		}
	}
}

func TestGetOptions(t *testing.T) {
	tests := []struct {
		spec    string
		inShape []int
		params  int64
	}{
		{"resnet50:image=160", []int{160, 160, 3}, 25_636_712},
		{"resnet50:classes=10", []int{224, 224, 3}, 25_636_712 - 2049*1000 + 2049*10},
		{"bert-base:seq=512", []int{512}, 109_483_778},
		{"GPT2:seq=256", []int{256}, 124_439_808},
		{"mlp:hidden=1024x1024", []int{28, 28, 1}, 784*1024 + 1024 + 1024*1024 + 1024 + 1024*10 + 10},
		{"vit-b16:image=384", []int{384, 384, 3}, 86_567_656 + (577-197)*768},
	}
	for _, tt := range tests {
		m, err := Get(tt.spec)
		if err != nil {
			t.Errorf("Get(%q): %v", tt.spec, err)
			continue
		}
		if !slices.Equal(m.InputShapes[0], tt.inShape) || m.Params != tt.params {
			t.Errorf("Get(%q) input %v params %d, want %v %d", tt.spec, m.InputShapes[0], m.Params, tt.inShape, tt.params)
		}
	}
	for _, bad := range []string{"resnet51", "resnet50:image=0", "bert-base:seq=1024", "bert-base:head=x", "resnet50:colour=1", "resnet50:image"} {
		if _, err := Get(bad); err == nil {
			t.Errorf("Get(%q) = nil error, want one", bad)
		}
	}
	// Sequence length scales transformer FLOPs: the linear layers linearly, attention
	// quadratically.
	a, _ := Get("bert-base:seq=128")
	b, _ := Get("bert-base:seq=256")
	if r := b.FLOPsPerSample / a.FLOPsPerSample; r < 2.0 || r > 2.2 {
		t.Errorf("bert-base FLOPs seq 256 / seq 128 = %.3f, want 2.0..2.2", r)
	}
}
