package analysis

// Baselines: the runs a result is compared with. A multi-replica run is compared with one
// replica training alone (Scaling), a mixed-precision run with the same run in float32
// (PrecisionSaving). Each baseline is a train.Config derived from the run's; Session
// simulates it once and shares it between the runs that need the same one.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/train"
)

// The seed guide's claim for mixed precision: 30-40% less peak memory than float32.
const (
	seedSavingLow  = 0.30
	seedSavingHigh = 0.40
)

// PrecisionSaving compares a mixed-precision run's peak memory with the same run in float32
// (a short counterfactual run: same model, batch, GPU, strategy and memory options).
type PrecisionSaving struct {
	// Float32PeakBytes and MixedPeakBytes are the first replica's peak bytes in use.
	Float32PeakBytes, MixedPeakBytes int64
	// Saving is 1 - MixedPeakBytes/Float32PeakBytes.
	Saving float64
	// FixedBytes is what mixed precision keeps in float32 on a replica: the variables and the
	// optimizer slots (Keras' mixed policies keep variables float32 and cast them per step).
	FixedBytes int64
	// InBand reports whether Saving is within the seed guide's 30-40%; Reason says why not.
	InBand bool
	Reason string
}

// Float32Baseline returns the float32 run a mixed-precision run of cfg that completed is
// compared with: a short run (slots exist from step 1's update; step 2 is the steady state)
// without the input pipeline (the GPU's memory does not depend on it). false when res needs
// no such comparison.
func Float32Baseline(cfg train.Config, res *train.Result) (train.Config, bool) {
	if cfg.Precision == "float32" || res.OOM != nil || len(res.Devices) == 0 || res.StepTime == 0 {
		return train.Config{}, false
	}
	ref := cfg
	ref.Name = cfg.Name + " (float32)"
	ref.Precision = "float32"
	ref.Steps = min(cfg.Steps, 2)
	ref.TraceSteps, ref.TimelinePoints = 0, 2
	ref.Input = nil
	return ref, true
}

// float32Memory is what precisionSaving reads of a Float32Baseline run: the first device's
// peak bytes in use and the OOM (ok false when the run has no device).
type float32Memory struct {
	peak int64
	oom  *train.OOM
	ok   bool
}

// float32Memory returns the memory of ref, the Float32Baseline of cfg. The baseline is the
// first steps of cfg in float32 without its input pipeline: when cfg has none and the session
// has run (or is running) cfg in float32 (a sweep that varies the precision), that run's
// Result.Prefix is the baseline's result and nothing is simulated; else ref is.
func (s *Session) float32Memory(ctx context.Context, cfg, ref train.Config) (float32Memory, error) {
	if cfg.Input == nil && !cfg.FitFromArrays {
		src := cfg
		src.Precision = "float32"
		if full, ok := s.started(ctx, src); ok && full.Prefix.Steps == ref.Steps && len(full.Prefix.PeakBytesInUse) == len(full.Devices) {
			m := float32Memory{oom: full.Prefix.OOM, ok: len(full.Devices) > 0}
			if m.ok {
				m.peak = full.Prefix.PeakBytesInUse[0]
			}
			return m, nil
		}
	}
	f32, err := s.Simulate(ctx, ref)
	if err != nil {
		return float32Memory{}, err
	}
	m := float32Memory{oom: f32.OOM, ok: len(f32.Devices) > 0}
	if m.ok {
		m.peak = f32.Devices[0].PeakBytesInUse
	}
	return m, nil
}

// precisionSaving compares res (a run of cfg) with f32, its Float32Baseline's run. The note,
// when not empty, says why the saving is outside the seed guide's 30-40%.
func precisionSaving(cfg train.Config, res *train.Result, f32 float32Memory) (s *PrecisionSaving, note string) {
	if !f32.ok {
		return nil, ""
	}
	s = &PrecisionSaving{MixedPeakBytes: res.Devices[0].PeakBytesInUse, Float32PeakBytes: f32.peak}
	if m, err := models.Get(cfg.Model); err == nil {
		b := cfg.Batch
		if len(res.ReplicaBatches) > 0 {
			b = slices.Max(res.ReplicaBatches)
		}
		b = max(b/max(cfg.AccumulationSteps, 1), 1)
		if p, err := m.Plan(models.PlanOptions{Batch: b, Precision: models.PrecisionFloat32, Optimizer: cfg.Optimizer}); err == nil {
			for _, i := range p.Persistent {
				s.FixedBytes += p.Tensors[i].Bytes
			}
			for _, i := range p.Slots {
				s.FixedBytes += p.Tensors[i].Bytes
			}
		}
	}
	if f32.oom != nil {
		s.Reason = "float32 does not fit at this batch (" + f32.oom.Message + "), so the saving is at least what it needed beyond the limit"
		return s, "mixed precision vs float32 peak memory: " + s.Reason
	}
	if s.Float32PeakBytes == 0 {
		return nil, ""
	}
	s.Saving = 1 - float64(s.MixedPeakBytes)/float64(s.Float32PeakBytes)
	s.InBand = s.Saving >= seedSavingLow && s.Saving <= seedSavingHigh
	fixedShare := float64(s.FixedBytes) / float64(s.Float32PeakBytes)
	h := allocator.HumanReadableNumBytes
	// The policy's compute type ("mixed_bfloat16" computes in bfloat16): Keras'
	// Policy.compute_dtype (keras/src/dtype_policies/dtype_policy.py, _parse_name).
	compute := strings.TrimPrefix(cfg.Precision, "mixed_")
	switch {
	case s.InBand:
	case s.Saving < seedSavingLow:
		s.Reason = fmt.Sprintf("float32 variables and optimizer slots (%s, %.0f%% of the float32 peak) do not shrink, and mixed precision adds %s copies of the variables; only activations halve",
			h(s.FixedBytes), 100*fixedShare, compute)
		if fixedShare < 0.25 {
			s.Reason = fmt.Sprintf("activations that Keras keeps in float32 under the mixed policy (softmax, layer norm, loss, the float32 outputs of casts) shrink less than half; variables and slots (%s) stay float32",
				h(s.FixedBytes))
		}
	default:
		s.Reason = fmt.Sprintf("activations dominate the float32 peak (variables and slots are only %s, %.0f%%) and they halve in %s",
			h(s.FixedBytes), 100*fixedShare, compute)
	}
	if !s.InBand {
		note = fmt.Sprintf("%s saves %.0f%% of peak memory against float32 (%s -> %s), outside the 30-40%% the TF guide quotes: %s",
			cfg.Precision, 100*s.Saving, h(s.Float32PeakBytes), h(s.MixedPeakBytes), s.Reason)
	}
	return s, note
}

// Scaling compares a multi-replica run with one replica training alone on one GPU of the same
// kind with the per-replica batch (the largest share), the same precision, accumulation and
// input pipeline: what data parallelism bought.
type Scaling struct {
	// Replicas is the run's replica count; SingleBatch the batch of the one-GPU run.
	Replicas, SingleBatch int
	// SingleStepTime and SingleThroughput are the one-GPU run's median step and samples/s.
	SingleStepTime, SingleThroughput float64
	// Speedup is the run's throughput over SingleThroughput; Efficiency = Speedup / Replicas.
	Speedup, Efficiency float64
	// Single is the one-GPU run's median step by category (Result.Breakdown is the run's).
	Single []train.Share
}

// OneGPUBaseline returns the one-GPU run a multi-replica run of cfg that completed is
// compared with. It keeps what decides a replica's step time (GPU, model, precision, XLA,
// accumulation, input pipeline) and drops what concerns device choice and memory sharing;
// the batch is the largest per-replica share. false when res needs no such comparison.
func OneGPUBaseline(cfg train.Config, res *train.Result) (train.Config, bool) {
	if res.Replicas < 2 || res.StepTime == 0 || res.OOM != nil {
		return train.Config{}, false
	}
	ref := cfg
	ref.Name = cfg.Name + " (1 GPU)"
	ref.Strategy, ref.Device, ref.VisibleDevices, ref.SoftPlacement = "default", "", nil, nil
	ref.StrategyDevices, ref.CrossDeviceOps = nil, ""
	ref.Batch = slices.Max(res.ReplicaBatches)
	ref.GPUCount, ref.Nodes, ref.CUDAVisibleDevices, ref.Processes = 1, 0, nil, nil
	ref.Env = map[string]string{}
	for k, v := range cfg.Env {
		if k != "CUDA_VISIBLE_DEVICES" {
			ref.Env[k] = v
		}
	}
	if l := cfg.Memory.LogicalMiB; len(l) > 0 {
		// A replica on a logical GPU alone: one logical device of its limit.
		ref.Memory.LogicalMiB, ref.Memory.LimitMiB = nil, l[0]
	}
	ref.TraceSteps, ref.TimelinePoints = 0, 2
	return ref, true
}

// scaling compares res with one, its OneGPUBaseline's run at batch singleBatch; nil when the
// baseline ran out of memory or trained nothing (the efficiency stays train's breakdown-based
// estimate).
func scaling(res, one *train.Result, singleBatch int) *Scaling {
	if one.OOM != nil || one.Throughput == 0 {
		return nil
	}
	s := &Scaling{Replicas: res.Replicas, SingleBatch: singleBatch, SingleStepTime: one.StepTime,
		SingleThroughput: one.Throughput, Single: one.Breakdown}
	s.Speedup = finite(res.Throughput / one.Throughput)
	s.Efficiency = s.Speedup / float64(res.Replicas)
	return s
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
