package train

// schedule is what is drawn for every step before the run starts, from the run's seed: the
// updates the loss scale skips (mixed_float16) and the steps XLA compiles (a new input shape).
type schedule struct {
	lossNotes []string // the loss scale's notes on all cfg.Steps updates (setupLossScale)
	skips     []bool   // per step (0-based): the loss scale optimizer skips the update
	xla       xlaState
	skipThis  bool
}
