package train

import (
	"fmt"

	"github.com/gpusim/gpusim/train/lossscale"
)

// schedule is what is drawn for every step before the run starts, from the run's seed: the
// updates the loss scale skips (mixed_float16) and the steps XLA compiles (a new input shape).
type schedule struct {
	lossNotes []string // the loss scale's notes on all cfg.Steps updates (setupLossScale)
	skips     []bool   // per step (0-based): the loss scale optimizer skips the update
	xla       xlaState
	skipThis  bool
}

// setupLossScale draws, for mixed_float16, which updates the LossScaleOptimizer skips (Keras'
// dynamic loss scaling; gradients from lossscale's default gradient model, seeded by the run).
// A fixed scale (Config.StaticLossScale) skips none.
func (r *runner) setupLossScale() error {
	if r.cfg.Precision != "mixed_float16" || r.cfg.StaticLossScale {
		return nil
	}
	res, err := lossscale.Simulate(lossscale.DefaultConfig(), lossscale.DefaultGradientModel(), r.cfg.Steps, len(r.replicas), r.cfg.Seed)
	if err != nil {
		return fmt.Errorf("loss scale: %w", err)
	}
	r.sched.skips = make([]bool, r.cfg.Steps)
	for i, st := range res.Steps {
		r.sched.skips[i] = !st.Applied
	}
	r.sched.lossNotes = res.Warnings // for the whole run: result keeps them if the run completed
	return nil
}

// skip reports whether the update of step (1-based) is skipped.
func (r *runner) skip(step int) bool {
	return step >= 1 && step-1 < len(r.sched.skips) && r.sched.skips[step-1]
}
