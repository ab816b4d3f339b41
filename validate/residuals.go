package validate

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/train"
)

// Residuals is Score with each row's residual for analysis's prediction intervals
// (analysis.Residual): log(measured/predicted) of its speed, the op mix of its simulated step
// and its GPU's architecture. The PyTorch-eager H200 rows are left out of the residuals: they
// stand in for TF where no TF recording exists, and their error is PyTorch's eager dispatch,
// not a TF job's.
func Residuals(ctx context.Context, ms []Measurement, o Options) (*Validation, []analysis.Residual, error) {
	run := o.Run
	if run == nil {
		run = train.Run
	}
	var mu sync.Mutex
	mix := map[string]string{}
	o.Run = func(ctx context.Context, cfg train.Config) (*train.Result, error) {
		res, err := run(ctx, cfg)
		if err == nil {
			mu.Lock()
			mix[configKey(cfg)] = analysis.MixOf(res)
			mu.Unlock()
		}
		return res, err
	}
	// Score runs a configuration several rows share once (sharedRuns): the mix is kept by
	// configuration, not by row.
	steps := o.Steps
	if steps <= 0 {
		steps = defaultSteps
	}
	v, err := Score(ctx, ms, o)
	if err != nil {
		return nil, nil, err
	}
	var rs []analysis.Residual
	for _, r := range v.Rows {
		if !r.ok() || r.Source == SourcePyTorch || !(r.Predicted > 0) {
			continue
		}
		g := r.Config.GPUProfile
		if g == nil {
			p, err := hw.LookupGPU(r.GPU())
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", r.Ref, err)
			}
			g = &p
		}
		e := math.Log(r.Value / r.Predicted)
		if r.Metric.lowerIsFaster() {
			e = -e // speed is 1/time
		}
		// A cluster is one configuration: its set, model, GPU and precision (analysis.Residual).
		rs = append(rs, analysis.Residual{Quantity: analysis.QuantitySpeed, Arch: analysis.ArchOf(*g), Mix: mix[configKey(r.run(steps))], GPUs: r.GPUs(),
			Cluster: r.Set + "|" + modelGroup(r.Model()) + "|" + r.GPU() + "|" + r.Label, LogErr: e})
	}
	return v, rs, nil
}
