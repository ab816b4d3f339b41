package train

import (
	"math"
	"testing"
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
