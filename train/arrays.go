package train

import (
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
// ArraysStepHost plus the batch's bytes at ArraysGatherRate.
const (
	// ArraysGatherRate is the host's rate for gathering a shuffled batch out of numpy arrays
	// (bytes per second): the slope, 0.32 ms per 602 KB sample.
	ArraysGatherRate = 1.9e9
	// ArraysStepHost is the rest of fit's host time per step on that feed (seconds): the
	// intercept.
	ArraysStepHost = 10e-3
)

// arrayFeed is fit's host feed from in-memory arrays: one batch in preparation ahead of the
// one the step takes, each costing cost on the host.
type arrayFeed struct {
	eng       *sim.Engine
	cost      sim.Time
	lastReady sim.Time // when the previous batch was ready
	lastTake  sim.Time // when the previous batch was asked for
	started   bool
}

// Get runs fn when the next batch is on the GPU. The host starts a batch when the one before
// it is ready and the step before that took its batch (one batch ahead).
func (a *arrayFeed) Get(fn func()) {
	now := a.eng.Now()
	start := now
	if a.started {
		start = max(a.lastReady, a.lastTake)
	}
	ready := max(start+a.cost, now)
	a.started, a.lastReady, a.lastTake = true, ready, now
	a.eng.At(ready, fn)
}

// newArrayFeed returns the array feed of m at global batch batch: float32 features (numpy's
// default for images and embeddings alike) plus an int32 label per sample.
func newArrayFeed(e *sim.Engine, m *models.Model, batch int) *arrayFeed {
	var perSample float64
	for _, s := range m.InputShapes {
		n := 1.0
		for _, d := range s {
			n *= float64(d)
		}
		perSample += 4 * n
	}
	perSample += 4
	cost := ArraysStepHost + float64(batch)*perSample/ArraysGatherRate
	return &arrayFeed{eng: e, cost: sim.FromSeconds(cost)}
}
