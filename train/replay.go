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

// stepProof is what a replica keeps so that its steps can be proven to repeat and replayed
// (replay.go): the step's kernels and memory changes, the previous step's, the allocator's
// state bytes, and the allocator counters at the step's start and now.
type stepProof struct {
	stepBusyIvs []busySpan // this step's kernels, relative to its start
	trace       []memEvent // this step's memory changes, relative to its start
	prevTrace   []memEvent // the previous step's (canFastForward swaps them)
	// the allocator's state bytes at the end of this step and the previous one
	// (stateAppender)
	state, prevState      []byte
	poolChanges, failures int  // pool size changes and failed requests so far
	poolChangesAtStart    int  // poolChanges when the step started
	failuresAtStart       int  // failures when the step started
	slotsAtStart          bool // the optimizer slots existed when the step started
}
