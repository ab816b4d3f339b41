package train

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/internal/testcsv"
)

// convKernelTime reads the summed convolution kernel time (cudnn_convolution plus
// convolution_backward, seconds per step) of one H200 config from a kernels.csv.
func convKernelTime(t *testing.T, path, model, prec string, batch int) float64 {
	return kernelTime(t, path, model, prec, batch, "aten::cudnn_convolution", "aten::convolution_backward")
}

// kernelTime sums the device time of the named aten ops of one H200 config (seconds per step).
func kernelTime(t *testing.T, path, model, prec string, batch int, ops ...string) float64 {
	t.Helper()
	_, recs := testcsv.Read(t, path)
	var us float64
	for _, r := range recs {
		if r[0] == model && r[1] == prec && r[2] == strconv.Itoa(batch) && slices.Contains(ops, r[3]) {
			v, err := strconv.ParseFloat(r[5], 64)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			us += v
		}
	}
	if us == 0 {
		t.Fatalf("%s: no %v rows for %s %s b%d", path, ops, model, prec, batch)
	}
	return us * 1e-6
}

// convTimes prices the convolutions of one float32 (TF32) training step on the H200 in NCHW
// and in NHWC.
func convTimes(t *testing.T, model string, batch int) (nchw, nhwc float64) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Model, cfg.GPU, cfg.Batch, cfg.TF32 = model, "h200", batch, true
	r, err := newRunner(cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range r.replicas[0].plans[0].Ops {
		w := r.opWork(op)
		if w.Kind != hw.KindConv {
			continue
		}
		w.NHWC = false
		nchw += r.mach.gpu.Time(w)
		w.NHWC = true
		nhwc += r.mach.gpu.Time(w)
	}
	return nchw, nhwc
}

// The NCHW convolutions with TF32 allowed, transposes included where the TF32 kernel is
// kept (hw.Work.NHWC), cost what the H200 measured in its NCHW runs of the same PyTorch
// models (testdata/h200/nchw, convolution kernels forward and backward), and the NHWC step's
// convolutions what the NHWC run measured (testdata/h200).
func TestNCHWTransposesMatchH200(t *testing.T) {
	tests := []struct {
		gpusim, h200 string
		batch        int
	}{
		{"resnet50-v1.5", "resnet50", 256},
		{"resnet50-v1.5", "resnet50", 64},
		{"vgg16", "vgg16", 128},
		{"vgg16", "vgg16", 32},
	}
	for _, tc := range tests {
		measNCHW := convKernelTime(t, "../testdata/h200/nchw/kernels.csv", tc.h200, "tf32", tc.batch)
		measNHWC := convKernelTime(t, "../testdata/h200/kernels.csv", tc.h200, "tf32", tc.batch)
		nchw, nhwc := convTimes(t, tc.gpusim, tc.batch)
		t.Logf("%s b%d: NCHW %.1f ms (measured %.1f), NHWC %.1f ms (measured %.1f), transposes %.1f ms (measured %.1f)",
			tc.gpusim, tc.batch, 1e3*nchw, 1e3*measNCHW, 1e3*nhwc, 1e3*measNHWC, 1e3*(nchw-nhwc), 1e3*(measNCHW-measNHWC))
		// The autotuner keeps a CUDA-core Winograd kernel where it beats the TF32 one with its
		// transposes (hw candidatePaths), as PyTorch's cudnn.benchmark does: what the NCHW
		// run measured is the convolutions' time with the transposes where they were kept.
		if e := nchw/measNCHW - 1; math.Abs(e) > 0.15 {
			t.Errorf("%s b%d: NCHW convolutions %.1f ms, measured %.1f ms (%+.0f%%, want within 15%%)", tc.gpusim, tc.batch, 1e3*nchw, 1e3*measNCHW, 100*e)
		}
		if e := nhwc/measNHWC - 1; math.Abs(e) > 0.20 {
			t.Errorf("%s b%d: NHWC convolutions %.1f ms, measured %.1f ms (%+.0f%%, want within 20%%)", tc.gpusim, tc.batch, 1e3*nhwc, 1e3*measNHWC, 100*e)
		}
	}
}

// XLA lays float32 convolutions out NHWC on Hopper under a current TF or JAX (xlaConvNHWC);
// TF 1.15's XLA and any XLA below Hopper keep them NCHW, and so does TF without XLA unless its
// layout optimizer is off (Config.LayoutOptimizer).
func TestConvLayout(t *testing.T) {
	off := false
	tests := []struct {
		gpu, framework, tf string
		xla, want          bool
		layoutOpt          *bool
	}{
		{"h200", "", "", true, true, nil},
		{"h200", "jax", "", true, true, nil},
		{"h100-80gb", "tensorflow", "2.19", true, true, nil},
		{"h200", "tensorflow", "2.18", true, false, nil},
		{"h200", "tensorflow", "1.15", true, false, nil},
		{"h200", "", "", false, false, nil},
		{"a100-40gb", "", "", true, false, nil},
		{"a100-40gb", "", "1.15", true, false, nil},
		{"a100-40gb", "", "", false, true, &off},
		{"a100-40gb", "", "1.15", true, false, &off},
	}
	for _, tc := range tests {
		cfg := DefaultConfig()
		cfg.Model, cfg.GPU, cfg.Batch, cfg.XLA, cfg.Framework, cfg.TFVersion = "resnet50-v1.5", tc.gpu, 32, tc.xla, tc.framework, tc.tf
		cfg.LayoutOptimizer = tc.layoutOpt
		r, err := newRunner(cfg, true)
		if err != nil {
			t.Fatal(err)
		}
		convs, nhwc := 0, 0
		for _, op := range r.replicas[0].plans[0].Ops {
			if w := r.opWork(op); w.Kind == hw.KindConv {
				convs++
				if w.NHWC {
					nhwc++
				}
			}
		}
		if want := map[bool]int{true: convs, false: 0}[tc.want]; convs == 0 || nhwc != want {
			t.Errorf("%s %s TF %q XLA %v layout optimizer %v: %d of %d convolutions NHWC, want %d", tc.gpu, tc.framework, tc.tf, tc.xla, tc.layoutOpt != nil, nhwc, convs, want)
		}
	}
}

// A strided convolution's FP32 input gradient runs over dy dilated to the input's grid
// (hw's stridedDgradScale): ResNet-50's FP32 convolution backward on the H200 costs what its
// NCHW run measured, and VGG16, without strided convolutions, is unchanged by the rule.
func TestFP32StridedDgradMatchesH200(t *testing.T) {
	for _, tc := range []struct {
		gpusim, h200 string
		batch        int
	}{{"resnet50-v1.5", "resnet50", 64}, {"vgg16", "vgg16", 32}} {
		meas := kernelTime(t, "../testdata/h200/nchw/kernels.csv", tc.h200, "fp32", tc.batch, "aten::convolution_backward")
		cfg := DefaultConfig()
		cfg.Model, cfg.GPU, cfg.Batch, cfg.TF32 = tc.gpusim, "h200", tc.batch, false
		r, err := newRunner(cfg, true)
		if err != nil {
			t.Fatal(err)
		}
		var bwd float64
		for _, op := range r.replicas[0].plans[0].Ops {
			if w := r.opWork(op); w.Kind == hw.KindConv && w.Grad {
				bwd += r.mach.gpu.Time(w)
			}
		}
		e := bwd/meas - 1
		t.Logf("%s b%d FP32: convolution backward %.1f ms, measured %.1f ms (%+.1f%%)", tc.gpusim, tc.batch, 1e3*bwd, 1e3*meas, 100*e)
		if math.Abs(e) > 0.08 {
			t.Errorf("%s b%d FP32 convolution backward %.1f ms, measured %.1f ms (%+.1f%%, want within 8%%)", tc.gpusim, tc.batch, 1e3*bwd, 1e3*meas, 100*e)
		}
	}
}
