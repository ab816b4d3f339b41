package train

import (
	"math"
	"strconv"
	"testing"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/internal/testcsv"
)

// TestFitFromArrays: model.fit on host arrays overlaps the host's batch preparation with the
// GPU's step, so a short GPU step waits for the host (ArraysStepHost plus the batch's bytes
// at ArraysGatherRate) and a long one hides it.
func TestFitFromArrays(t *testing.T) {
	for _, tc := range []struct {
		model, prec string
		batch       int
		hostWins    bool
	}{{"resnet50", "mixed_float16", 128, true}, {"vgg16", "float32", 128, false}} {
		c := DefaultConfig()
		c.GPU, c.Model, c.Precision, c.Batch, c.Steps, c.XLA = "h200", tc.model, tc.prec, tc.batch, 12, true
		dev := mustRun(t, c)
		c.FitFromArrays = true
		host := mustRun(t, c)
		feed := ArraysStepHost + float64(tc.batch)*(224*224*3*4+4)/ArraysGatherRate
		t.Logf("%s b%d: device-fed %.1f ms, host-fed %.1f ms, host feed %.1f ms", tc.prec, tc.batch, 1e3*dev.StepTime, 1e3*host.StepTime, 1e3*feed)
		want := max(dev.StepTime, feed)
		if math.Abs(host.StepTime/want-1) > 0.05 {
			t.Errorf("%s b%d: host-fed step %.1f ms, want max(device %.1f, feed %.1f) within 5%%", tc.prec, tc.batch, 1e3*host.StepTime, 1e3*dev.StepTime, 1e3*feed)
		}
		if (feed > dev.StepTime) != tc.hostWins {
			t.Errorf("%s b%d: feed %.1f ms vs device %.1f ms, want host-bound = %v", tc.prec, tc.batch, 1e3*feed, 1e3*dev.StepTime, tc.hostWins)
		}
	}
}

// TestHostGatherRate: a host-bound Keras 3 fit from numpy arrays moves with the host's gather
// rate (hardware.host.gather_rate), by the batch's bytes over the rate, per step; a GPU-bound
// one does not.
func TestHostGatherRate(t *testing.T) {
	c := DefaultConfig()
	c.GPU, c.Model, c.Precision, c.Batch, c.Steps, c.XLA = "h200", "resnet50", "mixed_float16", 128, 12, true
	c.Framework, c.KerasVersion, c.FitFromArrays = "jax", 3, true
	fast := mustRun(t, c)
	c.HostGatherRate = JAXArraysGatherRate / 2
	slow := mustRun(t, c)
	gather := float64(c.Batch) * (224*224*3*4 + 4) / JAXArraysGatherRate
	if d := slow.StepTime - fast.StepTime; math.Abs(d/gather-1) > 0.05 {
		t.Errorf("half the gather rate adds %.2f ms per step, want one more gather, %.2f ms", 1e3*d, 1e3*gather)
	}
	c.Model, c.Precision = "vgg16", "float32"
	c.HostGatherRate = 0
	gpuBound := mustRun(t, c)
	c.HostGatherRate = JAXArraysGatherRate / 1.2
	if got := mustRun(t, c); got.StepTime != gpuBound.StepTime {
		t.Errorf("vgg16 (GPU-bound): step %.3f ms at a slower host, want %.3f", 1e3*got.StepTime, 1e3*gpuBound.StepTime)
	}
	c.HostGatherRate = -1
	if err := c.Validate(); err == nil {
		t.Error("HostGatherRate -1: Validate() = nil, want an error")
	}
}

// TestKerasJAXScheduleSplit holds the host-fed schedule of arrays.go to the fourth Keras
// recording (testdata/h200/keras/split), where fit's host work was timed per step: given each
// config's own host pieces (the gather it measured, gather_ms, and the rest of a step's host
// work, interval_ms - gather_ms, as hw.GPU.HostDispatchScale on the built-in per-array cost),
// the simulated 4-step epochs reproduce the nine ResNet-50 host-fed steps (wall_ms_5x4 over
// 20). What is left is the GPU step and the schedule itself: the gathers one batch ahead, the
// calls, the epoch's host work overlapping the GPU's drain. 2.3% (max 6.8%) when set; the
// serial epoch end it replaced gave 7.0%, every row high.
func TestKerasJAXScheduleSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("nine ResNet-50 runs")
	}
	col, rows := testcsv.Read(t, "../testdata/h200/keras/split/ksplit.csv")
	var sum float64
	for _, r := range rows {
		f := func(k string) float64 {
			v, err := strconv.ParseFloat(r[col[k]], 64)
			if err != nil {
				t.Fatalf("ksplit.csv %s %s: %v", r[col["config"]], k, err)
			}
			return v
		}
		batch := int(f("batch"))
		c := DefaultConfig()
		c.Model, c.Batch, c.Precision, c.XLA, c.Optimizer = r[col["model"]], batch, r[col["precision"]], true, "momentum"
		c.Framework, c.KerasVersion, c.Steps = "jax", 3, 30
		c.FitFromArrays, c.FitArraysSamples = true, 4*batch
		c.HostGatherRate = float64(batch) * f("sample_bytes") / (f("gather_ms") / 1e3)
		g, err := hw.LookupGPU("h200")
		if err != nil {
			t.Fatal(err)
		}
		g.HostDispatchScale = (f("interval_ms") - f("gather_ms")) / 1e3 / (KerasJAXStepHost + KerasJAXStepPerArray*f("arrays"))
		c.GPUProfile = &g
		res := mustRun(t, c)
		got, want := FitStepTime(c, res), f("wall_ms_5x4")/20/1e3
		e := got/want - 1
		sum += math.Abs(e)
		t.Logf("%s: host-fed %.2f ms, measured %.2f (%+.1f%%)", r[col["config"]], 1e3*got, 1e3*want, 100*e)
		if math.Abs(e) > 0.08 {
			t.Errorf("%s: host-fed step %.2f ms on its own host pieces, measured %.2f: %+.1f%%, want within 8%%", r[col["config"]], 1e3*got, 1e3*want, 100*e)
		}
	}
	if mae := sum / float64(len(rows)); len(rows) != 9 || mae > 0.03 {
		t.Errorf("%d configs, MAE %.1f%%: want 9 within 3%%", len(rows), 100*mae)
	}
}
