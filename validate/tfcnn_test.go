package validate

import (
	"context"
	"testing"

	"github.com/gpusim/gpusim/train"
)

// The tf_cnn_benchmarks set (tools/tfcnn/select.py) runs each log row as its scenario: the box
// the log folder names, the synthetic batch on the GPU, one process over several GPUs, TF 2
// XLA rows as auto-clustering; every row builds (ReadSet checks it).
func TestTFCNNSet(t *testing.T) {
	ms, err := ReadSet("../testdata/tfcnn/tfcnn.csv")
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]int{}
	for _, m := range ms {
		c := m.Config
		hosts[c.Host]++
		if !c.InputOnDevice || (m.GPUs() > 1) != (c.Strategy == "mirrored") || m.Source != "tfcnn" {
			t.Errorf("%s: on device %v, strategy %q, source %q", m.Ref, c.InputOnDevice, c.Strategy, m.Source)
		}
		if c.XLA && c.TFVersion != "1.15" && c.Env["TF_XLA_FLAGS"] != "--tf_xla_auto_jit=1" {
			t.Errorf("%s: TF %s XLA without auto-clustering", m.Ref, c.TFVersion)
		}
	}
	for _, h := range []string{"xeon-gold-6230-8x", "xeon-gold-6230-8x-nvlink", "threadripper-3970x-3x", "epyc-7662-8x"} {
		if hosts[h] == 0 {
			t.Errorf("no row on %s", h)
		}
	}
}

// Scaling pairs an n-GPU row with the 1-GPU row of its version, model, precision, XLA and
// batch per GPU; the architecture folds run over every set file's 1-GPU rows.
func TestScalingAndArchitectureFolds(t *testing.T) {
	head := "provenance,metric,value,model,hardware.gpu,hardware.count,batch,strategy.name\n"
	ms := parse(t, "a.csv", head+"box,throughput,100,vgg16,rtx3090,1,32,\nbox,throughput,200,vgg16,rtx3090,4,128,mirrored\n")
	ms = append(ms, parse(t, "b.csv", head+"t,throughput,100,vgg16,v100-16gb,1,32,\n")...)
	fake := func(_ context.Context, c train.Config) (*train.Result, error) {
		return &train.Result{Throughput: 100 * float64(max(c.GPUCount, 1))}, nil
	}
	v, err := Score(context.Background(), ms, Options{Run: fake, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	var scaling *Ratio
	for i, r := range v.Ratios {
		if r.Kind == "scaling" {
			scaling = &v.Ratios[i]
		}
	}
	// Measured 200/(4 x 100) = 0.5; the fake run scales perfectly.
	if scaling == nil || !near(scaling.Measured, 0.5) || !near(scaling.Predicted, 1) || scaling.Set != "a multi-GPU" {
		t.Errorf("scaling ratio %+v, want measured 0.5, predicted 1 in a multi-GPU", scaling)
	}
	archs := map[string]bool{}
	for _, h := range v.HoldOuts {
		if h.By == "architecture" {
			archs[h.Held] = true
		}
	}
	if !archs["ga10x"] || !archs["volta"] {
		t.Errorf("architecture folds %v, want ga10x and volta", archs)
	}
}
