package pipeline

import (
	"fmt"
	"slices"

	"github.com/gpusim/gpusim/sim"
)

// Consumer is a training loop as the input pipeline sees it, for simulating a pipeline without
// train: each step asks for a batch, runs its kernels on the GPU as soon as the batch is
// there, then spends HostStep on the host (the synchronising loss.item(), Python) before it
// asks for the next one. train does the same with its real step model.
type Consumer struct {
	// Steps to run.
	Steps int
	// GPUFixed + GPUPerElement × (elements in the batch) is the GPU time of a step, seconds.
	GPUFixed, GPUPerElement float64
	// HostStep is host time per step after the GPU finishes, seconds.
	HostStep float64
	// Warmup steps are left out of step-time and utilization figures.
	Warmup int
	// SamplePeriod is the utilization window (NVMLSamplePeriod when zero).
	SamplePeriod sim.Time
}

// Run is the outcome of Simulate.
type Run struct {
	// Stats are the pipeline's statistics at the end.
	Stats Stats
	// Busy lists the GPU's kernel intervals, one per step.
	Busy []Interval
	// StepTimes are the times between consecutive step ends (the first from the start).
	StepTimes []sim.Time
	// Start and End bound the measured part (after warmup).
	Start, End sim.Time
	// StepTimeMean and StepTimeMedian over the measured steps.
	StepTimeMean, StepTimeMedian sim.Time
	// Utilization is the busy fraction of [Start, End); UtilizationSeries its nvidia-smi
	// samples.
	Utilization       float64
	UtilizationSeries []float64
	// SamplesPerSecond is elements trained per second over the measured part.
	SamplesPerSecond float64
	// InputWaitPerStep is the mean time a measured step waited for its batch (Get to GPU).
	InputWaitPerStep sim.Time
}

// Simulate runs cfg against c on a fresh engine with the given seed.
func Simulate(cfg Config, seed uint64, c Consumer) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if c.Steps <= c.Warmup || c.Warmup < 0 {
		return nil, fmt.Errorf("consumer: steps %d must exceed warmup %d >= 0", c.Steps, c.Warmup)
	}
	if c.GPUFixed < 0 || c.GPUPerElement < 0 || c.HostStep < 0 {
		return nil, fmt.Errorf("consumer: negative step time")
	}
	period := c.SamplePeriod
	if period <= 0 {
		period = NVMLSamplePeriod
	}
	e := sim.NewEngine()
	p := New(e, cfg, sim.Stream(seed, "input"))
	r := &Run{Busy: make([]Interval, 0, c.Steps), StepTimes: make([]sim.Time, 0, c.Steps)}
	var (
		step      int
		last      sim.Time
		asked     sim.Time
		elements  int
		waitTotal sim.Time
		next      func()
	)
	next = func() {
		asked = e.Now()
		p.GetBatch(func(ready sim.Time, n int) {
			gpu := sim.FromSeconds(c.GPUFixed + c.GPUPerElement*float64(n))
			end := ready + gpu
			r.Busy = append(r.Busy, Interval{ready, end})
			stepEnd := end + sim.FromSeconds(c.HostStep)
			r.StepTimes = append(r.StepTimes, stepEnd-last)
			if step == c.Warmup-1 {
				r.Start = stepEnd
			}
			if step >= c.Warmup {
				elements += n
				waitTotal += ready - asked
			}
			last = stepEnd
			step++
			e.At(stepEnd, func() {
				if step < c.Steps {
					next()
				}
			})
		})
	}
	next()
	e.Run(-1)
	r.End = last
	r.Stats = p.Stats()
	measured := slices.Clone(r.StepTimes[c.Warmup:])
	var sum sim.Time
	for _, d := range measured {
		sum += d
	}
	r.StepTimeMean = sum / sim.Time(len(measured))
	slices.Sort(measured)
	r.StepTimeMedian = measured[len(measured)/2]
	r.Utilization = Utilization(r.Busy, r.Start, r.End)
	r.UtilizationSeries = UtilizationSeries(r.Busy, r.Start, r.End, period)
	if el := (r.End - r.Start).Seconds(); el > 0 {
		r.SamplesPerSecond = float64(elements) / el
	}
	r.InputWaitPerStep = waitTotal / sim.Time(c.Steps-c.Warmup)
	return r, nil
}
