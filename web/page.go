package web

import (
	"github.com/gpusim/gpusim/train"
)

// pageData are the figures the page draws that gpusim run -o json does not give as such.
type pageData struct {
	// Regions is the allocator's memory at an OOM (nil without one, or without a BFC dump).
	Regions *Regions `json:"regions,omitempty"`
	// RunThroughputSamplesPerS is the samples of the completed updates over the run's
	// simulated time, as gpusim run's "throughput (run)" row computes it
	// (report.runThroughputRow): with XLA recompiling, the median step's throughput leaves
	// the compiles out and can be 40 times higher.
	RunThroughputSamplesPerS float64 `json:"run_throughput_samples_per_s"`
	// OOMWaitS is how long TF's BFC allocator waited for frees before it failed
	// (kMaxMillisToWait): the allocation was asked for that long before oom_detail.time_s.
	OOMWaitS float64 `json:"oom_wait_s,omitempty"`
	// Shares are the other processes' memory card by card (nil without other processes).
	Shares []Share `json:"shares,omitempty"`
}

// Share is what another process's allocator took from one card (nvidia-smi index), its pool:
// the memory chart draws it on top of the card, above what the training process may use.
type Share struct {
	GPU   int    `json:"gpu"`
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

func newPageData(cfg *train.Config, res *train.Result) pageData {
	var p pageData
	if n := len(res.StepTimes); n > 0 && res.Elapsed > 0 {
		p.RunThroughputSamplesPerS = float64(n*res.GlobalBatch) / res.Elapsed
	}
	if o := res.OOM; o != nil {
		p.Regions = NewRegions(o)
		p.OOMWaitS = o.Wait
	}
	p.Shares = shares(cfg, res)
	return p
}

// shares pairs each other process's pools with its cards: train starts process i on the cards
// of cfg.Processes[i].GPUs (all of the host's when nil) and reports one pool per card in that
// order (train.ProcessResult.PoolBytes). A process that failed to start has no pools.
func shares(cfg *train.Config, res *train.Result) []Share {
	var out []Share
	for i, pr := range res.Processes {
		if i >= len(cfg.Processes) {
			break
		}
		gpus := cfg.Processes[i].GPUs
		if gpus == nil {
			for g := range len(pr.PoolBytes) {
				gpus = append(gpus, g)
			}
		}
		for j, b := range pr.PoolBytes {
			if j < len(gpus) && b > 0 {
				out = append(out, Share{GPU: gpus[j], Name: pr.Name, Bytes: b})
			}
		}
	}
	return out
}
