package train

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/models"
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

// addPrecisionSaving runs cfg again in float32 and compares peak memory, for mixed-precision
// runs that completed. Outside the seed guide's 30-40% it adds a note saying why.
func addPrecisionSaving(ctx context.Context, cfg Config, res *Result) {
	if cfg.Precision == "float32" || res.OOM != nil || len(res.Devices) == 0 || res.StepTime == 0 {
		return
	}
	ref := cfg
	ref.Name = cfg.Name + " (float32)"
	ref.Precision = "float32"
	ref.Steps = min(cfg.Steps, 2) // slots exist from step 1's update; step 2 is the steady state
	ref.TraceSteps, ref.TimelinePoints = 0, 2
	ref.Input = nil // memory of the GPU does not depend on the host pipeline
	f32, err := Run(ctx, ref)
	if err != nil || len(f32.Devices) == 0 {
		return
	}
	s := &PrecisionSaving{MixedPeakBytes: res.Devices[0].PeakBytesInUse, Float32PeakBytes: f32.Devices[0].PeakBytesInUse}
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
	if f32.OOM != nil {
		s.Reason = "float32 does not fit at this batch (" + f32.OOM.Message + "), so the saving is at least what it needed beyond the limit"
		res.PrecisionSaving = s
		res.Notes = append(res.Notes, "mixed precision vs float32 peak memory: "+s.Reason)
		return
	}
	if s.Float32PeakBytes == 0 {
		return
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
	res.PrecisionSaving = s
	if !s.InBand {
		res.Notes = append(res.Notes, fmt.Sprintf("%s saves %.0f%% of peak memory against float32 (%s -> %s), outside the 30-40%% the TF guide quotes: %s",
			cfg.Precision, 100*s.Saving, h(s.Float32PeakBytes), h(s.MixedPeakBytes), s.Reason))
	}
}
