package train

import (
	"bytes"
	"slices"

	"github.com/gpusim/gpusim/allocator"
)

// stateAppender is implemented by allocators that can write their complete state (everything
// later allocations depend on: chunk layout, bins, regions, pool size) as canonical bytes.
// Two allocators with equal state bytes answer every future request sequence identically.
type stateAppender interface {
	AppendState(dst []byte) []byte
}

// canFastForward reports whether the step just finished (step k) is provably identical to
// every later one. Nothing random may feed the steps (no input pipeline, no loss-scale skip),
// and every allocator must have ended step k in exactly the state it ended step k-1 in: the
// plans and costs are deterministic, so the same state and the same requests give the same
// step again, forever. Two proofs of equal state are accepted:
//
//   - the allocator writes its state (AppendState) and the bytes are equal;
//   - the allocator is TF's classic BFC (allocator.BFC) and step k added no persistent tensor (the
//     optimizer slots came in an earlier step), took or returned no region (the pool size
//     never changed) and had no failed request (which can move the growth schedule). At the
//     end of every step all step tensors are freed and BFC coalesces free neighbours
//     (tsl bfc_allocator.cc FreeAndMaybeCoalesce), so the state is "the persistent chunks at
//     their addresses, every gap one free chunk, in the same regions": the same at the end of
//     k-1 and k when nothing above changed.
func (r *runner) canFastForward() bool {
	if !r.ffPossible || r.skip(r.step) || r.skip(r.step-1) || r.step <= r.cfg.TraceSteps || r.compilesAfter(r.step) {
		return false
	}
	n := len(r.stepTimes)
	ok := n >= 2 && r.stepTimes[n-1] == r.stepTimes[n-2] && r.breakdowns[n-1] == r.breakdowns[n-2]
	for _, rep := range r.replicas {
		switch a := rep.alloc.(type) {
		case stateAppender:
			rep.state, rep.prevState = a.AppendState(rep.prevState[:0]), rep.state
			if !bytes.Equal(rep.state, rep.prevState) || !slices.Equal(rep.trace, rep.prevTrace) {
				ok = false
			}
		case *allocator.BFC:
			if a.Options().Variant != allocator.Classic || !rep.slotsAtStart || rep.poolChanges != rep.poolChangesAtStart || rep.failures != rep.failuresAtStart {
				ok = false
			}
		default:
			return false
		}
		// prevTrace is now step k's memory trace, the one fastForward replays.
		rep.trace, rep.prevTrace = rep.prevTrace, rep.trace
	}
	return ok
}

// fastForwardable reports whether a can prove its state for canFastForward.
func fastForwardable(a allocator.Allocator) bool {
	switch a.(type) {
	case stateAppender, *allocator.BFC:
		return true
	}
	return false
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
			r.replayBusy(rep, stepStart)
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
