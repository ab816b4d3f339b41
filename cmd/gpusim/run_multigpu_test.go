package main

import (
	"math"
	"strings"
	"testing"
)

// TestRunScalingOneVsEightA100 is issue 5's scaling case through the CLI: the JSON carries
// replicas, the all-reduce time and the scaling efficiency, which is the throughput over 8
// times the throughput of the same scenario on one GPU; the text explains it.
func TestRunScalingOneVsEightA100(t *testing.T) {
	eight := runJSON(t, "run", "resnet50-8xa100", "--set", "steps=10")
	one := runJSON(t, "run", "resnet50-8xa100", "--set", "steps=10", "--set", "hardware.count=1", "--set", "strategy.name=default", "--set", "batch=64")
	if got := eight["replicas"].(float64); got != 8 {
		t.Errorf("replicas = %v, want 8", got)
	}
	if ar := eight["allreduce_time_s"].(float64); ar <= 0 || ar > 0.002 {
		t.Errorf("allreduce_time_s = %v, want a ResNet-50 NCCL all-reduce on NVSwitch (0 < t < 2 ms)", ar)
	}
	eff := eight["scaling_efficiency"].(float64)
	want := eight["throughput_samples_per_s"].(float64) / (8 * one["throughput_samples_per_s"].(float64))
	// Below 0.95: one TF runtime dispatches every replica's ops and the slowest replica sets
	// each step (train/replicas.go).
	if math.Abs(eff-want) > 1e-9 || eff < 0.85 || eff >= 0.95 {
		t.Errorf("scaling_efficiency = %v, want throughput ratio / 8 = %v, in [0.85, 0.95)", eff, want)
	}
	if got := eight["devices"].([]any); len(got) != 8 {
		t.Errorf("%d devices, want one entry per GPU (8)", len(got))
	}
	if s, ok := eight["scaling"].(map[string]any); !ok || s["single_gpu_batch"].(float64) != 64 {
		t.Errorf("scaling = %v, want a comparison with one GPU at batch 64", eight["scaling"])
	}
	out, errs, code := runCLI(t, "run", "resnet50-8xa100", "--set", "steps=10")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Scaling: 8 replicas vs one GPU alone with batch 64", "per step the all-reduce adds", "All-reduce per update: nccl over nvswitch", "pack buffers: 97.59MiB per GPU"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
}

// TestRunAccumulationV100: batch 256 runs out of memory on a V100-16GB, 4 x 64 fits, keeps
// its accumulators and warns about BatchNorm.
func TestRunAccumulationV100(t *testing.T) {
	if full := runJSON(t, "run", "accumulation-v100", "--set", "accumulation_steps=1", "--set", "steps=3"); full["oom"] != true {
		t.Errorf("batch 256 without accumulation: oom = %v, want true", full["oom"])
	}
	acc := runJSON(t, "run", "accumulation-v100", "--set", "steps=3")
	if acc["oom"] != false {
		t.Fatalf("4 x 64: oom = %v (%v), want false", acc["oom"], acc["oom_message"])
	}
	d := acc["devices"].([]any)[0].(map[string]any)
	if got := d["accumulator_bytes"].(float64); got < 100e6 || got > 105e6 {
		t.Errorf("accumulator_bytes = %v, want ResNet-50's float32 gradients (~102 MB)", got)
	}
	ws, _ := acc["warnings"].([]any)
	if len(ws) != 1 || !strings.Contains(ws[0].(string), "BatchNorm statistics see only the micro-batch") {
		t.Errorf("warnings = %v, want the BatchNorm micro-batch warning", ws)
	}
}

// TestRunHardcodedGPU: with CUDA_VISIBLE_DEVICES=2,3 a hard-coded GPU:1 runs on card 3, and
// hiding every GPU with tf.visible_devices is bad input naming the key.
func TestRunHardcodedGPU(t *testing.T) {
	m := runJSON(t, "run", "hardcoded-gpu", "--set", "steps=2")
	d := m["devices"].([]any)[0].(map[string]any)
	if !strings.HasSuffix(d["name"].(string), "/device:GPU:1") || d["physical_gpu"].(float64) != 3 {
		t.Errorf("replica on %v (card %v), want GPU:1 on card 3", d["name"], d["physical_gpu"])
	}
	if rows := m["device_table"].([]any); len(rows) != 4 {
		t.Errorf("device_table has %d rows, want one per host GPU (4)", len(rows))
	}
	_, errs, code := runCLI(t, "run", "hardcoded-gpu", "--set", "tf.visible_devices=[]", "--set", "tf.device=")
	if code != 2 || !strings.Contains(errs, "tf.visible_devices") || !strings.Contains(errs, "left no GPU") {
		t.Errorf("tf.visible_devices=[]: exit %d, stderr %q; want exit 2 naming tf.visible_devices", code, errs)
	}
}
