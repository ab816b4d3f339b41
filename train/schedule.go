package train

import (
	"fmt"

	"github.com/gpusim/gpusim/train/lossscale"
)

// schedule is what is drawn for every step before the run starts, from the run's seed: the
// updates the loss scale skips (mixed_float16) and the steps XLA compiles (a new input shape).
type schedule struct {
	lossNotes []string // the loss scale's notes on all cfg.Steps updates (drawLossScale)
	skips     []bool   // per step (0-based): the loss scale optimizer skips the update
	xla       xlaState
	skipThis  bool
}

// drawLossScale draws, for mixed_float16, which of cfg's updates the LossScaleOptimizer skips
// (Keras' dynamic loss scaling over replicas; gradients from lossscale's default gradient
// model, seeded by the run). A fixed scale (Config.StaticLossScale) skips none.
func (s *schedule) drawLossScale(cfg *Config, replicas int) error {
	if cfg.Precision != "mixed_float16" || cfg.StaticLossScale {
		return nil
	}
	res, err := lossscale.Simulate(lossscale.DefaultConfig(), lossscale.DefaultGradientModel(), cfg.Steps, replicas, cfg.Seed)
	if err != nil {
		return fmt.Errorf("loss scale: %w", err)
	}
	s.skips = make([]bool, cfg.Steps)
	for i, st := range res.Steps {
		s.skips[i] = !st.Applied
	}
	s.lossNotes = res.Warnings // for the whole run: result keeps them if the run completed
	return nil
}

// skip reports whether the update of step (1-based) is skipped.
func (s *schedule) skip(step int) bool {
	return step >= 1 && step-1 < len(s.skips) && s.skips[step-1]
}
