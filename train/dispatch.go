package train

import "github.com/gpusim/gpusim/models"

// Keras 3 on the JAX backend passes the whole training state to the jitted train step at
// every call: keras/src/backend/jax/trainer.py, fit, calls train_function(state, iterator)
// with state = (trainable_variables, non_trainable_variables, optimizer_variables,
// metrics_variables), and make_train_function jits train_step with donate_argnums=0, so each
// step flattens, checks and donates every array and wraps every output in a new jax.Array.
// The host cost of a step therefore grows with the number of state arrays, not the FLOPs;
// TF's tf.function captures its variables as resource handles and pays
// hw.GPU.StepOverhead instead (Config.Framework "tensorflow", unchanged).
//
// Measured on the H200 with Keras 3.16 on JAX 0.11.2 (testdata/h200/keras/steps.csv, phase A:
// device_sync_median_ms - device_fed_ms, the part of a step's host work the GPU waits for
// when the host waits for every step; testdata/h200/keras/host: the same for repeats, and a
// bare jax.jit step over N donated arrays, jaxargs.csv). Fit on VGG16 (68 arrays, 0.77 ms) and
// the nine ResNet-50 rows (538 arrays, mean 3.46 ms): JAXDispatchBase + JAXDispatchPerArray*N.
// Held out: MobileNetV2 (424 arrays) 2.80 ms predicted, 3.07 and 3.00 measured; EfficientNetB0
// (531) 3.42 vs 3.56; InceptionV3 (572) 3.65 vs 4.12. The bare jitted step shows the same
// form at about half the slope (sync - pipelined of a 9 ms step: 0.58 ms at 8 arrays, 2.65
// at 512, 4.85 at 2048): the rest is Keras's own Python around the call.
const (
	// JAXDispatchBase is the exposed host time of one jitted Keras train-step call with no
	// state (seconds): the intercept.
	JAXDispatchBase = 0.38e-3
	// JAXDispatchPerArray is the exposed host time per state array (seconds): the slope.
	JAXDispatchPerArray = 5.72e-6
)

// Under model.fit from numpy arrays (Config.FitFromArrays) the host thread does the whole
// call, not only its exposed part, plus the loop's per-step work, one step after another
// with the batch gathers: the interval between two calls' returns is fit's gather of a batch
// (next(iterator): the array adapter's slice and device_put's return) plus the rest, which
// grows with the state arrays. Measured per step in the recordings that timed both
// (testdata/h200/keras/host, repeat and split: interval_ms - gather_ms), ResNet-50's 15
// configs (538-542 arrays) give a median of 16.3 ms, 11.7 to 22.0 ms as the host's speed moves
// between and within leases (split/README.md); KerasJAXStepHost is the intercept VGG16 (68
// arrays) gave. Held out: MobileNetV2 (424 arrays) 12.8 ms predicted, 11.0 measured;
// EfficientNetB0 (541) 16.3 vs 15.8. With every host piece as a config measured it, the
// schedule in arrays.go reproduces split's nine host-fed steps within 7% each
// (TestKerasJAXScheduleSplit prints them).
const (
	// KerasJAXStepHost is fit's host time per step outside the gather and the per-array work
	// (seconds).
	KerasJAXStepHost = 0.3e-3
	// KerasJAXStepPerArray is fit's host time per state array per step (seconds): the
	// jitted call's flattening, donation and output wrapping, the loop's unpacking of the
	// state and the asynchronous callbacks.
	KerasJAXStepPerArray = 29.6e-6
	// KerasJAXEpochPerArray is the host time per state array from an epoch's last
	// train-step call to the next epoch's first batch (seconds): jax_state_sync assigns every
	// variable back to the model, the next epoch's _get_jax_state reads them all again
	// (keras/src/backend/jax/trainer.py, fit). It overlaps the GPU's drain of the queued steps
	// (arrays.go). From split/ksplit_steps.csv's epoch ends: mixed_float16 b64, whose GPU
	// drains first, starts the next epoch 17.2-18.1 ms after the last call (median 17.9 ms,
	// 542 arrays: 33 us); the eight other configs drain later and start within -4.5 to +4.6
	// ms of the drain (their pipelined GPU steps).
	KerasJAXEpochPerArray = 33e-6
	// JAXArraysGatherRate is the host's rate for gathering a shuffled batch out of numpy
	// arrays under Keras 3's JAX trainer (bytes per second): kmodel.csv's gather_ms, the
	// time of next(iterator) inside fit, 21.7 and 20.2 ms for a batch of 128 224x224x3
	// float32 images (77.1 MB). The VM's memory speed varies between sessions: a later
	// recording's probe read 2.5-3.4 GB/s (testdata/h200/keras/repeat); a run on a measured
	// host sets Config.HostGatherRate.
	JAXArraysGatherRate = 3.68e9
)

// stateArrays is how many arrays Keras 3's JAX trainer passes to the train step per call
// for plan p: every variable (trainable and not) and every optimizer slot, the optimizer's
// iterations and learning_rate, the loss tracker's total and count
// (keras/src/trainers/trainer.py, _loss_tracker), and under mixed_float16 the
// LossScaleOptimizer's four own variables. Checked against model.trainable_variables,
// non_trainable_variables, optimizer.variables and metrics_variables of the real models
// (testdata/h200/keras/host/kmodel.csv: MobileNetV2 424, ResNet-50 538, 542 in
// mixed_float16).
func stateArrays(p *models.Plan, precision string) int {
	n := len(p.Persistent) + len(p.Slots) + 2 + 2
	if precision == "mixed_float16" {
		n += 4
	}
	return n
}

// jaxDispatch is the exposed host time of one Keras 3 train-step call on JAX over n state
// arrays (seconds).
func jaxDispatch(n int) float64 { return JAXDispatchBase + JAXDispatchPerArray*float64(n) }
