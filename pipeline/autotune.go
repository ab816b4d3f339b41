package pipeline

import (
	"math"

	"github.com/gpusim/gpusim/sim"
)

// prefetchTuner is TF's PrefetchAutotuner (tensorflow/core/kernels/data/prefetch_autotuner.cc),
// which prefetch(AUTOTUNE) uses to size its buffer. It starts at one element in "upswing";
// a consumption that finds the buffer at its limit switches to "downswing"; a consumer that
// then finds the buffer empty doubles the limit (or adds 2048 once it is at least 2048),
// capped at free memory / element size, and goes back to upswing.
type prefetchTuner struct {
	auto    bool
	upswing bool
	limit   int
	grown   int // times the limit grew
}

// kBufferLimitThreshold (prefetch_autotuner.cc): exponential growth below it, linear above.
const bufferLimitThreshold = 2048

func newPrefetchTuner(prefetch Tunable) prefetchTuner {
	if prefetch == Autotune {
		return prefetchTuner{auto: true, upswing: true, limit: 1}
	}
	return prefetchTuner{limit: int(prefetch)}
}

// recordConsumption is RecordConsumption(current_buffer_size), called as an element leaves.
func (t *prefetchTuner) recordConsumption(size int) {
	if t.auto && t.upswing && size == t.limit {
		t.upswing = false
	}
}

// recordEmpty is RecordEmpty(): the consumer found the buffer empty.
func (t *prefetchTuner) recordEmpty(freeBytes, elementBytes int64) {
	if !t.auto || t.upswing {
		return
	}
	if t.limit >= bufferLimitThreshold {
		t.limit += bufferLimitThreshold
	} else {
		t.limit *= 2
	}
	if freeBytes > 0 && elementBytes > 0 {
		if m := freeBytes / elementBytes; int64(t.limit) > m {
			t.limit = int(max(m, 1))
		}
	}
	t.grown++
	t.upswing = true
}

// maybeOptimize runs the autotuning model's optimization when it is due. TF runs it on a
// background thread 10 ms after the iterator starts, then doubles the period up to 60 s
// (Model::OptimizeLoop; kOptimizationPeriodMinMs and kOptimizationPeriodMaxMs in
// tensorflow/core/framework/model.h). Here it runs at the pipeline's first event at or after
// the due time: the same decision, at most one event late, and no timer events that would
// keep a finished run's engine going.
func (p *Pipeline) maybeOptimize() {
	if p.cfg.ParallelCalls != Autotune || !p.started || p.e.Now() < p.nextTick {
		return
	}
	p.optimize()
	p.tickPeriod = min(2*p.tickPeriod, 60*sim.Second)
	p.nextTick = p.e.Now() + p.tickPeriod
}

// optimize is Model::OptimizeHillClimb (tensorflow/core/framework/model.cc) on the one tunable
// parameter this pipeline has, the map's parallelism: start it at its minimum (1), and raise
// it by one while that does not stop the climb. The climb stops when the parameter is at its
// maximum (the runner pool's size: the cores), when the modelled output time per element
// drops below the CPU time per element divided by the CPU budget (all cores), or when the
// buffers would exceed the RAM budget (half the host's memory). The output-time model is the
// pipeline's bottleneck stage: max(read time, map CPU time / parallelism), with the mean map
// cost observed so far, as TF's model uses measured processing times.
func (p *Pipeline) optimize() {
	if p.mapCnt == 0 {
		return
	}
	mapMean := p.mapSum / float64(p.mapCnt)
	read := transfer(p.cfg.RecordBytes, p.cfg.StorageBandwidth, p.cfg.ReadLatency).Seconds()
	if p.cacheComplete {
		read = 0
		if p.cfg.Cache == "file" {
			read = transfer(p.cfg.ElementBytes, p.cfg.CacheFileBandwidth, 0).Seconds()
		}
	}
	processing := read + mapMean
	cpuBudget := float64(p.cfg.Host.Cores) // GetCpuBudget(): port::NumSchedulableCPUs()
	ramBudget := 0.5 * float64(p.cfg.Host.MemoryBytes)
	maxPar := p.cfg.Host.Cores
	buffered := func(par int) float64 {
		return float64(par)*float64(p.cfg.ElementBytes) + float64(p.tuner.limit)*float64(p.batchBytes())
	}
	par := 1
	for {
		out := math.Max(read, mapMean/float64(par))
		if par >= maxPar || out < processing/cpuBudget || buffered(par) > ramBudget {
			break
		}
		par++
	}
	p.setPar(par, "hill climb")
}
