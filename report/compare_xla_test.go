package report

import (
	"math"
	"testing"

	"github.com/gpusim/gpusim/train"
)

// A comparison of XLA runs shows the compiles and the whole run's throughput, which the median
// step hides; runs without XLA keep their metrics as before.
func TestFromResultXLACompiles(t *testing.T) {
	metric := func(r Run, key string) (float64, bool) {
		for _, m := range r.Metrics {
			if m.Key == key {
				return m.Value, true
			}
		}
		return 0, false
	}
	tests := []struct {
		name         string
		res          train.Result
		compiles     float64
		runTput      float64
		wantXLARows  bool
		wantMedianTp float64
	}{
		{"no xla", train.Result{StepTimes: []float64{0.1, 0.1}, GlobalBatch: 64, StepTime: 0.1, Throughput: 640, Elapsed: 0.2}, 0, 0, false, 640},
		{"8 compiles", train.Result{StepTimes: make([]float64, 100), GlobalBatch: 64, StepTime: 0.01873, Throughput: 3417, Elapsed: 71.1, XLACompiles: 8}, 8, 6400 / 71.1, true, 3417},
	}
	for _, tt := range tests {
		r := fromResult(tt.name, nil, &tt.res, nil)
		if got, _ := metric(r, MetricThroughput); got != tt.wantMedianTp {
			t.Errorf("%s: throughput %v, want %v", tt.name, got, tt.wantMedianTp)
		}
		c, ok := metric(r, "xla_compiles")
		w, ok2 := metric(r, "run_throughput")
		if ok != tt.wantXLARows || ok2 != tt.wantXLARows {
			t.Errorf("%s: xla rows present %v/%v, want %v", tt.name, ok, ok2, tt.wantXLARows)
		}
		if c != tt.compiles || math.Abs(w-tt.runTput) > 1e-9*tt.runTput {
			t.Errorf("%s: xla_compiles %v, run_throughput %v, want %v and %v", tt.name, c, w, tt.compiles, tt.runTput)
		}
	}
}
