package train

import (
	"bytes"
)

// stateAppender is implemented by allocators that can write their complete state (everything
// later allocations depend on: chunk layout, bins, regions, pool size) as canonical bytes.
// Two allocators with equal state bytes answer every future request sequence identically.
type stateAppender interface {
	AppendState(dst []byte) []byte
}

// canFastForward reports whether the step just finished is provably identical to every later
// one: nothing random feeds the step (no input pipeline, no loss-scale overflows), the previous
// step took the same time split the same way, and every allocator ended both steps in exactly
// the same state. The allocators, the plans and the costs are deterministic, so the same
// state and the same requests give the same step again, forever.
func (r *runner) canFastForward() bool {
	if !r.ffPossible || r.skip(r.step) || r.skip(r.step-1) || r.step <= r.cfg.TraceSteps {
		return false
	}
	n := len(r.stepTimes)
	ok := n >= 2 && r.stepTimes[n-1] == r.stepTimes[n-2] && r.breakdowns[n-1] == r.breakdowns[n-2]
	for _, rep := range r.replicas {
		sa, can := rep.alloc.(stateAppender)
		if !can {
			return false
		}
		rep.state, rep.prevState = sa.AppendState(rep.prevState[:0]), rep.state
		if !bytes.Equal(rep.state, rep.prevState) || !sameTrace(rep.trace, rep.prevTrace) {
			ok = false
		}
		rep.trace, rep.prevTrace = rep.prevTrace, rep.trace
	}
	return ok
}

func sameTrace(a, b []memEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// fastForward appends the remaining steps as copies of the last one: step times, breakdowns,
// all-reduce times, busy time and the memory timeline (the step's memory changes replayed at
// their offsets).
func (r *runner) fastForward() {
	n := len(r.stepTimes)
	dt, bd := r.stepTimes[n-1], r.breakdowns[n-1]
	var ar float64
	if len(r.arTimes) > 0 {
		ar = r.arTimes[len(r.arTimes)-1]
	}
	stepDur := r.eng.Now() - r.stepStart
	arOffset := r.arStart - r.stepStart
	dropped := r.spansDropped - r.droppedAtStart
	start := r.eng.Now()
	for _, rep := range r.replicas {
		rep.stepBusy = rep.busy - rep.busyAtStart
	}
	s := r.step + 1
	for ; s <= r.cfg.Steps && !r.skip(s); s++ {
		r.stepTimes = append(r.stepTimes, dt)
		r.breakdowns = append(r.breakdowns, bd)
		if len(r.replicas) > 1 {
			r.arTimes = append(r.arTimes, ar)
		}
		r.step = s
		stepStart := start
		for _, rep := range r.replicas {
			rep.busyAtStart = rep.busy
			rep.busy += rep.stepBusy
			// The trace of the last step is in prevTrace after canFastForward's swap.
			for _, m := range rep.prevTrace {
				rep.sampler.record(start+m.at, m.inUse, m.pool)
			}
		}
		if len(r.replicas) > 1 {
			for _, rp := range r.replicas {
				r.spans = append(r.spans, Span{Device: rp.id, Track: TrackAllReduce, Name: r.allReduce.Impl, Step: s - 1,
					Start: (stepStart + arOffset).Seconds(), Dur: ar})
			}
		}
		r.spansDropped += dropped
		start += stepDur
		r.recordStepSeries(stepStart, start)
		r.ffSteps++
	}
	// Move the clock over the replayed steps; a step the loss scale skips is simulated again.
	r.step = s - 1
	r.eng.At(start, func() {
		if r.step < r.cfg.Steps {
			r.step++
			r.startStep()
			return
		}
		r.end = r.eng.Now()
		r.eng.Stop()
	})
}
