package train

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// runSymmetric runs c as Run does and says whether the replicas were simulated once; full
// runs it with every replica simulated.
func runSymmetric(t *testing.T, c Config) (res *Result, once bool, full *Result) {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := newRunner(c, true)
	if err != nil {
		t.Fatal(err)
	}
	once = len(r.active) < len(r.replicas)
	res, err = Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	full, _, err = runOnce(context.Background(), c, MaxEvents, false)
	if err != nil {
		t.Fatal(err)
	}
	return res, once, full
}

// private gives each GPU its own host threads (TF_GPU_THREAD_MODE=gpu_private): TF's shared
// runtime threads would issue the replicas' kernels one after the other.
func private(c *Config) {
	c.SymmetricReplicas = true
	c.Env = map[string]string{"TF_GPU_THREAD_MODE": "gpu_private"}
}

// TestSymmetricReplicasMatchFullSimulation: where the proof of replay.go (symmetricProof) holds, simulating
// replica 0 once and copying it gives exactly the full simulation's result (every field but
// Events, the work the simulator did), with and without fast-forward, traced op spans
// included; a run that runs out of memory is simulated in full.
func TestSymmetricReplicasMatchFullSimulation(t *testing.T) {
	g := true
	for name, f := range map[string]func(c *Config){
		"mirrored-2": func(c *Config) { private(c); c.GPUCount, c.Strategy, c.Batch = 2, "mirrored", 128 },
		"mirrored-8-growth": func(c *Config) {
			private(c)
			c.GPUCount, c.Strategy, c.Batch, c.Memory.Growth = 8, "mirrored", 512, &g
		},
		"mirrored-4-accumulation": func(c *Config) {
			private(c)
			c.GPUCount, c.Strategy, c.Batch, c.AccumulationSteps, c.Optimizer = 4, "mirrored", 256, 2, "adam"
		},
		"mirrored-4-packs-mixed": func(c *Config) {
			private(c)
			c.GPUCount, c.Strategy, c.Batch, c.NumPacks, c.Precision = 4, "mirrored", 256, 2, "mixed_float16"
		},
		"mirrored-2-xla": func(c *Config) {
			private(c)
			c.GPUCount, c.Strategy, c.Batch, c.XLA, c.Memory.Growth = 2, "mirrored", 128, true, &g
		},
		"mirrored-2-cuda-malloc-async": func(c *Config) {
			private(c)
			c.GPUCount, c.Strategy, c.Batch, c.Memory.Allocator = 2, "mirrored", 128, "cuda_malloc_async"
		},
		"horovod-4": func(c *Config) {
			c.SymmetricReplicas, c.GPUCount, c.Strategy, c.Batch = true, 4, "horovod", 256
		},
		"multi-worker-2x2": func(c *Config) {
			private(c)
			c.GPUCount, c.Nodes, c.Host, c.Strategy, c.Batch = 2, 2, "dgx-a100", "multi_worker_mirrored", 256
		},
		"oom": func(c *Config) { private(c); c.GPUCount, c.Strategy, c.Batch = 2, "mirrored", 2048 },
	} {
		for _, ff := range []bool{true, false} {
			c := cfgWith(f)
			c.Steps, c.TraceSteps, c.FastForward = 30, 3, ff
			res, once, full := runSymmetric(t, c)
			if !once {
				t.Errorf("%s: the proof should hold, but every replica was simulated", name)
			}
			if name == "oom" && res.OOM == nil {
				t.Errorf("%s: want an OOM", name)
			}
			if full.Replicas < 2 {
				t.Fatalf("%s: %d replicas", name, full.Replicas)
			}
			opts := cmpopts.IgnoreFields(Result{}, "Events")
			if diff := cmp.Diff(expandReplayed(full), expandReplayed(res), opts); diff != "" {
				t.Errorf("%s (fast-forward %v): simulated once, the result differs from the full simulation (-full +once):\n%s", name, ff, diff)
			}
			if name != "oom" && res.Events >= full.Events {
				t.Errorf("%s: %d events simulated once, %d in full: want fewer", name, res.Events, full.Events)
			}
		}
	}
}

// TestSymmetricReplicasFallBack: where the proof does not hold, every replica is simulated.
func TestSymmetricReplicasFallBack(t *testing.T) {
	g := true
	mirrored := func(c *Config) { private(c); c.GPUCount, c.Strategy, c.Batch = 2, "mirrored", 128 }
	for name, f := range map[string]func(c *Config){
		// seeded per-replica kernel-time jitter: a straggler sets each step
		"jitter": func(c *Config) { mirrored(c); c.SymmetricReplicas = false },
		// 65 samples over 2 replicas: 33 and 32
		"uneven-batch": func(c *Config) { mirrored(c); c.Batch = 65 },
		// tf.data feeds one global batch that the replicas take in turn
		"input-bound": func(c *Config) {
			mirrored(c)
			c.Input = &Input{Cache: "none", Prefetch: 1, ParallelCalls: 1}
		},
		"host-feed": func(c *Config) { mirrored(c); c.FitFromArrays = true },
		// TF's shared runtime threads issue replica after replica
		"shared-host-threads": func(c *Config) { mirrored(c); c.Env = nil },
		// two logical GPUs on one card share its SMs and memory
		"virtual-devices": func(c *Config) {
			c.SymmetricReplicas, c.Env = true, map[string]string{"TF_GPU_THREAD_MODE": "gpu_private"}
			c.Strategy, c.Memory.LogicalMiB, c.CrossDeviceOps = "mirrored", []int64{12000, 12000}, "reduction_to_one_device"
		},
		// another process holds memory on GPU 0 only
		"other-process": func(c *Config) {
			mirrored(c)
			c.Processes = []Process{{Name: "jupyter", UsedBytes: 3 << 30, GPUs: []int{0}, Memory: Memory{Growth: &g}}}
		},
		// the reduction's extra buffer lives on one replica
		"reduction-to-one-device": func(c *Config) { mirrored(c); c.CrossDeviceOps = "reduction_to_one_device" },
	} {
		c := cfgWith(f)
		c.Steps = 12
		res, once, full := runSymmetric(t, c)
		if once {
			t.Errorf("%s: the proof does not hold, but the replicas were simulated once", name)
		}
		if diff := cmp.Diff(expandReplayed(full), expandReplayed(res)); diff != "" {
			t.Errorf("%s: Run differs from the full simulation:\n%s", name, diff)
		}
	}
}
