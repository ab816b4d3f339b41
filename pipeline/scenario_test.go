package pipeline

import "testing"

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
// --set input.prefetch=autotune --set input.map.parallel_calls=autotune (analysis diagnoses
// the whole run and ranks the remedies: analysis.TestInputBoundRemedies).
func TestInputBoundScenario(t *testing.T) {
	c := Consumer{Steps: 200, GPUPerElement: inputBoundGPUStep / 128}
	for _, tc := range []struct {
		name          string
		par, prefetch Tunable
		lo, hi        float64
	}{
		{"as written", 0, 0, 0.07, 0.13},
		{"autotune", Autotune, Autotune, 0.90, 1},
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
			t.Logf("utilization %.3f, step %v", r.Utilization, r.StepTimeMean)
		})
	}
}
