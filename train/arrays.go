package train

import (
	"github.com/gpusim/gpusim/framework"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/sim"
)

// Keras fit on in-memory arrays (model.fit(x, y) with numpy arrays, System.FitFromArrays):
// every step the array data adapter (keras/src/trainers/data_adapters/array_data_adapter.py)
// gathers the shuffled batch out of the host arrays, a copy of every sample on one host
// thread, and the trainer hands it to the device (jax.device_put; TF: a host-to-device copy).
// The next batch is prepared while the GPU runs the current step (JAX dispatches the step
// asynchronously; TF's fit prefetches one batch), so the host feed and the GPU step overlap
// and the slower of the two sets the pace.
//
// Measured with real Keras 3 on the H200 machine (testdata/h200/keras/steps.csv, host_fed_ms
// of the host-bound ResNet-50 half-precision rows, whose GPU step is far shorter): 30.9, 52.5
// and 80.0-92.1 ms at batch 64, 128 and 256, float32 224x224x3 images of 602 KB: a fixed
// ArraysStepHost plus the batch's bytes at ArraysGatherRate. TF's fit prices its feed with
// these two (TF does not run on the device machine); under Keras 3 on JAX (Config.Framework
// "jax") the feed is priced by its parts, the gather and the train-step call over every state
// array (dispatch.go), which these two lumped together for ResNet-50.
const (
	// ArraysGatherRate is the host's rate for gathering a shuffled batch out of numpy arrays
	// (bytes per second): the slope, 0.32 ms per 602 KB sample.
	ArraysGatherRate = 1.9e9
	// ArraysStepHost is the rest of fit's host time per step on that feed (seconds): the
	// intercept.
	ArraysStepHost = 10e-3
)

// arrayFeed is fit's host feed from in-memory arrays: one batch in preparation ahead of the
// one the step takes. Batch k's preparation costs cost(k) on the host.
//
// With a finite number of samples (Config.FitArraysSamples) the arrays end every
// perEpoch batches and fit starts a new epoch: the epoch's last step must end before the next
// epoch starts (CallbackList.on_epoch_end waits for the batch callbacks' futures, which read
// each step's loss, keras/src/callbacks/callback_list.py), so nothing is prepared across the
// boundary; the new epoch's iterator then prepares its first batch from scratch. Under JAX the
// epoch's host work (epoch) runs before that wait, while the GPU drains the queued steps:
// keras/src/backend/jax/trainer.py, fit, calls jax_state_sync() as soon as the epoch's last
// train-step call returns and callbacks.on_epoch_end, which waits, after it; the next epoch
// starts when both are done.
type arrayFeed struct {
	eng       *sim.Engine
	perEpoch  int      // batches per epoch (0: the arrays never end)
	k         int      // batches asked for so far
	lastReady sim.Time // when the previous batch was ready
	lastTake  sim.Time // when the previous batch was asked for
	// Under TF every batch costs each: the gather plus fit's step host time. Under Keras 3
	// on JAX (jax) gather is one batch's gather, step the per-step host time outside it and
	// epoch the per-epoch host time (dispatch.go).
	each, gather, step, epoch sim.Time
	jax                       bool
}

// cost is the host time of preparing batch k (its place j in its epoch, of perEpoch).
// Under JAX, JAXEpochIterator._one_batch_ahead_iterator (keras/src/backend/jax/trainer.py)
// gathers and puts two batches on the device before it yields the epoch's first, one more
// before each later one, and none before the last (it was gathered ahead); each yield is
// followed by the train-step call.
func (a *arrayFeed) cost(k int) sim.Time {
	if !a.jax {
		return a.each
	}
	if a.perEpoch == 0 {
		return a.gather + a.step
	}
	j := k % a.perEpoch
	var c sim.Time
	switch {
	case j == 0 && a.perEpoch > 1:
		c += 2 * a.gather
	case j < a.perEpoch-1 || a.perEpoch == 1:
		c += a.gather
	}
	return c + a.step
}

// Get runs fn when the next batch is on the GPU. The host starts a batch when the one before
// it is ready and the step before that took its batch (one batch ahead); the first batch of
// an epoch when it is asked for (the step before it has ended) and, under JAX, the epoch's
// host work after the last batch's call is done.
func (a *arrayFeed) Get(fn func()) {
	now := a.eng.Now()
	start := now
	switch {
	case a.k > 0 && (a.perEpoch == 0 || a.k%a.perEpoch != 0):
		start = max(a.lastReady, a.lastTake)
	case a.k > 0 && a.jax:
		start = max(now, a.lastReady+a.epoch)
	}
	ready := max(start+a.cost(a.k), now)
	a.k++
	a.lastReady, a.lastTake = ready, now
	a.eng.At(ready, fn)
}

// newArrayFeed returns the array feed of m for cfg (its global batch per micro-step and
// framework) with arrays state arrays per step: float32 features (numpy's default for
// images and embeddings alike) plus an int32 label per sample, gathered at the host's rate
// (Config.HostGatherRate, else the H200 machine's). Under JAX, hostScale
// (hw.GPU.DispatchScale) multiplies the per-step and per-epoch Python work, not the gather,
// which is numpy copying memory at the host's bandwidth.
func newArrayFeed(e *sim.Engine, m *models.Model, cfg Config, fw framework.Profile, arrays int, hostScale float64) *arrayFeed {
	batch := cfg.Batch / max(cfg.AccumulationSteps, 1)
	var perSample float64
	for _, s := range m.InputShapes {
		n := 1.0
		for _, d := range s {
			n *= float64(d)
		}
		perSample += 4 * n
	}
	perSample += 4
	bytes := float64(batch) * perSample
	tfRate, jaxRate := ArraysGatherRate, JAXArraysGatherRate
	if cfg.HostGatherRate > 0 {
		tfRate, jaxRate = cfg.HostGatherRate, cfg.HostGatherRate
	}
	a := &arrayFeed{eng: e, each: sim.FromSeconds(ArraysStepHost + bytes/tfRate)}
	a.perEpoch = epochBatches(cfg)
	if fw.Framework == framework.JAX {
		a.jax = true
		a.gather = sim.FromSeconds(bytes / jaxRate)
		a.step = sim.FromSeconds(hostScale * (KerasJAXStepHost + KerasJAXStepPerArray*float64(arrays)))
		a.epoch = sim.FromSeconds(hostScale * KerasJAXEpochPerArray * float64(arrays))
	}
	return a
}

// FitStepTime is the step time that a fit over cfg's arrays reports for res: with epoch ends
// (FitArraysSamples) the mean step over the whole epochs after the first (which compiles), as
// Keras's progress bar (time per step over the epoch) and a fit timed by its wall clock over
// its steps give it, since an epoch's first step carries the epoch end before it; otherwise,
// or with fewer than two whole epochs, res.StepTime.
func FitStepTime(cfg Config, res *Result) float64 {
	if !cfg.FitFromArrays || cfg.FitArraysSamples <= 0 || cfg.Batch <= 0 {
		return res.StepTime
	}
	perEpoch := max(epochBatches(cfg)/max(cfg.AccumulationSteps, 1), 1)
	n := (len(res.StepTimes)/perEpoch - 1) * perEpoch
	if n <= 0 {
		return res.StepTime
	}
	var sum float64
	for _, s := range res.StepTimes[perEpoch : perEpoch+n] {
		sum += s
	}
	return sum / float64(n)
}

// epochBatches is how many micro-batches one pass over fit's arrays makes (the last one
// partial), 0 when the arrays never end (FitArraysSamples unset).
func epochBatches(cfg Config) int {
	if cfg.FitArraysSamples <= 0 {
		return 0
	}
	micro := max(cfg.Batch/max(cfg.AccumulationSteps, 1), 1)
	return (cfg.FitArraysSamples + micro - 1) / micro
}
