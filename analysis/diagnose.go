package analysis

import (
	"fmt"

	"github.com/gpusim/gpusim/internal/units"
	"github.com/gpusim/gpusim/pipeline"
	"github.com/gpusim/gpusim/train"
)

// Bound names what limits a training run.
type Bound string

const (
	InputBound         Bound = "input-bound"
	ComputeBound       Bound = "compute-bound"
	CommunicationBound Bound = "communication-bound"
	// CompileBound: XLA recompiles the train step (a new input shape each time) for a
	// significant share of the run, and the GPU idles meanwhile.
	CompileBound Bound = "compile-bound"
)

// UtilizationLabel names the utilization Diagnose weighs: nvidia-smi's utilization.gpu, the
// busy share of each NVML sample window on the physical card (UtilizationSeries). It is not
// the logical device's busy fraction a run's summary reports (several logical GPUs on one
// card, or a window that straddles idle time, make the two differ).
const UtilizationLabel = "nvidia-smi utilization"

// Evidence is what Diagnose weighs: measurements of one run (EvidenceOf reads them from a
// train.Result).
type Evidence struct {
	// Utilization is the GPU's nvidia-smi series (pipeline.UtilizationSeries).
	Utilization []float64
	// UtilizationSummary, when set, describes the series at nvidia-smi's own window in place
	// of Summarize(Utilization): a long run's series is downsampled (train.UtilSeries).
	UtilizationSummary *pipeline.Summary
	// StepTime is the mean step time, seconds.
	StepTime float64
	// InputWait is the mean time per step spent waiting for the next batch, seconds.
	InputWait float64
	// CommTime is the mean time per step spent in collectives that no compute overlaps
	// (all-reduce), seconds.
	CommTime float64
	// BufferEmptyFraction is pipeline.Stats.BufferEmptyFraction.
	BufferEmptyFraction float64
	// CoreBusyFraction is pipeline.Stats.CoreBusyFraction.
	CoreBusyFraction float64
	// CompileTime is the mean time per step the host spent compiling the train step under
	// XLA (the run's compile time over its steps), seconds, the GPU idle meanwhile; Compiles
	// counts the compilations (the first step, then each new input shape).
	CompileTime float64
	Compiles    int
}

// Diagnosis is the verdict with the figures behind it.
type Diagnosis struct {
	Bound Bound
	// Utilization summarises the series.
	Utilization pipeline.Summary
	// InputShare, CommShare and CompileShare are InputWait, CommTime and CompileTime over the
	// step time. With one compile (the first step's, a one-off that a longer run amortizes)
	// the three are taken over the step time without it, the steady state.
	InputShare, CommShare, CompileShare float64
	// LowUtilization and Swinging are the guide's symptoms of a starving GPU: mean
	// utilization under 70%, and samples that swing (stddev >= 10 points or a range >= 30).
	LowUtilization, Swinging bool
	// Evidence says why, one sentence each.
	Evidence []string
}

// Thresholds of Diagnose. The 70% is the guide's ("GPU utilization under 70% with big swings
// usually means the input pipeline is the bottleneck", seed guide, performance section);
// the others are gpusim's choice of "a significant share of the step".
const (
	lowUtilization  = 0.70
	swingStddev     = 0.10
	swingRange      = 0.30
	significantWait = 0.10
)

// Diagnose says whether the run is input-, communication-, compile- or compute-bound:
// whichever of input wait, unoverlapped communication and XLA recompilation takes the
// largest share of the step, if that share is at least 10%; compute-bound otherwise. A GPU is
// called starved (low and swinging utilization, the guide's symptom) only when input wait is
// a significant share of the step: idle time has other causes (XLA compiling, all-reduce).
func Diagnose(ev Evidence) Diagnosis {
	d := Diagnosis{Utilization: pipeline.Summarize(ev.Utilization)}
	if ev.UtilizationSummary != nil {
		d.Utilization = *ev.UtilizationSummary
	}
	step := ev.StepTime
	if ev.Compiles == 1 {
		step -= ev.CompileTime
	}
	if step > 0 {
		d.InputShare = ev.InputWait / step
		d.CommShare = ev.CommTime / step
		if ev.Compiles > 1 {
			d.CompileShare = ev.CompileTime / step
		}
	}
	u := d.Utilization
	d.LowUtilization = len(ev.Utilization) > 0 && u.Mean < lowUtilization
	d.Swinging = u.Stddev >= swingStddev || u.Max-u.Min >= swingRange
	pct := func(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }
	if len(ev.Utilization) > 0 {
		s := fmt.Sprintf("%s averages %s (samples from %s to %s)", UtilizationLabel, pct(u.Mean), pct(u.Min), pct(u.Max))
		switch {
		case d.LowUtilization && d.Swinging && d.InputShare >= significantWait:
			s += ": under 70% and swinging, the usual sign of a starved GPU"
		case d.LowUtilization && d.Swinging:
			s += fmt.Sprintf(": under 70%% and swinging, but input wait is only %s of the step: the GPU is not starved for data", pct(d.InputShare))
		case d.LowUtilization:
			s += ": under 70%"
		}
		d.Evidence = append(d.Evidence, s)
	}
	if ev.Compiles == 1 && ev.CompileTime > 0 {
		d.Evidence = append(d.Evidence, "XLA compiled the train step once, at the first step: a one-off left out of the shares below")
	}
	switch {
	case d.CompileShare >= significantWait && d.CompileShare >= d.InputShare && d.CompileShare >= d.CommShare:
		d.Bound = CompileBound
		d.Evidence = append(d.Evidence,
			fmt.Sprintf("XLA compiled the train step %d times, %s of the step time on average, while the GPU idles", ev.Compiles, pct(d.CompileShare)),
			fmt.Sprintf("input wait is %s and communication %s of the step", pct(d.InputShare), pct(d.CommShare)),
			"each new input shape recompiles: feed fewer distinct shapes (pad or bucket the inputs to a few fixed shapes, drop_remainder=True for the last batch), or turn XLA off (jit_compile=False)")
	case d.InputShare >= significantWait && d.InputShare >= d.CommShare:
		d.Bound = InputBound
		d.Evidence = append(d.Evidence,
			fmt.Sprintf("each step waits %s for its batch, %s of the step", units.FormatSeconds(ev.InputWait), pct(d.InputShare)),
			fmt.Sprintf("the consumer found the prefetch buffer empty at %s of its requests", pct(ev.BufferEmptyFraction)))
		if ev.CoreBusyFraction > 0 {
			d.Evidence = append(d.Evidence, fmt.Sprintf("the map kept %s of the host's cores busy", pct(ev.CoreBusyFraction)))
		}
	case d.CommShare >= significantWait:
		d.Bound = CommunicationBound
		d.Evidence = append(d.Evidence, fmt.Sprintf("all-reduce takes %s per step, %s of the step, with no compute to hide it", units.FormatSeconds(ev.CommTime), pct(d.CommShare)))
	default:
		d.Bound = ComputeBound
		d.Evidence = append(d.Evidence, fmt.Sprintf("input wait is %s and communication %s of the step: the GPU's own work sets the pace", pct(d.InputShare), pct(d.CommShare)))
	}
	return d
}

// EvidenceOf reads the evidence of a run from its measurements; false when no step
// completed or the run ran out of memory (nothing to diagnose).
func EvidenceOf(res *train.Result) (Evidence, bool) {
	if len(res.StepTimes) == 0 || res.OOM != nil {
		return Evidence{}, false
	}
	var mean float64
	for _, s := range res.StepTimes {
		mean += s
	}
	mean /= float64(len(res.StepTimes))
	ev := Evidence{
		StepTime:    mean,
		InputWait:   res.InputWaitPerStep,
		CommTime:    res.AllReduceTime,
		CompileTime: res.XLACompileTime / float64(len(res.StepTimes)),
		Compiles:    res.XLACompiles,
	}
	if in := res.Input; in != nil {
		ev.BufferEmptyFraction, ev.CoreBusyFraction = in.BufferEmptyFraction, in.CoreBusyFraction
	}
	// The GPUs of a data-parallel run move together: the first one's series speaks for all.
	if len(res.GPUSeries) > 0 {
		u := &res.GPUSeries[0]
		ev.Utilization = u.Samples
		if len(u.Samples) > 0 && u.Period > pipeline.NVMLSamplePeriod.Seconds() {
			// Downsampled: the statistics are of nvidia-smi's own windows.
			ev.UtilizationSummary = &u.Summary
		}
	}
	if len(ev.Utilization) == 0 {
		// A run shorter than one nvidia-smi window: its one busy fraction.
		ev.Utilization = []float64{res.GPUUtilization}
	}
	return ev, true
}

// DiagnoseResult is Diagnose of a run's evidence; nil when there is nothing to diagnose.
func DiagnoseResult(res *train.Result) *Diagnosis {
	ev, ok := EvidenceOf(res)
	if !ok {
		return nil
	}
	d := Diagnose(ev)
	return &d
}
