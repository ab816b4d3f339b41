package pipeline

import (
	"strings"
	"testing"
)

// inputBoundGPUStep is the GPU time of one step of the built-in scenario input-bound
// (scenarios/builtin/input-bound.yaml: ResNet-50, float32 with TF32, batch 128, one H200) as
// train simulates it with its batches already on the GPU: `gpusim run` of that scenario
// without its input section gave step_time_s 0.0595 (gpu_utilization 1.00) at commit 890bef6.
const inputBoundGPUStep = 0.0595

// inputBound is the scenario's pipeline, key by key as the YAML sets it (the rest is
// DefaultConfig: the H200 host's PCIe rates, no shuffle, Keras-style epochs).
func inputBound() Config {
	c := DefaultConfig()
	c.Batch = 128
	c.ParallelCalls = 0                                           // input.map.parallel_calls
	c.Prefetch = 0                                                // input.prefetch
	c.Cache = "none"                                              // input.cache
	c.MapCost = Dist{Kind: "lognormal", Mean: 4e-3, Stddev: 1e-3} // input.map.cost_ms, cost_stddev_ms
	c.Records = 1281167                                           // input.records
	c.RecordBytes = 110592                                        // input.record_bytes
	c.ElementBytes = 150528                                       // input.element_bytes
	c.StorageBandwidth = 7e9                                      // input.storage_bandwidth
	c.Host = Host{Cores: 16, MemoryBytes: 128 << 30}              // input.host.cores, memory_gib
	return c
}

// TestInputBoundScenario checks scenarios/builtin/input-bound.yaml at the pipeline level:
// about 10% GPU utilization as written, above 90% with
// --set input.prefetch=autotune --set input.map.parallel_calls=autotune, the diagnosis of each,
// and that re-simulating the candidate remedies puts that combination first.
func TestInputBoundScenario(t *testing.T) {
	// The step's GPU time scales with the batch (for the "batch twice as large" remedy).
	c := Consumer{Steps: 200, GPUPerElement: inputBoundGPUStep / 128}
	for _, tc := range []struct {
		name          string
		par, prefetch Tunable
		lo, hi        float64
		bound         Bound
	}{
		{"as written", 0, 0, 0.07, 0.13, InputBound},
		{"autotune", Autotune, Autotune, 0.90, 1, ComputeBound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := inputBound()
			cfg.ParallelCalls, cfg.Prefetch = tc.par, tc.prefetch
			r, err := Simulate(cfg, 1, c)
			if err != nil {
				t.Fatal(err)
			}
			if r.Utilization < tc.lo || r.Utilization > tc.hi {
				t.Errorf("gpu_utilization %.3f, want %.2f..%.2f", r.Utilization, tc.lo, tc.hi)
			}
			d := Diagnose(r.Evidence())
			if d.Bound != tc.bound {
				t.Errorf("Diagnose = %s, want %s; evidence: %s", d.Bound, tc.bound, strings.Join(d.Evidence, "; "))
			}
			t.Logf("utilization %.3f, step %v, %s: %s", r.Utilization, r.StepTimeMean, d.Bound, strings.Join(d.Evidence, "; "))
		})
	}
	trials, base, err := Rank(inputBound(), Candidates(inputBound()), SimulateEval(1, Consumer{Steps: 60, GPUPerElement: inputBoundGPUStep / 128}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trials {
		t.Logf("%-60s %8.0f samples/s  %+6.0f%%", tr.Change.Name, tr.SamplesPerSecond, 100*tr.Gain)
	}
	if got, want := strings.Join(trials[0].Change.Set, " "), "input.map.parallel_calls=autotune input.prefetch=autotune"; got != want {
		t.Errorf("best remedy sets %q, want %q", got, want)
	}
	if trials[0].Gain < 5 {
		t.Errorf("best remedy gains %.1fx over %.0f samples/s, want > 5x", trials[0].Gain, base)
	}
}
