package main

import (
	"context"
	"fmt"

	"github.com/gpusim/gpusim/scenarios"
	"github.com/gpusim/gpusim/train"
)

// addRemedies re-simulates, for a run diagnosed input-bound, each change pipeline proposes
// (the scenario arg with sets, plus the change's own --set overrides) and stores them in
// res.Remedies, best first. Other runs cost nothing: train.Remedies returns at once.
func addRemedies(ctx context.Context, arg string, sets []string, cfg train.Config, res *train.Result) error {
	rs, err := train.Remedies(cfg, res, func(extra []string) (*train.Result, error) {
		sc, err := scenarios.Resolve(arg)
		if err != nil {
			return nil, err
		}
		all := append(append([]string{}, sets...), extra...)
		if err := sc.SetAll(all); err != nil {
			return nil, err
		}
		return train.Run(ctx, sc.Config)
	})
	if err != nil {
		return fmt.Errorf("diagnosis: %w", err)
	}
	res.Remedies = rs
	return nil
}
