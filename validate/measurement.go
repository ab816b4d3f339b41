package validate

import (
	"fmt"
	"strings"

	"github.com/gpusim/gpusim/scenarios"
	"github.com/gpusim/gpusim/train"
)

// Metric is what a measurement's Value measures.
type Metric string

const (
	// Throughput is samples per second summed over the GPUs, in steady state.
	Throughput Metric = "throughput"
	// StepTime is the seconds of one optimizer update (a fit over host arrays: its epochs'
	// mean step, train.FitStepTime).
	StepTime Metric = "step_time"
	// RunMean is the throughput averaged over a whole run of RunSteps updates, its one-off
	// costs included (runMeanThroughput).
	RunMean Metric = "run_mean"
	// TimeToTrain is the seconds a run of RunSteps updates takes, its one-off costs included.
	TimeToTrain Metric = "time_to_train"
)

// metrics lists the metrics a set file may name.
var metrics = []Metric{Throughput, StepTime, RunMean, TimeToTrain}

// lowerIsFaster reports whether a smaller figure is a faster run.
func (m Metric) lowerIsFaster() bool { return m == StepTime || m == TimeToTrain }

// Measurement is one observed figure and the scenario that reproduces it.
type Measurement struct {
	// Source is the family the row comes from ("dle", "h200-keras", a user file's name);
	// Set the group of rows scored together ("dle 1-GPU", "h200-keras host-fed").
	Source, Set string
	// Ref names the file and line it was read from, with its provenance.
	Ref string
	// Framework is what ran it ("TF 1.15 (NGC 20.06-tf1-py3)", "PyTorch 2.11 eager", ...).
	Framework string
	// Label is the measurement's own name for its precision ("amp_fp16", "tf32", "bf16").
	Label string
	// Overrides are the scenario keys the run sets, as --set text, applied in order to
	// train.DefaultConfig.
	Overrides []string
	// Metric and Value are the observed figure; RunSteps the updates of the run whose mean
	// or length a RunMean or TimeToTrain figure gives.
	Metric   Metric
	Value    float64
	RunSteps int
	// Version groups measurements taken together (one README table, one recording run), so
	// that ratios pair like with like.
	Version string
	// Note is free text (how the XLA flag is known, what stands in for what).
	Note string
	// Table says the row came from a measurement-set file (ReadSet): its rows are grouped by
	// GPU and GPU count, each precision may run at its own batch in a ratio, and its
	// single-GPU rows get leave-one-out folds. The recordings' rows are grouped by batch.
	Table bool

	// Config is the run the overrides describe (Name and Steps are set when it runs).
	Config train.Config
}

// build applies m.Overrides to the defaults and checks the result; an error names the
// override.
func (m *Measurement) build() error {
	s := scenarios.New(m.Ref)
	if err := s.SetAll(m.Overrides); err != nil {
		return err
	}
	m.Config = s.Config
	return nil
}

// run is the configuration Score simulates for m.
func (m Measurement) run(steps int) train.Config {
	c := m.Config
	c.Steps = steps
	c.Name = m.Ref
	return c
}

// GPU, Model, GPUs, Batch (per GPU, one micro-batch), Accumulation and XLA describe the run.
func (m Measurement) GPU() string   { return m.Config.GPU }
func (m Measurement) Model() string { return m.Config.Model }
func (m Measurement) GPUs() int     { return max(m.Config.GPUCount, 1) }
func (m Measurement) Accumulation() int {
	return max(m.Config.AccumulationSteps, 1)
}
func (m Measurement) Batch() int { return m.Config.Batch / m.GPUs() / m.Accumulation() }
func (m Measurement) XLA() bool  { return m.Config.XLA }
func (m Measurement) Precision() string {
	return m.Config.Precision
}

// Describe is a one-line name of a row's configuration.
func (m Measurement) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", m.GPU(), m.Model())
	if m.GPUs() > 1 {
		fmt.Fprintf(&b, " x%d", m.GPUs())
	}
	fmt.Fprintf(&b, " b%d", m.Batch())
	if m.Accumulation() > 1 {
		fmt.Fprintf(&b, "x%d", m.Accumulation())
	}
	fmt.Fprintf(&b, " %s xla=%s", m.Label, onOff(m.XLA()))
	return b.String()
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
