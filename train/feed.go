package train

import (
	"fmt"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/pipeline"
	"github.com/gpusim/gpusim/sim"
)

// feed is the host input of the training process: one tf.data pipeline (or Keras fit's array
// feed) per process that reads input, the replicas each one feeds, the batches asked for and
// not yet taken by every replica of their process, and the replicas' summed wait for them.
type feed struct {
	input      inputSource   // the first process's pipeline (inputs[0])
	inputs     []inputSource // one per process that reads input (newInputs)
	perProcess int           // replicas fed by each of inputs
	batches    map[batchKey]*batch
	inputWait  sim.Time // summed over replicas
}

// batchKey names batch k of process proc's pipeline.
type batchKey struct{ proc, k int }

// batch is one (micro-)batch of a process's input pipeline.
type batch struct {
	ready   bool
	takers  int // replicas that asked for it
	waiters []func()
}

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

// whenBatch runs fn once batch k of replica's process is on the GPU. The replicas of one process
// share a batch: its tf.data pipeline produces the process's batch and the strategy splits it
// (one process for MirroredStrategy, one per GPU for Horovod). The batch is forgotten once
// every replica of the process took it.
func (f *feed) whenBatch(replica, k int, fn func()) {
	if f.inputs == nil {
		fn()
		return
	}
	proc := replica / f.perProcess
	key := batchKey{proc, k}
	b := f.batches[key]
	if b == nil {
		b = &batch{}
		f.batches[key] = b
		f.inputs[proc].Get(func() {
			b.ready = true
			for _, w := range b.waiters {
				w()
			}
			b.waiters = nil
		})
	}
	b.takers++
	if b.takers == f.perProcess {
		delete(f.batches, key)
	}
	if b.ready {
		fn()
		return
	}
	b.waiters = append(b.waiters, fn)
}
