package models

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestKeras3Applications imports every keras.applications model (and variants: alpha,
// minimalistic, no top, pooling, a mixed policy) exported by real Keras 3.16 and checks
// Keras's exact parameter counts, trainable and not, and every layer's count and shape.
func TestKeras3Applications(t *testing.T) {
	for _, path := range keras3Exports(t, "apps") {
		name := strings.TrimSuffix(filepath.Base(path), ".json.gz")
		t.Run(name, func(t *testing.T) {
			m := checkKeras3Export(t, path)
			if m == nil {
				return
			}
			p, err := m.Plan(PlanOptions{Batch: 2, Precision: MixedFloat16, XLA: true, JAX: true})
			if err != nil {
				t.Fatalf("%s: plan: %v", name, err)
			}
			checkPlan(t, name, p)
		})
	}
}
