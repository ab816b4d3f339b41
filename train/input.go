package train

// The input pipeline's side of a run: the tf.data host from the hw host profile, the
// pipeline's statistics and epochs in the Result, GPU utilization as nvidia-smi samples it,
// and the input wait per step (what analysis.Diagnose weighs).

import (
	"fmt"
	"slices"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/pipeline"
	"github.com/gpusim/gpusim/sim"
)

// InputStats is the tf.data pipeline's statistics (pipeline.Stats).
type InputStats = pipeline.Stats

type (
	busyMeter = pipeline.UtilizationMeter
	busySpan  = pipeline.Interval
)

// Epoch is one pass over the dataset as the training loop saw it.
type Epoch struct {
	// Index is 1 for the first epoch.
	Index int
	// Steps is the optimizer updates that took their batches from this epoch (the last may
	// straddle two epochs; it counts in the one that delivered its first batch).
	Steps int
	// Seconds is the sum of those steps' times; StepTime their mean.
	Seconds, StepTime float64
	// FromCache says the epoch read from a complete tf.data cache.
	FromCache bool
}

// UtilSeries is one logical GPU's utilization as nvidia-smi reports it: the fraction of each
// Period-second window during which a kernel (or an NCCL collective) ran. Period is
// nvidia-smi's pipeline.NVMLSamplePeriod unless the run lasted more than
// pipeline.DefaultMaxSamples of them: the series is then downsampled as it is made (adjacent
// windows merged, Period doubled until it fits), and Summary still describes the windows of
// NVMLSamplePeriod.
type UtilSeries struct {
	Device  int
	Period  float64
	Samples []float64
	// Summary is the mean, spread and range of the NVMLSamplePeriod windows:
	// pipeline.Summarize(Samples) when the series is not downsampled.
	Summary pipeline.Summary
}

// InputPipeline returns the tf.data configuration of the run: the pipeline config with the
// host's fields it leaves unset taken from the hw host profile (Config.Host), and one copy
// per replica. analysis reads it to choose remedies.
func InputPipeline(cfg Config, replicas int) (pipeline.Config, error) {
	h := hw.DefaultHost()
	if cfg.Host != "" {
		var err error
		if h, err = hw.LookupHost(cfg.Host); err != nil {
			return pipeline.Config{}, &FieldError{Field: "Host", Err: err}
		}
	}
	return inputPipeline(cfg, h, replicas), nil
}

// inputPipeline is InputPipeline on host profile h.
func inputPipeline(cfg Config, h hw.Host, replicas int) pipeline.Config {
	pc := cfg.Input.pipelineConfig(cfg.Batch, cfg.AccumulationSteps, cfg.HostCores, h)
	// MirroredStrategy's distributed dataset: each replica copies its share of the global
	// batch over its own PCIe link at the same time.
	pc.Replicas = max(replicas, 1)
	return pc
}

// addBusy records that rep's GPU ran a kernel over [start, end): into the nvidia-smi meter,
// and, when steps may be replayed, into the step's intervals (relative to its start).
func (r *runner) addBusy(rep *replica, start, end sim.Time) {
	if r.tooLong(end) {
		return
	}
	rep.exec.meter.Add(start, end)
	if r.replay.recordSteps {
		s, e := start-r.stepStart, end-r.stepStart
		if n := len(rep.proof.stepBusyIvs); n > 0 && rep.proof.stepBusyIvs[n-1].End == s {
			// Back to back with the kernel before (a full queue): one busy span, as the
			// meters merge them anyway.
			rep.proof.stepBusyIvs[n-1].End = e
			return
		}
		rep.proof.stepBusyIvs = append(rep.proof.stepBusyIvs, busySpan{Start: s, End: e})
	}
}

// tooLong reports whether t lies past MaxSimulatedTime, and if so stops the run with an error
// wrapping ErrTooLong: the nvidia-smi meter keeps one sample per window of simulated time, so
// simulated time, not events, is what a run with hour-long steps spends memory on.
func (r *runner) tooLong(t sim.Time) bool {
	if t <= MaxSimulatedTime {
		return false
	}
	if r.abort == nil {
		r.abort = fmt.Errorf("%w: step %d of %d ends after %s of simulated time (a step of %s; fewer steps or a cheaper input pipeline simulate a shorter run)",
			ErrTooLong, r.step, r.cfg.Steps, MaxSimulatedTime, t-r.stepStart)
	}
	r.eng.Stop()
	return true
}

// inputResult fills the Result's pipeline statistics, epochs, nvidia-smi series and input wait.
func (r *runner) inputResult(res *Result) {
	for i, rep := range r.replicas {
		var u UtilSeries
		if r.source(rep) != rep {
			u = res.GPUSeries[0] // a copy of replica 0 (replay.go)
		} else {
			samples, period := rep.exec.meter.Series(r.end)
			u = UtilSeries{Period: period.Seconds(), Samples: samples, Summary: rep.exec.meter.Summary()}
			// Replicas in lockstep have equal series: an equal one shares the first's
			// samples, which nobody modifies.
			for j := range i {
				if v := res.GPUSeries[j]; v.Period == u.Period && v.Summary == u.Summary && slices.Equal(v.Samples, u.Samples) {
					u.Samples = v.Samples
					break
				}
			}
		}
		u.Device = rep.id
		res.GPUSeries = append(res.GPUSeries, u)
	}
	if ps, ok := r.feed.input.(pipelineSource); ok {
		st := ps.p.Stats()
		st.BufferLevel = nil // in Result.InputBuffer, cut at the run's end
		res.Input = &st
		res.Epochs = epochs(st.Epochs, res.StepTimes, r.cfg.AccumulationSteps)
	}
	n := len(res.StepTimes)
	if n == 0 || r.oom != nil {
		return
	}
	res.InputWaitPerStep = r.feed.inputWait.Seconds() / float64(len(r.replicas)) / float64(n)
}

// epochs splits the step times by the pipeline epoch each step's first batch came from.
func epochs(eps []pipeline.Epoch, stepTimes []float64, accumulation int) []Epoch {
	var out []Epoch
	step := 0
	for _, e := range eps {
		n := (e.Batches + accumulation - 1) / accumulation
		ep := Epoch{Index: e.Index, FromCache: e.FromCache}
		for ; ep.Steps < n && step < len(stepTimes); step++ {
			ep.Steps++
			ep.Seconds += stepTimes[step]
		}
		if ep.Steps == 0 {
			continue
		}
		ep.StepTime = ep.Seconds / float64(ep.Steps)
		out = append(out, ep)
	}
	return out
}
