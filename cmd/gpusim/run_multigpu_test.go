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

// TestRunHorovodReportsFusionBuckets: a Horovod run's all-reduce section describes Horovod's
// fusion buckets (their count, bytes and NCCL time), not MirroredStrategy's packs.
func TestRunHorovodReportsFusionBuckets(t *testing.T) {
	out, errs, code := runCLI(t, "run", "horovod-dgx-a100", "--set", "steps=8")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"All-reduce per update: Horovod (NCCL) over nvswitch", "fusion bucket(s) of at most 64.00MiB (HOROVOD_FUSION_THRESHOLD)", "fusion buffer: 64.00MiB per GPU"} {
		if !strings.Contains(out, want) {
			t.Errorf("horovod-dgx-a100: text report lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"num_packs=", "pack buffers:", "not what Keras fit does"} {
		if strings.Contains(out, not) {
			t.Errorf("horovod-dgx-a100: text report has MirroredStrategy's %q", not)
		}
	}
}
