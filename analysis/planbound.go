package analysis

import (
	"sync"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/train"
)

// Bounds are what a plan cannot beat, read from its step plan without simulating it.
type Bounds struct {
	// MemoryBytes is a lower bound of the peak bytes in use on each replica's GPU: the
	// variables, the optimizer slots and, without XLA (whose rematerialization may drop
	// some), what the forward pass keeps for backward (models.Plan.SavedBytes). All of them
	// are alive at once at the end of step 2's forward pass.
	MemoryBytes int64 `json:"memory_bytes"`
	// CapacityBytes is the GPU's memory less its CUDA context: no allocator limit is above it.
	CapacityBytes int64 `json:"capacity_bytes"`
	// StepTime is a roofline lower bound of the update's step, seconds: each forward and
	// backward op of one micro-batch at the larger of its FLOPs over the GPU's highest peak
	// for its dtype and its bytes over the peak memory bandwidth, times the micro-batches.
	// Copies from the host, the optimizer (a skipped update runs none), launches, input and
	// all-reduce are left out: each only adds time.
	StepTime float64 `json:"step_time_s"`
}

// boundKey identifies the work behind a micro-step's bounds.
type boundKey struct {
	plan *models.Plan
	gpu  string
	tf32 bool
}

// bounder memoizes the roofline of each (plan, GPU, TF32): thousands of plans of a search share
// a few dozen step plans.
type bounder struct {
	mu       sync.Mutex
	steps    map[boundKey]float64
	computed map[computeKey]float64
}

func newBounder() *bounder {
	return &bounder{steps: map[boundKey]float64{}, computed: map[computeKey]float64{}}
}

// computeKey is what train.ComputeTime depends on among the knobs a search varies.
type computeKey struct {
	gpu               string
	micro             int
	precision         string
	static, xla, tf32 bool
	memory            string
}

// compute is the step's compute bound (train.ComputeTime of one micro-batch, times the
// micro-batches), memoized by computeKey.
func (b *bounder) compute(cfg train.Config) (float64, error) {
	replicas := replicasOf(cfg)
	acc := max(cfg.AccumulationSteps, 1)
	micro := ((cfg.Batch+replicas-1)/replicas + acc - 1) / acc
	k := computeKey{cfg.GPU, micro, cfg.Precision, cfg.StaticLossScale, cfg.XLA, cfg.TF32, memoryMode(cfg.Memory)}
	b.mu.Lock()
	t, ok := b.computed[k]
	b.mu.Unlock()
	if !ok {
		var err error
		if t, err = train.ComputeTime(cfg, micro); err != nil {
			return 0, err
		}
		b.mu.Lock()
		b.computed[k] = t
		b.mu.Unlock()
	}
	return float64(acc) * t, nil
}

// bounds returns cfg's Bounds.
func (b *bounder) bounds(cfg train.Config) (Bounds, error) {
	replicas := replicasOf(cfg)
	acc := max(cfg.AccumulationSteps, 1)
	replicaBatch := (cfg.Batch + replicas - 1) / replicas
	micro := (replicaBatch + acc - 1) / acc
	p, gpu, err := train.StepPlan(cfg, micro)
	if err != nil {
		return Bounds{}, err
	}
	mem := p.PersistentBytes() + p.SlotBytes()
	if !cfg.XLA {
		mem += p.SavedBytes
	}
	k := boundKey{p, gpu.Name, cfg.TF32}
	b.mu.Lock()
	t, ok := b.steps[k]
	b.mu.Unlock()
	if !ok {
		t = roofline(p, gpu, cfg.TF32)
		b.mu.Lock()
		b.steps[k] = t
		b.mu.Unlock()
	}
	return Bounds{MemoryBytes: mem, CapacityBytes: gpu.MemoryBytes - gpu.ContextBytes, StepTime: float64(acc) * t}, nil
}

// roofline is the forward and backward ops of p at gpu's peaks (Bounds.StepTime).
func roofline(p *models.Plan, gpu hw.GPU, tf32 bool) float64 {
	var t float64
	for _, op := range p.Ops {
		if op.Phase == models.Optimizer || op.Kind == models.HostToDevice {
			continue
		}
		peak := peakFLOPs(gpu, op.DType, tf32)
		t += max(op.FLOPs/peak, op.Bytes/gpu.MemBandwidth)
	}
	return t
}

// peakFLOPs is the highest rate gpu has for math in dt: Tensor Cores or CUDA cores, whichever
// is faster (TF32 only when enabled).
func peakFLOPs(gpu hw.GPU, dt models.DType, tf32 bool) float64 {
	peak := gpu.PeakFP32
	switch dt {
	case models.Float16:
		peak = max(peak, gpu.PeakFP16, gpu.PeakFP16Vector)
	case models.BFloat16:
		peak = max(peak, gpu.PeakBF16, gpu.PeakBF16Vector)
	case models.Float32:
		if tf32 {
			peak = max(peak, gpu.PeakTF32)
		}
	default:
		peak = max(peak, gpu.PeakFP16, gpu.PeakBF16, gpu.PeakTF32, gpu.PeakFP16Vector, gpu.PeakBF16Vector)
	}
	return peak
}
