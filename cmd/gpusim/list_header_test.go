package main

import (
	"strings"
	"testing"
)

// The model table's columns say what the figures are: FLOPs of one forward pass and the float32
// activations kept for backward, not training FLOPs or total memory.
func TestListModelsHeaderNamesWhatItCounts(t *testing.T) {
	out, errs, code := runCLI(t, "list", "models")
	if code != 0 {
		t.Fatalf("list models: exit %d: %s", code, errs)
	}
	header, _, _ := strings.Cut(out, "\n")
	for _, want := range []string{"FORWARD FLOP/SAMPLE", "ACTIVATIONS KEPT/SAMPLE (FP32)"} {
		if !strings.Contains(header, want) {
			t.Errorf("list models header %q lacks %q", header, want)
		}
	}
}
