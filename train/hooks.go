package train

import (
	"fmt"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/pipeline"
	"github.com/gpusim/gpusim/sim"
	"github.com/gpusim/gpusim/train/lossscale"
)

// inputSource is the tf.data pipeline as the training loop sees it: Get runs fn when the next
// global batch is on the GPU.
type inputSource interface {
	Get(fn func())
}

// newInputs returns the tf.data pipelines of cfg on engine e, one per process that reads
// input, and how many replicas each feeds; nil when the batches are synthetic (already on the
// GPU). MirroredStrategy is one process: one pipeline of the global batch, split over the
// replicas. Horovod runs a process per GPU and MultiWorkerMirroredStrategy one per host; each
// process builds its own pipeline over its shard of the files (ds.shard(num_workers, index):
// NVIDIA's ConvNets utils/data_utils.py shards per Horovod rank) for its share of the batch,
// with its own num_parallel_calls, and the processes of one host share its cores
// (pipeline.NewOn). replicaBatches are the replicas' shares of the global batch.
func newInputs(e *sim.Engine, cfg Config, host hw.Host, replicaBatches []int) ([]inputSource, int, error) {
	if cfg.Input == nil {
		return nil, 0, nil
	}
	replicas := len(replicaBatches)
	procs := 1
	switch {
	case cfg.Strategy == "horovod":
		procs = replicas
	case cfg.Strategy == "multi_worker_mirrored" && cfg.NodeCount() > 1:
		procs = cfg.NodeCount()
	}
	pc := inputPipeline(cfg, host, replicas)
	if procs == 1 {
		return []inputSource{pipelineSource{pipeline.New(e, pc, sim.Stream(cfg.Seed, "input"))}}, replicas, nil
	}
	per := replicas / procs
	perHost := procs / cfg.NodeCount()
	accum := max(cfg.AccumulationSteps, 1)
	var cpu *pipeline.CPU
	out := make([]inputSource, procs)
	for p := range procs {
		if p%perHost == 0 {
			cpu = pipeline.NewCPU(e, pc.Host) // the next host's cores
		}
		share := 0
		for _, b := range replicaBatches[p*per : (p+1)*per] {
			share += b
		}
		q := pc
		q.Replicas = per
		q.Batch = max((share+accum-1)/accum, 1)
		// The first Records mod procs shards hold one record more.
		q.Records = pc.Records / procs
		if p < pc.Records%procs {
			q.Records++
		}
		name := "input"
		if p > 0 {
			name = fmt.Sprintf("input/%d", p)
		}
		out[p] = pipelineSource{pipeline.NewOn(cpu, q, sim.Stream(cfg.Seed, name))}
	}
	return out, per, nil
}

// pipelineSource adapts pipeline.Pipeline to inputSource.
type pipelineSource struct{ p *pipeline.Pipeline }

func (s pipelineSource) Get(fn func()) { s.p.Get(func(sim.Time) { fn() }) }

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
