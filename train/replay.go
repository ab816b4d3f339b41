package train

// replay is what the run may replay instead of simulating: whole steps (fast-forward), a
// jittered window of steps, or an input-fed step's GPU part; what newRunner decided may be
// replayed and what the steps so far proved.
type replay struct {
	jit          jitterState // the jittered fast-forward's window (jitter.go)
	ffPossible   bool        // fast-forward is on and every allocator can show its state
	recordSteps  bool        // each step's memory changes and kernels are kept for a replay
	replayInput  bool        // the GPU's part of a step may be replayed after its batch arrives
	proven       *gpuPart    // the GPU's part of the next step, when it repeats the last one
	stepReplayed bool        // the current step's GPU part is a replay
}
