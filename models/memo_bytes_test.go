package models

import (
	"runtime"
	"testing"
)

// The caches' byte budgets mean what they say only if approxBytes is near what a model and its
// plan really hold: build fresh ResNet-50 variants and plans (kept alive), measure the heap they
// add, and compare with the estimates.
func TestApproxBytesNearTheHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 12 models")
	}
	var keep []any
	var est int64
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 12 {
		o := ModelOptions{ImageSize: 96 + 8*i}
		g, err := zoo["resnet50"].build("resnet50", o)
		if err != nil {
			t.Fatal(err)
		}
		m, err := g.finish()
		if err != nil {
			t.Fatal(err)
		}
		m.plans = nil // not the shared store: what this test holds is all there is
		p, err := m.Plan(PlanOptions{Batch: 32})
		if err != nil {
			t.Fatal(err)
		}
		keep = append(keep, m, p)
		est += m.approxBytes() + p.ApproxBytes()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(keep)
	ratio := float64(est) / float64(heap)
	t.Logf("12 ResNet-50 variants and plans: estimated %.1f MiB, heap %.1f MiB (%.2fx)", float64(est)/(1<<20), float64(heap)/(1<<20), ratio)
	if ratio < 0.5 || ratio > 2 {
		t.Errorf("approxBytes = %.2fx the heap the models and plans hold, want within 0.5x-2x", ratio)
	}
}
