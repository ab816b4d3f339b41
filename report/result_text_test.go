package report

import (
	"strings"
	"testing"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
)

func TestProcessHolds(t *testing.T) {
	const gib = int64(1) << 30
	tests := []struct {
		name  string
		pools []int64
		want  string
	}{
		{"none", nil, "holds no GPU memory"},
		{"one GPU", []int64{14 * gib}, "holds 14.00GiB"},
		{"equal pools", []int64{30 * gib, 30 * gib}, "holds 30.00GiB on each of its 2 GPUs"},
		{"different pools", []int64{2 * gib, 3 * gib}, "holds 2.000GiB, 3.000GiB on its 2 GPUs (in the order of its gpus list)"},
	}
	for _, tt := range tests {
		if got := processHolds(tt.pools); got != tt.want {
			t.Errorf("%s: processHolds(%v) = %q, want %q", tt.name, tt.pools, got, tt.want)
		}
	}
}

// A run that ran out of memory before its first update must not report the kernels it ran
// until the OOM as GPU utilization; a run with completed steps still does.
func TestResultTextUtilizationWithoutSteps(t *testing.T) {
	dev := train.Device{Name: "/device:GPU:0", Allocator: "GPU_0_bfc", BusyFraction: 0.998}
	tests := []struct {
		name      string
		res       train.Result
		want      []string
		wantNotIn []string
	}{
		{"oom in step 1",
			train.Result{Scenario: "s", Model: "resnet50", GPU: "v100-16gb", GPUs: 1, Replicas: 1, StepsRequested: 20,
				GPUUtilization: 0.998, OOM: &train.OOM{Step: 1, Op: "conv1_conv/Conv"}, Devices: []train.Device{dev}},
			[]string{"GPU utilization      - (no step completed)", "input stall          -\n"},
			[]string{"99.8%"}},
		{"fits",
			train.Result{Scenario: "s", Model: "resnet50", GPU: "v100-16gb", GPUs: 1, Replicas: 1, StepsRequested: 1,
				StepTimes: []float64{0.1}, StepTime: 0.1, GPUUtilization: 0.998, Devices: []train.Device{dev}},
			[]string{"GPU utilization      99.8%", "GPU_0_bfc  0B           0B         0B     99.8%"},
			[]string{"no step completed"}},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := WriteResultText(&b, &analysis.Result{Result: &tt.res}); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := b.String()
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: report lacks %q:\n%s", tt.name, w, got)
			}
		}
		for _, w := range tt.wantNotIn {
			if strings.Contains(got, w) {
				t.Errorf("%s: report has %q:\n%s", tt.name, w, got)
			}
		}
	}
}

func TestRunThroughputRow(t *testing.T) {
	tests := []struct {
		name string
		res  train.Result
		want [2]string
	}{
		{"steady run: no row", train.Result{StepTimes: []float64{0.1, 0.1}, GlobalBatch: 64, Throughput: 640, Elapsed: 0.2}, [2]string{}},
		{"within 10%: no row", train.Result{StepTimes: []float64{0.1, 0.1}, GlobalBatch: 64, Throughput: 640, Elapsed: 0.21}, [2]string{}},
		{"no step: no row", train.Result{GlobalBatch: 64, Elapsed: 0.2}, [2]string{}},
		{"xla recompiles", train.Result{StepTimes: make([]float64, 100), GlobalBatch: 64, Throughput: 3417, Elapsed: 71.1, XLACompiles: 8},
			[2]string{"throughput (run)", "90.01 samples/s over the whole 71.10s, 8 XLA compile(s) included"}},
	}
	for _, tt := range tests {
		if got := runThroughputRow(&tt.res); got != tt.want {
			t.Errorf("%s: runThroughputRow = %q, want %q", tt.name, got, tt.want)
		}
	}
}
