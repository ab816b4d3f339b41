package pipeline_test

import (
	"fmt"

	"github.com/gpusim/gpusim/pipeline"
	"github.com/gpusim/gpusim/sim"
)

// A training loop on the engine: each step asks for a batch, runs 40 ms of kernels once the
// batch is on the GPU, and asks again. The map's 16 parallel calls and the prefetch buffer
// keep up, so the GPU is busy almost all the time.
func Example() {
	cfg := pipeline.DefaultConfig() // ImageNet JPEGs, 3 ms of CPU each, 16 cores
	cfg.ParallelCalls = pipeline.Autotune
	cfg.Prefetch = pipeline.Autotune

	e := sim.NewEngine()
	p := pipeline.New(e, cfg, sim.Stream(1, "input"))
	var busy []pipeline.Interval
	var step func()
	step = func() {
		p.Get(func(ready sim.Time) {
			end := ready + 40*sim.Millisecond
			busy = append(busy, pipeline.Interval{Start: ready, End: end})
			if len(busy) < 100 {
				e.At(end, step)
			}
		})
	}
	step()
	e.Run(-1)

	st := p.Stats()
	u := pipeline.Summarize(pipeline.UtilizationSeries(busy, 0, e.Now(), pipeline.NVMLSamplePeriod))
	fmt.Printf("batches %d, map parallelism %d, GPU utilization %.2f\n", st.Batches, st.Parallelism, u.Mean)
	// Output:
	// batches 100, map parallelism 16, GPU utilization 0.96
}
