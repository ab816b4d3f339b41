package calibrate_test

import (
	"fmt"

	"github.com/gpusim/gpusim/calibrate"
)

// Step times from a job's output: `step_time=` lines, the first one (compilation) left out.
func ExampleStepTimes() {
	lines := []calibrate.Line{
		{Text: "step=0 step_time=4.08 loss=7.10"},
		{Text: "step=1 step_time=0.0291 loss=6.10"},
		{Text: "step=2 step_time=0.0280 loss=5.35"},
		{Text: "step=3 step_time=0.0283 loss=4.90"},
	}
	s, err := calibrate.StepTimes(lines, nil, -1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d values, %d warm-up, median %.4f s\n", s.Source, len(s.Times), s.Warmup, s.Median)
	// Output: step_time: 4 values, 1 warm-up, median 0.0283 s
}

// The allocator mode of a recording made on the H200 with JAX's defaults.
func ExampleAnalyzeMemory() {
	tr, err := calibrate.LoadTrace("testdata/jax-prealloc.json.gz")
	if err != nil {
		panic(err)
	}
	a, err := calibrate.AnalyzeMemory(tr)
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Mode)
	fmt.Println(a.Reason)
	// Output:
	// preallocate
	// after a 528 MiB context, one jump of 107390 MiB to 107918 MiB (75% of the 143156 MiB free at start)
}
