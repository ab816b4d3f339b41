package models_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/gpusim/gpusim/internal/testcsv"
	"github.com/gpusim/gpusim/models"
)

// h200Activation reads testdata/h200/steps.csv (repository root) and returns the measured
// activation memory per sample of each (model, prec): the slope of (peak - base) allocated
// bytes between the two measured batch sizes, which cancels fixed costs (cuDNN workspace,
// allocator rounding). See testdata/h200/README.md for how peak and base were taken.
func h200Activation(t *testing.T) map[[2]string]float64 {
	t.Helper()
	col, recs := testcsv.Read(t, "../testdata/h200/steps.csv")
	type pt struct{ batch, act float64 }
	pts := map[[2]string][]pt{}
	for _, r := range recs {
		num := func(k string) float64 {
			v, err := strconv.ParseFloat(r[col[k]], 64)
			if err != nil {
				t.Fatalf("steps.csv %s: %v", k, err)
			}
			return v
		}
		k := [2]string{r[col["model"]], r[col["prec"]]}
		pts[k] = append(pts[k], pt{num("batch"), num("peak_bytes") - num("base_bytes")})
	}
	out := map[[2]string]float64{}
	for k, p := range pts {
		if len(p) >= 2 {
			out[k] = (p[len(p)-1].act - p[0].act) / (p[len(p)-1].batch - p[0].batch)
		}
	}
	return out
}

// ActivationBytesPerSample (float32) against PyTorch's measured activation memory per sample
// on the H200 with TF32 (float32 storage). The two frameworks keep slightly different tensors
// for backward (PyTorch's in-place ReLU keeps one tensor where Keras keeps two; BatchNorm
// saves differ), so the tolerance is 25% per model; the mean absolute error is logged.
func TestActivationBytesMatchH200(t *testing.T) {
	meas := h200Activation(t)
	tests := []struct{ name, measured string }{
		{"resnet50", "resnet50"},
		{"vgg16", "vgg16"},
		{"mobilenetv2", "mobilenetv2"},
		{"bert-base:seq=128,head=mlm", "bert-base"}, // BertForMaskedLM, sequence 128
		{"gpt2:seq=1024", "gpt2"},                   // GPT2LMHeadModel, sequence 1024
	}
	var mae float64
	for _, tc := range tests {
		m, err := models.Get(tc.name)
		if err != nil {
			t.Fatalf("Get(%q): %v", tc.name, err)
		}
		want := meas[[2]string{tc.measured, "tf32"}]
		if want <= 0 {
			t.Fatalf("no measurement for %s", tc.measured)
		}
		got := m.ActivationBytesPerSample
		e := got/want - 1
		mae += math.Abs(e)
		t.Logf("%-28s model %8.2f MiB/sample, measured %8.2f (%+.1f%%)", tc.name, got/(1<<20), want/(1<<20), 100*e)
		if math.Abs(e) > 0.25 {
			t.Errorf("%s ActivationBytesPerSample = %.1f MiB, measured %.1f MiB: off by %+.0f%%, want within 25%%",
				tc.name, got/(1<<20), want/(1<<20), 100*e)
		}
	}
	t.Logf("mean absolute error %.1f%%", 100*mae/float64(len(tests)))
}
