package train

import (
	"fmt"

	"github.com/gpusim/gpusim/pipeline"
	"github.com/gpusim/gpusim/sim"
	"github.com/gpusim/gpusim/train/lossscale"
)

// inputSource is the tf.data pipeline as the training loop sees it: Get runs fn when the next
// global batch is on the GPU.
type inputSource interface {
	Get(fn func())
}

// newInput returns the tf.data pipeline for cfg on engine e feeding replicas GPUs, nil when
// the batches are synthetic (already on the GPU).
func newInput(e *sim.Engine, cfg Config, replicas int) (inputSource, error) {
	if cfg.Input == nil {
		return nil, nil
	}
	pc, err := InputPipeline(cfg, replicas)
	if err != nil {
		return nil, err
	}
	return pipelineSource{pipeline.New(e, pc, sim.Stream(cfg.Seed, "input"))}, nil
}

// pipelineSource adapts pipeline.Pipeline to inputSource.
type pipelineSource struct{ p *pipeline.Pipeline }

func (s pipelineSource) Get(fn func()) { s.p.Get(func(sim.Time) { fn() }) }

// setupLossScale draws, for mixed_float16, which updates the LossScaleOptimizer skips (Keras'
// dynamic loss scaling; gradients from lossscale's default gradient model, seeded by the run).
func (r *runner) setupLossScale() error {
	if r.cfg.Precision != "mixed_float16" {
		return nil
	}
	res, err := lossscale.Simulate(lossscale.DefaultConfig(), lossscale.DefaultGradientModel(), r.cfg.Steps, len(r.replicas), r.cfg.Seed)
	if err != nil {
		return fmt.Errorf("loss scale: %w", err)
	}
	r.skips = make([]bool, r.cfg.Steps)
	for i, st := range res.Steps {
		r.skips[i] = !st.Applied
	}
	r.lossNotes = res.Warnings // for the whole run: result keeps them if the run completed
	return nil
}

// skip reports whether the update of step (1-based) is skipped.
func (r *runner) skip(step int) bool { return step >= 1 && step-1 < len(r.skips) && r.skips[step-1] }
