package validate

import (
	"context"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/train"
)

// fakeRun predicts a throughput of 100 samples/s per GPU for float32, 300 for half precision,
// times 1.2 with XLA: rows and ratios with known answers.
func fakeRun(_ context.Context, c train.Config) (*train.Result, error) {
	t := 100.0 * float64(c.GPUCount)
	if c.Precision != "float32" {
		t *= 3
	}
	if c.XLA {
		t *= 1.2
	}
	return &train.Result{Throughput: t, StepTime: float64(c.Batch) / t, GlobalBatch: c.Batch}, nil
}

func parse(t *testing.T, name, csv string) []Measurement {
	t.Helper()
	ms, err := ParseSet(name, strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestScoreGroupsAndRatios(t *testing.T) {
	ms := parse(t, "fleet.csv", `provenance,label,metric,value,model,hardware.gpu,batch,precision,xla,optimizer
readme@1,tf32,throughput,100,resnet50-v1.5,a100-40gb,256,float32,false,momentum
readme@1,tf32,throughput,100,resnet50-v1.5,a100-40gb,256,float32,true,momentum
readme@1,amp_fp16,throughput,400,resnet50-v1.5,a100-40gb,256,mixed_float16,true,momentum
readme@1,fp32,throughput,150,resnet50-v1.5,v100-16gb,256,float32,true,momentum
`)
	// predicted 100 (+0%), 120 (+20%), 360 (-10%), 120 (-20%)
	v, err := Score(context.Background(), ms, Options{Run: fakeRun, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		by, key   string
		mae, bias float64
	}{
		{"all", "", 0.125, -0.025},
		{"gpu", "a100-40gb", 0.1, 0.1 / 3},
		{"xla", "on", 0.5 / 3, -0.1 / 3},
		{"precision", "tf32", 0.1, 0.1},
	} {
		g, ok := v.Group("fleet 1-GPU", tc.by, tc.key)
		if !ok || !near(g.MAE, tc.mae) || !near(g.Bias, tc.bias) {
			t.Errorf("Group(%s=%s) = %+v (found %v), want MAE %.4f bias %.4f", tc.by, tc.key, g, ok, tc.mae, tc.bias)
		}
	}
	got := map[string]Ratio{}
	for _, r := range v.Ratios {
		got[r.Kind] = r
	}
	if len(v.Ratios) != 2 {
		t.Errorf("ratios = %+v, want xla on/off and amp/tf32 on a100-40gb only", v.Ratios)
	}
	// XLA on/off: measured 100/100, predicted 1.2: +20%. AMP/TF32 (XLA on): 4 measured, 3 predicted.
	if r := got["xla on/off"]; !near(r.Measured, 1) || !near(r.Predicted, 1.2) {
		t.Errorf("xla on/off = %+v, want measured 1, predicted 1.2", r)
	}
	if r := got["amp/tf32"]; !near(r.Measured, 4) || !near(r.Predicted, 3) || !near(r.Err, -0.25) {
		t.Errorf("amp/tf32 = %+v, want measured 4, predicted 3", r)
	}
	// Leave-one-GPU-out: the held-out MAE is the plain prediction's.
	found := false
	for _, h := range v.HoldOuts {
		if h.By == "gpu" && h.Held == "v100-16gb" {
			found = true
			if !near(h.HeldMAE, 0.2) || h.N != 1 || h.Train != 3 {
				t.Errorf("hold-out v100-16gb = %+v, want held MAE 0.2 over 1 row, 3 training rows", h)
			}
		}
	}
	if !found {
		t.Errorf("no v100-16gb fold in %+v", v.HoldOuts)
	}
	if g, ok := v.Group("fleet 1-GPU", "leave-one-gpu-out", "mean of folds"); !ok || g.N != 2 || !near(g.MAE, (0.1+0.2)/2) {
		t.Errorf("leave-one-gpu-out = %+v (found %v), want the mean of 10%% and 20%% over 2 folds", g, ok)
	}
	if len(v.Notes) == 0 || !strings.Contains(v.Notes[0], "no cost-model constant is fitted") {
		t.Errorf("notes = %q, want the hold-out note", v.Notes)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestMetrics: each metric reads the simulated run as the figure was taken: a step time and
// a time to train are slower when larger (a ratio's speedup inverts them), a run mean spreads
// the simulated XLA compile over the run's steps.
func TestMetrics(t *testing.T) {
	ms := parse(t, "m.csv", `metric,value,run_steps,model,batch,xla
throughput,500,,resnet50,64,true
step_time,0.1,,resnet50,64,true
run_mean,500,1000,resnet50,64,true
time_to_train,330,1000,resnet50,64,true
`)
	run := func(_ context.Context, c train.Config) (*train.Result, error) {
		return &train.Result{GlobalBatch: c.Batch, StepTime: 0.3, Throughput: float64(c.Batch) / 0.3, XLACompileTime: 12}, nil
	}
	v, err := Score(context.Background(), ms, Options{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	steady := 64 / 0.3
	for i, want := range []float64{steady, 0.3, steady * 300 / 312, 312} {
		if got := v.Rows[i].Predicted; !near(got, want) {
			t.Errorf("row %d (%s): predicted %.6g, want %.6g", i, v.Rows[i].Metric, got, want)
		}
	}
}

// TestModelGroup: a row's model group drops only the impl option, so the Model Garden's BERT
// rows count with keras_hub's in the per-model figures and leave-one-model-out.
func TestModelGroup(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"resnet50-v1.5", "resnet50-v1.5"},
		{"bert-large:seq=384", "bert-large:seq=384"},
		{"bert-large:seq=384,impl=model-garden", "bert-large:seq=384"},
		{"bert-large:impl=model-garden,seq=128,head=mlm", "bert-large:seq=128,head=mlm"},
		{"bert-large:impl=model-garden", "bert-large"},
	} {
		if got := modelGroup(c.spec); got != c.want {
			t.Errorf("modelGroup(%q) = %q, want %q", c.spec, got, c.want)
		}
	}
}
