package train

import (
	"errors"
	"testing"
)

func share(r *Result, kind string) float64 {
	for _, s := range r.ByKind {
		if s.Category == kind {
			return s.Seconds
		}
	}
	return 0
}

// TestInputOnDevice: a batch already in GPU memory costs the step no host-to-device copy, and
// the flag cannot be combined with a host feed.
func TestInputOnDevice(t *testing.T) {
	c := DefaultConfig()
	c.GPU, c.Model, c.Batch, c.Steps, c.XLA = "h200", "resnet50", 128, 6, true
	host := mustRun(t, c)
	c.InputOnDevice = true
	dev := mustRun(t, c)
	if h := share(host, "h2d"); h <= 0 {
		t.Fatalf("copied batch: no h2d time in %v", host.ByKind)
	}
	if h := share(dev, "h2d"); h != 0 {
		t.Errorf("batch on the device: h2d %.3g s, want 0", h)
	}
	if d := host.StepTime - dev.StepTime; d < 0.9*share(host, "h2d") {
		t.Errorf("step %.2f ms with the copy, %.2f ms without: want the copy's %.2f ms saved", 1e3*host.StepTime, 1e3*dev.StepTime, 1e3*share(host, "h2d"))
	}
	c.FitFromArrays = true
	var fe *FieldError
	if err := c.Validate(); !errors.As(err, &fe) || fe.Field != "InputOnDevice" {
		t.Errorf("InputOnDevice with FitFromArrays: %v, want a FieldError on InputOnDevice", err)
	}
}

// TestKeras3BatchNormXLA: under XLA a Keras 3 batch norm (ops.moments, two column reductions)
// costs more than tf.keras 2.x's FusedBatchNormV3 (BatchNormExpander, both statistics in one
// pass) and shows as norm time, not fusion; without XLA the version changes nothing.
func TestKeras3BatchNormXLA(t *testing.T) {
	c := DefaultConfig()
	c.GPU, c.Model, c.Batch, c.Steps, c.XLA = "h200", "resnet50", 128, 6, true
	k2 := mustRun(t, c)
	c.KerasVersion = 3
	k3 := mustRun(t, c)
	if share(k2, "norm") != 0 || share(k3, "norm") <= 0 {
		t.Errorf("norm time: keras 2 %.3g s (want 0: fusions), keras 3 %.3g s (want > 0)", share(k2, "norm"), share(k3, "norm"))
	}
	if k3.StepTime <= k2.StepTime {
		t.Errorf("XLA step: keras 3 %.2f ms, keras 2 %.2f ms; want keras 3 slower (two passes for the statistics)", 1e3*k3.StepTime, 1e3*k2.StepTime)
	}
	c.XLA = false
	a := mustRun(t, c)
	c.KerasVersion = 2
	b := mustRun(t, c)
	if a.StepTime != b.StepTime {
		t.Errorf("without XLA: keras 3 %.4g s, keras 2 %.4g s; want equal", a.StepTime, b.StepTime)
	}
	c.KerasVersion = 4
	var fe *FieldError
	if err := c.Validate(); !errors.As(err, &fe) || fe.Field != "KerasVersion" {
		t.Errorf("KerasVersion 4: %v, want a FieldError on KerasVersion", err)
	}
}

// TestKerasFromTFVersion: an unset keras_version follows the TF release (Keras 3 from TF
// 2.16, tf_keras 2.x with TF_USE_LEGACY_KERAS) and the JAX backend; an explicit one wins,
// and the combinations no release ships are refused.
func TestKerasFromTFVersion(t *testing.T) {
	for _, tc := range []struct {
		tf, framework, legacy string
		keras, want           int
	}{
		{"", "", "", 0, 2},
		{"2.15", "", "", 0, 2},
		{"2.16", "", "", 0, 3},
		{"2.17.1", "", "", 0, 3},
		{"2.16", "", "1", 0, 2},
		{"2.16", "", "True", 0, 2},
		{"2.16", "", "0", 0, 3},
		{"", "jax", "", 0, 3},
		{"2.16", "", "", 2, 2},
		{"2.15", "", "", 3, 3},
	} {
		c := DefaultConfig()
		c.TFVersion, c.Framework, c.KerasVersion = tc.tf, tc.framework, tc.keras
		if tc.legacy != "" {
			c.Env = map[string]string{"TF_USE_LEGACY_KERAS": tc.legacy}
		}
		if p, err := c.Profile(0); err != nil || p.Keras != tc.want {
			t.Errorf("tf %q framework %q legacy %q keras_version %d: Profile(0).Keras = %d, %v; want %d", tc.tf, tc.framework, tc.legacy, tc.keras, p.Keras, err, tc.want)
		}
	}
	for _, tc := range []struct {
		tf, framework string
		keras         int
	}{{"2.14", "", 3}, {"1.15", "", 3}, {"", "jax", 2}} {
		c := DefaultConfig()
		c.TFVersion, c.Framework, c.KerasVersion = tc.tf, tc.framework, tc.keras
		var fe *FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != "KerasVersion" {
			t.Errorf("tf %q framework %q keras_version %d: %v, want a FieldError on KerasVersion", tc.tf, tc.framework, tc.keras, err)
		}
	}
	// The derived version reaches the pricing: TF 2.16 under XLA prices Keras 3's batch norm.
	c := DefaultConfig()
	c.GPU, c.Model, c.Batch, c.Steps, c.XLA = "h200", "resnet50", 128, 6, true
	// The same release on both sides: the release decides more than Keras (XLA's layout).
	c.KerasVersion, c.TFVersion = 3, "2.16"
	k3 := mustRun(t, c)
	c.KerasVersion = 0
	tf216 := mustRun(t, c)
	if tf216.StepTime != k3.StepTime {
		t.Errorf("tf_version 2.16: step %.4g s, keras_version 3: %.4g s; want equal", tf216.StepTime, k3.StepTime)
	}
}
