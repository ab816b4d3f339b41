package validate

import (
	"context"
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/gpusim/gpusim/train"
)

// The tf_cnn_benchmarks set (tools/tfcnn/select.py) runs each log row as its scenario: the box
// the log folder names, the synthetic batch on the GPU, one process over several GPUs with
// launch threads per GPU (benchmark_cnn.py's default --gpu_thread_mode=gpu_private) and one
// all-reduce per gradient (--all_reduce_spec=nccl), TF 2 XLA rows as auto-clustering; every
// row builds (ReadSet checks it).
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
		// What tf_cnn_benchmarks ran: its own launch threads per GPU, and with
		// all_reduce_spec=nccl one NCCL all-reduce per gradient, no packs.
		if c.Env["TF_GPU_THREAD_MODE"] != "gpu_private" || (m.GPUs() > 1 && c.NumPacks != 0) {
			t.Errorf("%s: TF_GPU_THREAD_MODE %q, num_packs %d; want gpu_private and 0", m.Ref, c.Env["TF_GPU_THREAD_MODE"], c.NumPacks)
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

// tfcnnScalingMisses are the (precision, XLA) groups of the tf_cnn_benchmarks set whose
// multi-GPU scaling misses issue 30's 10% today, with why; TestTFCNNScalingTarget logs them
// and fails when any other group misses.
var tfcnnScalingMisses = map[string]string{
	// The 2080 Ti box without XLA loses 60-350 ms per step in fp16 on ResNet-50/152 and
	// InceptionV3, growing with the GPUs, none on VGG16's 32 gradients, the same with and
	// without the NVLink bridges (so not a transport's bandwidth). Run as tf_cnn_benchmarks
	// ran it (launch threads per GPU, one NCCL all-reduce per gradient under the backward
	// pass), gpusim scales those rows almost linearly: about 45% too good.
	"fp16 xla=false": "an unidentified per-step cost of many small ops per tower, not priced",
	// The same box in fp32 without XLA: a flat 13-70 ms per step from 2 GPUs on, again the
	// same with and without NVLink bridges, about 0.13 ms per gradient tensor (ResNet-50's
	// 161: ~22 ms, ResNet-152's: ~60 ms); the per-gradient schedule hides it under the
	// backward pass.
	"fp32 xla=false": "a per-gradient cost the overlapped all-reduces do not show, not priced",
}

// TestTFCNNScalingTarget holds the tf_cnn_benchmarks set's multi-GPU scaling (n-GPU
// throughput over n times the 1-GPU one of the same log folder) to issue 30's target, 10% MAE,
// per precision and XLA setting.
func TestTFCNNScalingTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the set's 439 rows")
	}
	ms, err := ReadSet("../testdata/tfcnn/tfcnn.csv")
	if err != nil {
		t.Fatal(err)
	}
	v, err := Score(context.Background(), ms, Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	sum, n := map[string]float64{}, map[string]int{}
	for _, r := range v.Ratios {
		if r.Kind != "scaling" {
			continue
		}
		row := v.Rows[r.Num]
		k := fmt.Sprintf("%s xla=%v", row.Label, row.Config.XLA)
		sum[k] += math.Abs(r.Err)
		n[k]++
	}
	if len(n) < 4 {
		t.Fatalf("scaling groups %v, want fp16 and fp32 with XLA on and off", n)
	}
	for k, c := range n {
		mae := sum[k] / float64(c)
		why, known := tfcnnScalingMisses[k]
		switch {
		case known:
			t.Logf("%s: scaling MAE %.1f%% over %d rows (known miss: %s)", k, 100*mae, c, why)
		case mae > 0.10:
			t.Errorf("%s: scaling MAE %.1f%% over %d rows, want <= 10%%", k, 100*mae, c)
		}
	}
}

// tfcnnOneGPUMisses are the (model, precision, XLA) groups of the tf_cnn_benchmarks set's
// 1-GPU rows on the RTX 2080 Ti whose throughput misses issue 30's 10% today, with why;
// TestTFCNNOneGPUTarget logs them and fails when any other group misses.
var tfcnnOneGPUMisses = map[string]string{
	// InceptionV3 in fp16 runs 14-28% slower than the step gpusim prices, more without
	// XLA; fp32 and ResNet-50/152 in fp16 are within 10%, so the missing cost is specific
	// to half precision and to InceptionV3's layers (asymmetric 1x7/7x1 and 5x5 filters, the
	// branches' concatenations): not identified in a source yet.
	"inceptionv3 fp16 xla=false": "an unidentified half-precision cost of InceptionV3's layers",
	"inceptionv3 fp16 xla=true":  "an unidentified half-precision cost of InceptionV3's layers",
	// VGG16 in fp16 runs 1.6x faster with XLA than without on the same box, where gpusim
	// prices the two alike: its large 3x3 convolutions are priced too slow under XLA
	// and the step without XLA too fast.
	"vgg16 fp16 xla=false": "TF's step without XLA slower than priced",
	"vgg16 fp16 xla=true":  "large half-precision 3x3 convolutions priced too slow",
	// VGG16 in fp32 without XLA runs about 15% slower than with it, where gpusim prices the
	// two alike.
	"vgg16 fp32 xla=false": "TF's step without XLA slower than priced",
	// ResNet-152 in fp32 under XLA is priced 9-12% too fast in five of the six log folders.
	"resnet152 fp32 xla=true": "priced about 10% too fast",
}

// TestTFCNNOneGPUTarget holds the tf_cnn_benchmarks set's 1-GPU throughput on the RTX 2080 Ti
// to issue 30's target, 10%, per model, precision and XLA setting: the median error of each
// group's six log folders, as the two NVLink trt2 TF 1.15 folders run their fp32 rows up to 25%
// below the other four. The RTX 3090's rows come from two boxes whose fp16
// figures differ by up to 2.5x, so they are judged as a whole by gpusim validate, not here.
func TestTFCNNOneGPUTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the set's 1-GPU rows")
	}
	all, err := ReadSet("../testdata/tfcnn/tfcnn.csv")
	if err != nil {
		t.Fatal(err)
	}
	var ms []Measurement
	for _, m := range all {
		if m.GPUs() == 1 && m.GPU() == "rtx2080ti" {
			ms = append(ms, m)
		}
	}
	v, err := Score(context.Background(), ms, Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string][]float64{}
	for _, row := range v.Rows {
		k := fmt.Sprintf("%s %s xla=%v", row.Model(), row.Label, row.XLA())
		errs[k] = append(errs[k], math.Abs(row.Err))
	}
	if len(errs) != 16 {
		t.Fatalf("1-GPU groups %v, want 4 models x fp16/fp32 x XLA on/off", errs)
	}
	for k, e := range errs {
		sort.Float64s(e)
		med := (e[(len(e)-1)/2] + e[len(e)/2]) / 2
		why, known := tfcnnOneGPUMisses[k]
		switch {
		case known:
			t.Logf("%s: median error %.1f%% over %d rows (known miss: %s)", k, 100*med, len(e), why)
		case med > 0.10:
			t.Errorf("%s: median error %.1f%% over %d rows, want <= 10%%", k, 100*med, len(e))
		}
	}
}
