package train

import "github.com/gpusim/gpusim/allocator"

// replicaMemory is what a replica holds in its allocator: the live tensors of the step (by plan
// tensor index), the variables, slots and accumulators allocated once, and the all-reduce's
// buffers.
type replicaMemory struct {
	live   []allocator.Handle
	isLive []bool
	// variables, slots and accumulators, allocated once
	persistent []allocator.Handle
	slotsDone  bool
	extra      []allocator.Handle // all-reduce output buffers, freed at the end of the step
	packBufs   []allocator.Handle // live all-reduce buffers by index into gradSync.packBufs (-1: none)
	// the copy-based reduction's buffer on the reducing replica
	reduceExtra    allocator.Handle
	hasReduceExtra bool
}

// memStats is what a replica's memory did, for its Device in the Result: the timeline, the
// profiles of steps 1 and 2, the peaks, the pool's growth, and the all-reduce's and the
// accumulators' bytes.
type memStats struct {
	sampler  *sampler
	profiles [2]*sampler // memory within steps 1 and 2, relative to the step's start
	// firstPeak is the most in use up to the end of step 1 (variables, autotuning scratch
	// and the first step), steadyPeak the most in use after it.
	firstPeak, steadyPeak int64
	growth                []PoolChange
	dropped               int
	lastPool              int64
	// multi-GPU memory: bytes in use when the all-reduce started and at its peak (latest
	// update), the gradient accumulators
	arStartBytes int64
	arPeakBytes  int64
	accumBytes   int64
}
