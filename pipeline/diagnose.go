package pipeline

import (
	"fmt"
	"slices"

	"github.com/gpusim/gpusim/internal/units"
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

// Evidence is what Diagnose weighs. train fills it from its result; Run.Evidence fills it
// for a pipeline-only simulation.
type Evidence struct {
	// Utilization is the GPU's nvidia-smi series (UtilizationSeries).
	Utilization []float64
	// StepTime is the mean step time, seconds.
	StepTime float64
	// InputWait is the mean time per step spent waiting for the next batch, seconds.
	InputWait float64
	// CommTime is the mean time per step spent in collectives that no compute overlaps
	// (all-reduce), seconds.
	CommTime float64
	// BufferEmptyFraction is Stats.BufferEmptyFraction.
	BufferEmptyFraction float64
	// CoreBusyFraction is Stats.CoreBusyFraction.
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
	Utilization Summary
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
	d := Diagnosis{Utilization: Summarize(ev.Utilization)}
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

// Evidence returns the evidence of a pipeline-only run.
func (r *Run) Evidence() Evidence {
	return Evidence{
		Utilization:         r.UtilizationSeries,
		StepTime:            r.StepTimeMean.Seconds(),
		InputWait:           r.InputWaitPerStep.Seconds(),
		BufferEmptyFraction: r.Stats.BufferEmptyFraction,
		CoreBusyFraction:    r.Stats.CoreBusyFraction,
	}
}

// Change is one remedy for an input-bound run, as scenario overrides.
type Change struct {
	// Name says what it does ("map(num_parallel_calls=AUTOTUNE)").
	Name string
	// Set are the scenario keys and values (`--set` form) that make the change.
	Set []string
	// Apply makes the change on a pipeline config.
	Apply func(*Config)
}

// Candidates returns the changes worth trying on cfg, in the guide's order: parallel map,
// prefetch, both, cache (memory if the dataset fits the RAM budget, else a file), a batch
// twice as large. Changes already in force are left out.
func Candidates(cfg Config) []Change {
	var out []Change
	par := Change{Name: "map(num_parallel_calls=AUTOTUNE)", Set: []string{"input.map.parallel_calls=autotune"},
		Apply: func(c *Config) { c.ParallelCalls = Autotune }}
	pre := Change{Name: "prefetch(AUTOTUNE)", Set: []string{"input.prefetch=autotune"},
		Apply: func(c *Config) { c.Prefetch = Autotune }}
	needPar := cfg.ParallelCalls != Autotune && int(cfg.ParallelCalls) < cfg.Host.Cores-cfg.Host.BusyCores
	needPre := cfg.Prefetch != Autotune && cfg.Prefetch < 2
	if needPar {
		out = append(out, par)
	}
	if needPre {
		out = append(out, pre)
	}
	if needPar && needPre {
		out = append(out, Change{Name: par.Name + " + " + pre.Name, Set: append(slices.Clone(par.Set), pre.Set...),
			Apply: func(c *Config) { par.Apply(c); pre.Apply(c) }})
	}
	if cfg.Cache == "" || cfg.Cache == "none" {
		if float64(cfg.Records)*float64(cfg.ElementBytes) <= 0.5*float64(cfg.Host.MemoryBytes) {
			out = append(out, Change{Name: "cache() in memory", Set: []string{"input.cache=memory"},
				Apply: func(c *Config) { c.Cache = "memory" }})
		} else {
			out = append(out, Change{Name: "cache(filename) on local disk", Set: []string{"input.cache=file"},
				Apply: func(c *Config) { c.Cache = "file" }})
		}
	}
	out = append(out, Change{Name: "batch twice as large", Set: []string{fmt.Sprintf("batch=%d", 2*cfg.Batch)},
		Apply: func(c *Config) { c.Batch *= 2 }})
	return out
}

// Trial is one candidate change, re-simulated.
type Trial struct {
	Change Change
	// SamplesPerSecond after the change; Gain is its ratio to the baseline's, minus one.
	SamplesPerSecond, Gain float64
}

// Rank re-simulates each change with eval (which returns samples per second: train's
// throughput, or Simulate's for a pipeline alone) and returns the trials, best first, with
// the baseline's throughput. Ties keep the candidates' order.
func Rank(cfg Config, changes []Change, eval func(Config) (float64, error)) ([]Trial, float64, error) {
	return RankSets(changes, func(ch *Change) (float64, error) {
		if ch == nil {
			return eval(cfg)
		}
		c := cfg
		ch.Apply(&c)
		return eval(c)
	})
}

// RankSets is Rank for a caller that re-simulates a change its own way (train's run
// through the scenario overrides in Change.Set): eval(nil) is the baseline, eval(&ch) the run
// with ch made.
func RankSets(changes []Change, eval func(ch *Change) (float64, error)) ([]Trial, float64, error) {
	base, err := eval(nil)
	if err != nil {
		return nil, 0, fmt.Errorf("baseline: %w", err)
	}
	trials := make([]Trial, 0, len(changes))
	for _, ch := range changes {
		v, err := eval(&ch)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", ch.Name, err)
		}
		g := 0.0
		if base > 0 {
			g = v/base - 1
		}
		trials = append(trials, Trial{Change: ch, SamplesPerSecond: v, Gain: g})
	}
	slices.SortStableFunc(trials, func(a, b Trial) int {
		switch {
		case a.SamplesPerSecond > b.SamplesPerSecond:
			return -1
		case a.SamplesPerSecond < b.SamplesPerSecond:
			return 1
		}
		return 0
	})
	return trials, base, nil
}

// SimulateEval returns an eval for Rank that runs Simulate with consumer c and seed.
func SimulateEval(seed uint64, c Consumer) func(Config) (float64, error) {
	return func(cfg Config) (float64, error) {
		r, err := Simulate(cfg, seed, c)
		if err != nil {
			return 0, err
		}
		return r.SamplesPerSecond, nil
	}
}
