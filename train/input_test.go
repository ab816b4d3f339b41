package train_test

import (
	"context"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/scenarios"
	"github.com/gpusim/gpusim/train"
)

func scenarioConfig(t *testing.T, name string, sets ...string) train.Config {
	t.Helper()
	s, err := scenarios.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAll(sets); err != nil {
		t.Fatal(err)
	}
	return s.Config
}

// TestGPUSeriesNvidiaSmi checks the nvidia-smi samples: their mean is the run's busy fraction
// (over the full windows), a fast-forwarded run gives the same samples as one simulated step
// by step, and an input-bound run swings while a compute-bound one stays near 100%.
func TestGPUSeriesNvidiaSmi(t *testing.T) {
	mean := func(xs []float64) float64 {
		var m float64
		for _, x := range xs {
			m += x
		}
		return m / float64(len(xs))
	}
	for _, tc := range []struct {
		scenario string
		sets     []string
		bound    string
	}{
		{"input-bound", []string{"steps=50"}, "input-bound"},
		{"default", []string{"steps=60"}, "compute-bound"},
		{"mirrored-4xa100", []string{"steps=20"}, "compute-bound"},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			res, err := train.Run(context.Background(), scenarioConfig(t, tc.scenario, tc.sets...))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.GPUSeries) != res.Replicas {
				t.Fatalf("%d series for %d replicas", len(res.GPUSeries), res.Replicas)
			}
			s := res.GPUSeries[0]
			if want := int(res.Elapsed / s.Period); len(s.Samples) != want {
				t.Errorf("%d samples over %.3f s, want %d full windows of %v s", len(s.Samples), res.Elapsed, want, s.Period)
			}
			// Full windows cover all but the last partial one: the means agree closely.
			if got := mean(s.Samples); math.Abs(got-res.Devices[0].BusyFraction) > 0.03+s.Period/res.Elapsed {
				t.Errorf("mean of samples %.3f, busy fraction %.3f", got, res.Devices[0].BusyFraction)
			}
			if d := analysis.DiagnoseResult(res); d == nil || string(d.Bound) != tc.bound {
				t.Errorf("diagnosis = %+v, want %s", d, tc.bound)
			}
		})
	}

	cfg := scenarioConfig(t, "default", "steps=60")
	ff, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ff.FastForwarded == 0 {
		t.Fatal("default scenario did not fast-forward: the comparison covers nothing")
	}
	cfg.FastForward = false
	slow, err := train.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(slow.GPUSeries, ff.GPUSeries); diff != "" {
		t.Errorf("fast-forwarded samples differ from step-by-step ones (-slow +ff):\n%s", diff)
	}
}

// TestInputHostFromProfile checks that hardware.host.profile sets the tf.data host: a DGX
// A100's 256 cores let AUTOTUNE's map outrun the H200 VM's 16, and input.host.cores still wins.
func TestInputHostFromProfile(t *testing.T) {
	tput := func(sets ...string) *train.Result {
		cfg := scenarioConfig(t, "input-bound", append([]string{"steps=30", "input.map.parallel_calls=autotune", "input.prefetch=autotune", "input.map.cost_ms=40"}, sets...)...)
		// The scenario sets the H200 VM's host explicitly, which a profile does not override:
		// unset, the host's fields come from the profile.
		h := &cfg.Input.Pipeline
		h.Host.Cores, h.Host.MemoryBytes, h.StorageBandwidth = 0, 0, 0
		res, err := train.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	vm, dgx := tput(), tput("hardware.host.profile=dgx-a100")
	if !(dgx.Throughput > 2*vm.Throughput) {
		t.Errorf("throughput on dgx-a100 %.0f, on h200-vm %.0f: want the 256-core host > 2x", dgx.Throughput, vm.Throughput)
	}
	if vm.Input.Parallelism > 16 || dgx.Input.Parallelism <= 16 {
		t.Errorf("map parallelism %d on h200-vm, %d on dgx-a100: want <= 16 and > 16", vm.Input.Parallelism, dgx.Input.Parallelism)
	}
	if _, err := train.Run(context.Background(), scenarioConfig(t, "input-bound", "hardware.host.profile=nope")); err == nil {
		t.Error("unknown host profile accepted")
	}
}

// TestInputReplicasCopyInParallel checks MirroredStrategy's distributed dataset: each of 4
// replicas copies a quarter of the global batch over its own link at once, so a batch's
// host-to-device time is about a quarter of one GPU's copy of the whole batch.
func TestInputReplicasCopyInParallel(t *testing.T) {
	perBatch := func(count string) float64 {
		res, err := train.Run(context.Background(), scenarioConfig(t, "mirrored-4xa100", "hardware.count="+count, "batch=256", "steps=10",
			"input.map.parallel_calls=autotune", "input.prefetch=autotune"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Input == nil || res.Input.Batches == 0 {
			t.Fatalf("hardware.count=%s: no input statistics", count)
		}
		return res.Input.H2DTime.Seconds() / float64(res.Input.Batches)
	}
	one, four := perBatch("1"), perBatch("4")
	if r := four / one; r < 0.2 || r > 0.35 {
		t.Errorf("copy per batch: %.3g s on 4 replicas, %.3g s on 1: ratio %.2f, want ~0.25", four, one, r)
	}
}
