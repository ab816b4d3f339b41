package train

import "testing"

// cuDNN's first-run profiling of VGG16's 224x224x64 3x3 convolutions asks for the explicit
// GEMM's column matrix (batch x 224 x 224 x 576 floats, 7.4 GB at batch 64): the first step
// peaks GiBs above the steady steps on an FP32 CNN without XLA.
func TestAutotuneFirstStepPeakAboveSteady(t *testing.T) {
	res := mustRun(t, cfgWith(func(c *Config) { c.Model, c.Batch, c.Steps = "vgg16", 32, 3 }))
	d := res.Devices[0]
	if res.AutotunedConvs == 0 {
		t.Fatal("no convolution was autotuned")
	}
	if d.FirstStepPeakBytes < d.SteadyPeakBytes+1<<30 {
		t.Errorf("first-step peak %d, steady %d: want the autotune scratch to add over 1 GiB", d.FirstStepPeakBytes, d.SteadyPeakBytes)
	}
	if d.PeakBytesInUse != max(d.FirstStepPeakBytes, d.SteadyPeakBytes) {
		t.Errorf("peak_bytes_in_use %d is not the worse of first %d and steady %d", d.PeakBytesInUse, d.FirstStepPeakBytes, d.SteadyPeakBytes)
	}
	xla := mustRun(t, cfgWith(func(c *Config) { c.Model, c.Batch, c.Steps, c.XLA = "vgg16", 32, 3, true }))
	if xla.AutotunedConvs != 0 {
		t.Errorf("XLA run autotuned %d convolutions through TF's kernels", xla.AutotunedConvs)
	}
}

// Under a limit that holds the steady step but not the largest candidate's scratch, the
// candidates that do not fit are skipped (TF marks them failed) and the run goes on.
func TestAutotuneScratchThatDoesNotFitDegrades(t *testing.T) {
	free := mustRun(t, cfgWith(func(c *Config) { c.Model, c.Batch, c.Steps = "vgg16", 32, 3 }))
	steady := free.Devices[0].SteadyPeakBytes
	limit := (steady + 512<<20) >> 20 // MiB: room for the steady step, not for the column matrix
	res := mustRun(t, cfgWith(func(c *Config) { c.Model, c.Batch, c.Steps, c.Memory.LimitMiB = "vgg16", 32, 3, limit }))
	if res.OOM != nil {
		t.Fatalf("limit %d MiB: %v, want the autotuner to skip what does not fit", limit, res.OOM.Message)
	}
	if res.AutotuneSkips == 0 {
		t.Errorf("limit %d MiB: no candidate skipped", limit)
	}
	d := res.Devices[0]
	if d.FirstStepPeakBytes > limit<<20 || d.FirstStepPeakBytes >= free.Devices[0].FirstStepPeakBytes {
		t.Errorf("first-step peak %d under a %d MiB limit (unlimited %d): want it bounded by what fits", d.FirstStepPeakBytes, limit, free.Devices[0].FirstStepPeakBytes)
	}
	if d.SteadyPeakBytes != steady {
		t.Errorf("steady peak %d, want %d as without the limit", d.SteadyPeakBytes, steady)
	}
}
