package analysis

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpusim/gpusim/internal/pool"
	"github.com/gpusim/gpusim/train"
)

// RunFunc simulates one configuration; train.Run is the default. Tests and callers that wrap
// the run (a progress bar, a cache) pass their own.
type RunFunc func(context.Context, train.Config) (*train.Result, error)

// OOM is the out-of-memory of a trial, as TF reports it (train.OOM without the allocator log).
type OOM struct {
	// Step is the optimizer update that failed (1-based; 0 = while creating the variables).
	Step int `json:"step"`
	// Op and Tensor are the op and tensor whose allocation failed; Requested its bytes.
	Op        string `json:"op"`
	Tensor    string `json:"tensor"`
	Requested int64  `json:"requested_bytes"`
	// Message is TF's "ResourceExhaustedError: OOM when allocating tensor with shape[...]".
	Message string `json:"message"`
	// Fragmentation is (free - largest free chunk) / free in the pool at the failure.
	Fragmentation float64 `json:"fragmentation"`
}

func newOOM(o *train.OOM) *OOM {
	if o == nil {
		return nil
	}
	return &OOM{Step: o.Step, Op: o.Op, Tensor: o.Tensor, Requested: o.Requested, Message: o.Message,
		Fragmentation: o.Fragmentation}
}

// measure is what a trial keeps of a train.Result: enough to report it, not the timelines.
type measure struct {
	steps, skipped            int
	peak, pool, limit         int64
	firstPeak, steadyPeak     int64
	stepTime, throughput, eff float64
	allReduce, inputStall     float64
	bound                     string
	replicaBatch              int
	oom                       *OOM
	completed                 int
}

// measureResult reads a trial's measure from res; its Diagnosis and Scaling are only there
// when the trial was judged (Session.Run).
func measureResult(res *Result) measure {
	m := measure{
		steps: res.StepsRequested, skipped: res.SkippedSteps, completed: len(res.StepTimes),
		stepTime: res.StepTime, throughput: res.Throughput, eff: res.ScalingEfficiency,
		allReduce: res.AllReduceTime, inputStall: res.InputStallFraction, oom: newOOM(res.OOM),
	}
	for _, d := range res.Devices {
		if d.Idle {
			continue
		}
		m.peak = max(m.peak, d.PeakBytesInUse)
		m.firstPeak = max(m.firstPeak, d.FirstStepPeakBytes)
		m.steadyPeak = max(m.steadyPeak, d.SteadyPeakBytes)
		m.pool = max(m.pool, d.PeakPoolBytes)
		m.limit = max(m.limit, d.BytesLimit)
	}
	if len(res.ReplicaBatches) > 0 {
		m.replicaBatch = res.ReplicaBatches[0]
	}
	if res.Diagnosis != nil {
		m.bound = string(res.Diagnosis.Bound)
	}
	return m
}

// runAll runs fn(i) for i in [0, n) on at most jobs goroutines (internal/pool) and returns
// the error of the lowest i that failed, so that the error does not depend on scheduling.
func runAll(ctx context.Context, n, jobs int, fn func(i int) error) error {
	err := pool.Run(ctx, n, jobs, fn)
	var pe *pool.Error
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// runFunc returns f, or train.Run when f is nil.
func runFunc(f RunFunc) RunFunc {
	if f == nil {
		return train.Run
	}
	return f
}

// TrialError is a run's error (a configuration TF rejects) with the value being tried; the
// *train.FieldError it wraps stays reachable with errors.As.
type TrialError struct {
	What  string // "batch" or "gpus"
	Value int
	Err   error
}

func (e *TrialError) Error() string { return fmt.Sprintf("%s %d: %v", e.What, e.Value, e.Err) }
func (e *TrialError) Unwrap() error { return e.Err }

func errTrial(what string, v int, err error) error {
	return &TrialError{What: what, Value: v, Err: err}
}
