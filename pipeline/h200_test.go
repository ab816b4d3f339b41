package pipeline

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/gpusim/gpusim/sim"
)

// dataloaderRun is pipeline/testdata/h200/dataloader.json, written by
// tools/input/dataloader_bench.py on the H200 machine (README.md there).
type dataloaderRun struct {
	Host struct {
		CPUCount int `json:"os_cpu_count"`
	} `json:"host"`
	CPU struct {
		ElemBytes int64 `json:"elem_bytes"`
		Batch     int   `json:"batch"`
	} `json:"cpu"`
	GPUOnly struct {
		StepTimeMean float64 `json:"step_time_mean_s"`
		GPUBusy      float64 `json:"gpu_busy_per_step_s"`
		NVMLUtil     float64 `json:"nvml_util_mean"`
	} `json:"gpu_only"`
	NVMLPeriod float64 `json:"nvml_driver_sample_period_s"`
	Configs    []struct {
		Workers      int      `json:"num_workers"`
		StepTimeMean float64  `json:"step_time_mean_s"`
		BusyEvents   float64  `json:"gpu_busy_fraction_events"`
		NVMLUtil     float64  `json:"nvml_util_mean"`
		Records      []record `json:"records"`
	} `json:"configs"`
}

type record struct {
	Ask, Batch, H2D, End float64 // host seconds
	Made                 []float64
}

func (r *record) UnmarshalJSON(b []byte) error {
	var m struct {
		Ask   float64   `json:"t_ask"`
		Batch float64   `json:"t_batch"`
		H2D   float64   `json:"t_h2d"`
		End   float64   `json:"t_end"`
		Made  []float64 `json:"made"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*r = record{m.Ask, m.Batch, m.H2D, m.End, m.Made}
	return nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func mean(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

// TestReproducesH200DataLoader checks the simulator against a PyTorch DataLoader measured on
// the H200 machine (16 cores): busy-loop elements of 2 ms, batches of 32, a 16.7 ms GPU step
// that synchronises, 0, 2, 3 and 8 workers. A DataLoader worker builds whole batches, so the
// pipeline is configured at batch granularity: one element = one DataLoader batch, map
// parallelism = workers, prefetch = workers more (prefetch_factor 2 keeps 2 batches per
// worker outstanding); no workers = a sequential map without prefetch.
//
// Inputs come from the measurement, none from the quantity predicted: the batch's CPU time
// (the workers' own timestamps around each batch), a worker's per-batch overhead (collate
// and IPC: the median gap between its consecutive batches in the most input-bound run), the
// GPU step (CUDA events, GPU-only run), and the main process's cost to receive a batch and
// copy it (its wait and .cuda() time in the GPU-bound 8-worker run). Predicted: mean step
// time and NVML utilization.gpu, each within 15% for 0, 2 and 8 workers.
func TestReproducesH200DataLoader(t *testing.T) {
	d := loadDataloaderRun(t)
	const warm = 6
	if d.Host.CPUCount != 16 {
		t.Fatalf("measurement host has %d cores, want the 16 of nvidia-h200", d.Host.CPUCount)
	}
	var makes []float64
	gap := math.Inf(1)
	var deliver, h2dW float64
	h2d := map[int]float64{}
	for _, c := range d.Configs {
		rs := c.Records[warm:]
		var g, hs, ws []float64
		for i, r := range rs {
			makes = append(makes, r.Made[1]-r.Made[0])
			hs = append(hs, r.H2D-r.Batch)
			ws = append(ws, r.Batch-r.Ask)
			if w := c.Workers; w > 0 && i >= w {
				g = append(g, r.Made[0]-rs[i-w].Made[1])
			}
		}
		h2d[c.Workers] = median(hs)
		if c.Workers > 0 {
			gap = math.Min(gap, median(g))
		}
		if c.Workers == 8 {
			deliver, h2dW = mean(ws), median(hs)
		}
	}
	batchCPU := mean(makes) + gap
	t.Logf("inputs: batch CPU %.2f ms (make %.2f + worker overhead %.2f), receive %.2f ms, copy %.2f ms (%.2f without workers), GPU %.2f ms + host %.3f ms",
		1e3*batchCPU, 1e3*mean(makes), 1e3*gap, 1e3*deliver, 1e3*h2dW, 1e3*h2d[0], 1e3*d.GPUOnly.GPUBusy, 1e3*(d.GPUOnly.StepTimeMean-d.GPUOnly.GPUBusy))
	t.Logf("%7s %10s %10s %7s %9s %9s %7s", "workers", "step sim", "step real", "err", "util sim", "util nvml", "err")
	for _, c := range d.Configs {
		cfg := Config{
			Records: 1 << 20, Batch: 1, ElementBytes: int64(d.CPU.Batch) * d.CPU.ElemBytes,
			MapCost: Const(batchCPU), ParallelCalls: Tunable(c.Workers), Prefetch: Tunable(c.Workers),
			Host: Host{Cores: d.Host.CPUCount, MemoryBytes: 128 << 30},
			// The measured .cuda() time stands for the copy: latency only.
			PageableLatency: h2d[c.Workers],
		}
		if c.Workers > 0 {
			cfg.DeliverOverhead = deliver
		}
		run, err := Simulate(cfg, 1, Consumer{
			Steps: 300, Warmup: warm, GPUFixed: d.GPUOnly.GPUBusy,
			HostStep:     d.GPUOnly.StepTimeMean - d.GPUOnly.GPUBusy,
			SamplePeriod: sim.FromSeconds(d.NVMLPeriod),
		})
		if err != nil {
			t.Fatal(err)
		}
		step := run.StepTimeMean.Seconds()
		util := Summarize(run.UtilizationSeries).Mean
		stepErr := step/c.StepTimeMean - 1
		utilErr := util/c.NVMLUtil - 1
		t.Logf("%7d %8.2fms %8.2fms %+6.1f%% %9.3f %9.3f %+6.1f%%", c.Workers, 1e3*step, 1e3*c.StepTimeMean, 100*stepErr, util, c.NVMLUtil, 100*utilErr)
		if c.Workers == 3 {
			// Not a criterion: see the package's testdata/h200/README.md. Three workers sit at
			// the balance point, where the DataLoader's in-order delivery idles workers.
			continue
		}
		if math.Abs(stepErr) > 0.15 || math.Abs(utilErr) > 0.15 {
			t.Errorf("workers=%d: simulated step %.2f ms, util %.3f; measured %.2f ms, %.3f: more than 15%% apart",
				c.Workers, 1e3*step, util, 1e3*c.StepTimeMean, c.NVMLUtil)
		}
	}
}

func loadDataloaderRun(t *testing.T) dataloaderRun {
	t.Helper()
	b, err := os.ReadFile("testdata/h200/dataloader.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dataloaderRun
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("testdata/h200/dataloader.json: %v", err)
	}
	return d
}
