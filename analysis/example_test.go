package analysis_test

import (
	"context"
	"fmt"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
)

// The largest ResNet-50 batch with Adam on a T4, in steps of 8: the first OOM is in step 2,
// the first pass with Adam's slots.
func ExampleMaxBatch() {
	cfg := train.DefaultConfig()
	cfg.GPU, cfg.Optimizer = "t4", "adam"
	rep, err := analysis.MaxBatch(context.Background(), cfg, analysis.DefaultMaxBatchOptions())
	if err != nil {
		panic(err)
	}
	fmt.Println("max batch", rep.Batch, "first OOM", rep.FirstOOM.Batch, "in step", rep.FirstOOM.OOM.Step)
	fmt.Println("not monotone:", len(rep.NotMonotone))
	// Output:
	// max batch 160 first OOM 168 in step 2
	// not monotone: 0
}

// The fewest A100-40GBs for 10,000 img/s of ResNet-50 mixed_float16 at 256 per GPU.
func ExampleGPUs() {
	cfg := train.DefaultConfig()
	cfg.Precision, cfg.Optimizer, cfg.Steps = "mixed_float16", "momentum", 200
	rep, err := analysis.GPUs(context.Background(), cfg, analysis.GPUsOptions{Throughput: 10000, MaxGPUs: 64, PerGPUBatch: 256})
	if err != nil {
		panic(err)
	}
	for _, t := range rep.Trials {
		fmt.Printf("%d GPUs: %.0f img/s, efficiency %.1f%%, reaches %v\n", t.GPUs, t.Throughput, 100*t.Efficiency, t.Reaches)
	}
	fmt.Println("answer:", rep.GPUs)
	// Output:
	// 1 GPUs: 1766 img/s, efficiency 100.0%, reaches false
	// 2 GPUs: 3441 img/s, efficiency 97.4%, reaches false
	// 4 GPUs: 6501 img/s, efficiency 92.0%, reaches false
	// 6 GPUs: 9270 img/s, efficiency 87.5%, reaches false
	// 7 GPUs: 10567 img/s, efficiency 85.5%, reaches true
	// 8 GPUs: 11791 img/s, efficiency 83.5%, reaches true
	// answer: 7
}
