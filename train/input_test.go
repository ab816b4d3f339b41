package train_test

import (
	"context"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/train/traintest"
)

// TestGPUSeriesNvidiaSmi checks the nvidia-smi samples: their mean is the run's busy fraction
// (over the full windows), and a fast-forwarded run gives the same samples as one simulated
// step by step. (That the input-bound one swings enough to be diagnosed input-bound and the
// other two stay compute-bound is scenarios' TestBuiltinsDiagnosedBound.)
func TestGPUSeriesNvidiaSmi(t *testing.T) {
	mean := func(xs []float64) float64 {
		var m float64
		for _, x := range xs {
			m += x
		}
		return m / float64(len(xs))
	}
	for _, tc := range []struct {
		cfg   train.Config
		steps int
	}{
		{traintest.InputBound(), 50},
		{train.DefaultConfig(), 60},
		{traintest.Mirrored4xA100(), 20},
	} {
		t.Run(tc.cfg.Name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Steps = tc.steps
			res, err := train.Run(context.Background(), cfg)
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
		})
	}

	cfg := train.DefaultConfig()
	cfg.Steps = 60
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
	tput := func(host string) *train.Result {
		cfg := traintest.Autotuned(traintest.InputBound())
		cfg.Steps, cfg.Input.Pipeline.MapCost.Mean, cfg.Host = 30, 40e-3, host
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
	vm, dgx := tput(""), tput("dgx-a100")
	if !(dgx.Throughput > 2*vm.Throughput) {
		t.Errorf("throughput on dgx-a100 %.0f, on h200-vm %.0f: want the 256-core host > 2x", dgx.Throughput, vm.Throughput)
	}
	if vm.Input.Parallelism > 16 || dgx.Input.Parallelism <= 16 {
		t.Errorf("map parallelism %d on h200-vm, %d on dgx-a100: want <= 16 and > 16", vm.Input.Parallelism, dgx.Input.Parallelism)
	}
	bad := traintest.InputBound()
	bad.Host = "nope"
	if _, err := train.Run(context.Background(), bad); err == nil {
		t.Error("unknown host profile accepted")
	}
}

// TestInputReplicasCopyInParallel checks MirroredStrategy's distributed dataset: each of 4
// replicas copies a quarter of the global batch over its own link at once, so a batch's
// host-to-device time is about a quarter of one GPU's copy of the whole batch.
func TestInputReplicasCopyInParallel(t *testing.T) {
	perBatch := func(count int) float64 {
		cfg := traintest.Autotuned(traintest.Mirrored4xA100())
		cfg.GPUCount, cfg.Batch, cfg.Steps = count, 256, 10
		res, err := train.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Input == nil || res.Input.Batches == 0 {
			t.Fatalf("%d GPUs: no input statistics", count)
		}
		return res.Input.H2DTime.Seconds() / float64(res.Input.Batches)
	}
	one, four := perBatch(1), perBatch(4)
	if r := four / one; r < 0.2 || r > 0.35 {
		t.Errorf("copy per batch: %.3g s on 4 replicas, %.3g s on 1: ratio %.2f, want ~0.25", four, one, r)
	}
}

// TestGPUSeriesDownsampled checks simulator.utilization_samples: a run with more nvidia-smi
// windows than it keeps merges them pairwise, each sample the mean of the windows it covers
// (so the busy time is the same), while the series' Summary stays that of nvidia-smi's own
// windows (what the diagnosis reads: analysis's TestDiagnoseDownsampledSeries), and nothing
// else in the result moves. It covers a jittered multi-GPU run (replayed by a window of
// steps), an input-fed one (simulated step by step) and the fast-forwarded default.
func TestGPUSeriesDownsampled(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		cfg      train.Config
		keep     int
	}{
		{"mirrored-4xa100", traintest.Steps(traintest.Mirrored4xA100(), 3000), 100},
		{"input-bound", traintest.InputBound(), 8},
		{"default", traintest.Steps(train.DefaultConfig(), 2000), 33},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			cfg := tc.cfg
			cfg.UtilizationSamples = 1 << 30
			full, err := train.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg.UtilizationSamples = tc.keep
			ds, err := train.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range full.GPUSeries {
				d := ds.GPUSeries[i]
				per := int(math.Round(d.Period / f.Period))
				if f.Period != 0.2 || per < 2 || per&(per-1) != 0 || len(d.Samples) > tc.keep || len(d.Samples) != len(f.Samples)/per {
					t.Fatalf("GPU %d: %d samples of %v s from %d of %v s, keeping %d", i, len(d.Samples), d.Period, len(f.Samples), f.Period, tc.keep)
				}
				for k, x := range d.Samples {
					var m float64
					for _, y := range f.Samples[k*per : (k+1)*per] {
						m += y
					}
					if m /= float64(per); math.Abs(x-m) > 1e-12 {
						t.Fatalf("GPU %d sample %d = %v, want the mean %v of the %d windows it covers", i, k, x, m, per)
					}
				}
				if diff := cmp.Diff(f.Summary, d.Summary, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
					t.Errorf("GPU %d: Summary of the downsampled run (-full +downsampled):\n%s", i, diff)
				}
			}
			if diff := cmp.Diff(full, ds, cmpopts.IgnoreFields(train.Result{}, "GPUSeries")); diff != "" {
				t.Errorf("the rest of the result moved (-full +downsampled):\n%s", diff)
			}
		})
	}
}
