package hw

import (
	"math"
	"testing"
)

// The built-in H200 profile against the H200 measurements (testdata/h200): the stated
// accuracy of docs/speed.md. Step times include the PyTorch harness's host time per op
// (DefaultHarnessHost); kernel time is the profiler's sum of kernel durations.
func TestH200MeasuredAccuracy(t *testing.T) {
	m := h200Data(t)
	g, _ := LookupGPU("h200")
	rep, err := Evaluate(g, m, DefaultHarnessHost())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) < 20 {
		t.Fatalf("only %d measured configs", len(rep.Rows))
	}
	models := map[string]bool{}
	for _, r := range rep.Rows {
		models[r.Model] = true
		t.Logf("%-22s step %7.2f ms pred %7.2f (%+5.1f%%)  kernels %7.2f ms pred %7.2f (%+5.1f%%)", r.Config,
			1e3*r.MeasuredStep, 1e3*r.PredictedStep, 100*(r.PredictedStep/r.MeasuredStep-1),
			1e3*r.MeasuredBusy, 1e3*r.PredictedBusy, 100*(r.PredictedBusy/r.MeasuredBusy-1))
	}
	t.Logf("mean absolute error: step %.1f%%, kernel time %.1f%%, micro-benchmarks %.1f%%", 100*rep.StepMAE, 100*rep.BusyMAE, 100*rep.MicroMAE)
	if len(models) < 5 {
		t.Errorf("measured models = %v, want 5", models)
	}
	if rep.StepMAE > 0.15 {
		t.Errorf("step-time MAE = %.1f%%, want <= 15%%", 100*rep.StepMAE)
	}
	if rep.BusyMAE > 0.15 {
		t.Errorf("kernel-time MAE = %.1f%%, want <= 15%%", 100*rep.BusyMAE)
	}
	if rep.MicroMAE > 0.40 {
		t.Errorf("micro-benchmark MAE = %.1f%%, want <= 40%%", 100*rep.MicroMAE)
	}
}

// DefaultEfficiency is what Fit finds on testdata/h200 (re-run the fit to change either).
func TestFitReproducesDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("fit takes seconds")
	}
	g, _ := LookupGPU("h200")
	rep, err := Fit(g, h200Data(t))
	if err != nil {
		t.Fatal(err)
	}
	d := DefaultEfficiency()
	pairs := []struct {
		name      string
		got, want float64
	}{{"FP32", rep.Efficiency.FP32, d.FP32}, {"TF32", rep.Efficiency.TF32, d.TF32}, {"Half", rep.Efficiency.Half, d.Half},
		{"ConvFP32", rep.Efficiency.ConvFP32, d.ConvFP32}, {"ConvTF32", rep.Efficiency.ConvTF32, d.ConvTF32},
		{"ConvHalf", rep.Efficiency.ConvHalf, d.ConvHalf}, {"Memory", rep.Efficiency.Memory, d.Memory}}
	for _, p := range pairs {
		if math.Abs(p.got/p.want-1) > 0.02 {
			t.Errorf("fitted %s = %.4f, DefaultEfficiency has %.4f", p.name, p.got, p.want)
		}
	}
}
