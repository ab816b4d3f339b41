package train

import (
	"context"
	"math"
	"testing"

	"github.com/gpusim/gpusim/models"
)

// TestStateArrays holds stateArrays to the state Keras 3's JAX trainer really passed per step
// for the recorded models (testdata/h200/keras/host/kmodel.csv: trainable, non_trainable,
// optimizer and metrics counts; the other models counted from keras.applications' layers:
// VGG16 16 layers with kernel and bias, InceptionV3 94 conv kernels and 94 batch norms with
// scale=False, EfficientNetB0 49 convs, 49 batch norms, 16 squeeze-excite blocks, the input
// Normalization's mean, variance and count).
func TestStateArrays(t *testing.T) {
	for _, c := range []struct {
		model, precision string
		want             int
	}{
		{"resnet50", "float32", 538},
		{"resnet50", "mixed_float16", 542},
		{"mobilenetv2", "float32", 424},
		{"vgg16", "float32", 68},
		{"inceptionv3", "float32", 572},
		{"efficientnetb0", "float32", 531},
	} {
		m, err := models.Get(c.model)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Plan(models.PlanOptions{Batch: 8, Precision: models.Precision(c.precision), XLA: true, JAX: true, Optimizer: "momentum"})
		if err != nil {
			t.Fatal(err)
		}
		if got := stateArrays(p, c.precision); got != c.want {
			t.Errorf("stateArrays(%s %s) = %d, want %d (%d variables, %d slots)", c.model, c.precision, got, c.want, len(p.Persistent), len(p.Slots))
		}
	}
}

// TestKerasJAXHostFedEpoch runs MobileNetV2 under Keras 3 on JAX fitting from numpy arrays
// of four batches (as testdata/h200/keras's host-fed rows) and holds a whole epoch to the
// host's schedule in arrays.go: the host-bound epoch is four gathers, four train-step calls
// over every state array and the last two steps' GPU time (the GPU time is the device-fed
// step less its exposed dispatch), plus what of the epoch-end sync the GPU's drain of those
// two steps does not hide.
func TestKerasJAXHostFedEpoch(t *testing.T) {
	base := DefaultConfig()
	base.Model, base.GPU, base.Batch, base.XLA, base.Optimizer = "mobilenetv2", "h200", 128, true, "momentum"
	base.Framework, base.KerasVersion, base.Steps = "jax", 3, 12
	dev := base
	dev.InputOnDevice = true
	dres, err := Run(context.Background(), dev)
	if err != nil {
		t.Fatal(err)
	}
	host := base
	host.FitFromArrays, host.FitArraysSamples = true, 4*128
	hres, err := Run(context.Background(), host)
	if err != nil {
		t.Fatal(err)
	}
	const n = 424 // stateArrays, TestStateArrays
	gather := 128 * (224*224*3*4 + 4) / JAXArraysGatherRate
	call := KerasJAXStepHost + KerasJAXStepPerArray*n
	gpu := dres.StepTime - jaxDispatch(n)
	// The last batch was gathered ahead: its call follows the third's at once, and its step
	// runs when both that call and the third step are done.
	drain := gpu + max(gpu, call) - call // from the last call's return to the last step's end
	want := 4*gather + 3*call + gpu + max(gpu, call) + max(0, KerasJAXEpochPerArray*n-drain)
	var got float64
	for _, s := range hres.StepTimes[4:8] {
		got += s
	}
	if math.Abs(got/want-1) > 0.01 {
		t.Errorf("epoch 2 of host-fed MobileNetV2 = %.2f ms, want %.2f ms (sync %.2f, gathers %.2f, calls %.2f, GPU %.2f)",
			1e3*got, 1e3*want, 1e3*KerasJAXEpochPerArray*n, 4e3*gather, 4e3*call, 1e3*gpu)
	}
	// Under TF the same config keeps the profile's StepOverhead and the lumped feed.
	tf := host
	tf.Framework = ""
	tres, err := Run(context.Background(), tf)
	if err != nil {
		t.Fatal(err)
	}
	if tres.StepTime == hres.StepTime {
		t.Errorf("TF and JAX host-fed steps are both %.2f ms: the JAX feed is not in effect", 1e3*tres.StepTime)
	}
}

// TestJAXDispatchGrowsWithState: a device-fed Keras 3 step on JAX pays jaxDispatch over its
// state arrays, not the TF profile's flat StepOverhead, so VGG16's 68 arrays cost 3 ms less
// host time than ResNet-50's 538 while TF charges both the same.
func TestJAXDispatchGrowsWithState(t *testing.T) {
	if d := jaxDispatch(538) - jaxDispatch(68); math.Abs(d-470*JAXDispatchPerArray) > 1e-12 {
		t.Errorf("jaxDispatch(538) - jaxDispatch(68) = %g, want %g", d, 470*JAXDispatchPerArray)
	}
	c := DefaultConfig()
	c.Model, c.GPU, c.Batch, c.XLA, c.Optimizer, c.InputOnDevice, c.Steps = "vgg16", "h200", 16, true, "momentum", true, 4
	c.Framework, c.KerasVersion = "jax", 3
	fw, err := c.Profile(0)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{cfg: c, fw: fw}
	r.plans.stateArrays = 68
	if got, want := r.stepHost(), jaxDispatch(68); got != want {
		t.Errorf("stepHost() under jax with 68 arrays = %g, want %g", got, want)
	}
	// A calibrated profile's host_dispatch_scale (calibrate fit) scales the whole call.
	r.mach.gpu.HostDispatchScale = 1.5
	if got, want := r.stepHost(), 1.5*jaxDispatch(68); math.Abs(got-want) > 1e-15 {
		t.Errorf("stepHost() under jax with host_dispatch_scale 1.5 = %g, want %g", got, want)
	}
	c.FitFromArrays, c.InputOnDevice = true, false
	r.cfg = c
	if got := r.stepHost(); got != 0 {
		t.Errorf("stepHost() under jax from arrays = %g, want 0 (the feed carries the call)", got)
	}
}
