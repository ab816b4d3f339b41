package train

import (
	"slices"

	"github.com/gpusim/gpusim/sim"
)

// Fast-forward under kernel-time jitter (replicas.go: stepJitterCV). Jitter only scales a
// replica's kernel times; it never changes what a replica's allocator is asked: each replica
// runs its plan's ops one after the other (an op allocates when it starts and frees when it
// ends, the next op is issued after it), the all-reduce is a barrier whose buffers each
// replica allocates and frees in TF's fixed order (runPackStages), and neither the shared host
// lanes of the one runtime (hostIssue) nor Horovod's overlapped buckets (allReduceTime)
// allocate anything: they only move times. So once canFastForward's structural BFC proof holds
// (the step added no persistent tensor, took or returned no region, had no failed request),
// every later step asks each allocator the same requests in the same order from the same state
// and gets the same memory figures; only the times differ, by the draws.
//
// Those times are kept statistically: jitterWindow proven steps are simulated in full, their
// records kept (windowStep), and the later steps replay them in turn (the j-th replayed step
// takes record j mod jitterWindow), so the run's step times, breakdown, throughput, slowest-
// replica wait and Horovod's exposed all-reduce come out as the window's. The proof of equal
// allocator state needs TF's classic BFC: the equal-bytes proof (stateAppender) also asks for
// equal step times, which jitter never gives, so with any other allocator the run is simulated
// step by step.

// jitterWindow is the number of fully simulated steps whose records the replay cycles
// through. A step's time is the slowest replica's, the maximum of the replicas' lognormal
// factors (CV stepJitterCV = 1.14%): its spread is below that CV, so the mean of 64 i.i.d.
// steps has a standard error under 1.14%/sqrt(64) = 0.14% of the step time, well inside the
// 0.5% the differential test allows (TestJitterFastForwardMatchesFullSimulation), while
// the window costs 64 simulated steps, a few milliseconds, once per run.
const jitterWindow = 64

// windowStep is what the replay of one jittered step records, as fastForward records a
// repeated step: the per-step records, the step's length and all-reduce, and per simulated
// replica the busy time (its kernels and memory changes go straight into the replica's
// windowPass).
type windowStep struct {
	dt                  float64
	bd                  [numCats]sim.Time
	kinds               kindTimes
	ar                  float64
	dur, arOffset       sim.Time
	exposed, overlapped float64 // Horovod's, when allReduceTime recorded them
	hasOverlap          bool
	ops                 int
	busy                []sim.Time
}

// jitterState is the window being recorded or complete, with the allocator counters it was
// proven under: a complete window is reused after a simulated step (one the loss scale
// skipped) only while no replica's pool changed and no request failed since.
type jitterState struct {
	win []windowStep
	// pass has one entry per simulated replica: the window's steps recorded so far, complete
	// (its stepTrace built) once win is.
	pass                 []windowPass
	poolChanges, failues []int
}

// resetWindow empties the window and the passes being recorded, keeping their memory.
func (js *jitterState) resetWindow() {
	js.win = js.win[:0]
	for k := range js.pass {
		p := &js.pass[k]
		p.ivs, p.ev, p.ivEnd, p.evEnd, p.busy, p.trace = p.ivs[:0], p.ev[:0], p.ivEnd[:1], p.evEnd[:1], 0, nil
	}
}

// jitterStep runs at the end of a step under jitter: it records the step in the window when
// canFastForward proved it (a step that is not proven empties an incomplete window) and, once
// the window is complete, replays the steps up to the next one the loss scale skips. It
// reports whether it replayed (the replay schedules the next step).
func (r *runner) jitterStep() bool {
	js := &r.replay.jit
	if !r.canFastForward() {
		if len(js.win) < jitterWindow {
			js.resetWindow()
		}
		return false
	}
	if len(js.win) == jitterWindow && !r.countersMatch() {
		js.resetWindow()
	}
	if len(js.win) < jitterWindow {
		if jitterWindow-len(js.win) > r.cfg.Steps-r.step {
			// The window cannot be complete with a step left to replay (a short run): its
			// records would never be read.
			js.resetWindow()
			return false
		}
		js.win = append(js.win, r.windowRecord())
		if len(js.win) < jitterWindow {
			return false
		}
		js.poolChanges, js.failues = js.poolChanges[:0], js.failues[:0]
		for _, rep := range r.active {
			js.poolChanges = append(js.poolChanges, rep.proof.poolChanges)
			js.failues = append(js.failues, rep.proof.failures)
		}
		r.buildPasses()
	}
	return r.replayWindow()
}

// windowRecord records the step just simulated (after canFastForward's trace swap): its
// figures, and each replica's kernels and memory changes appended to its pass, shifted by the
// window's steps before it.
func (r *runner) windowRecord() windowStep {
	w := windowStep{dur: r.eng.Now() - r.stepStart, arOffset: r.sync.arStart - r.stepStart, ops: r.rec.stepOps}
	w.dt, _ = r.rec.stepTimes.last()
	w.bd, _ = r.rec.breakdowns.last()
	w.kinds, _ = r.rec.kindBDs.last()
	w.ar, _ = r.rec.arTimes.last()
	if m := &r.sync.multi; m.overlap != nil && len(m.exposed) > 0 {
		w.exposed, w.overlapped, w.hasOverlap = m.exposed[len(m.exposed)-1], m.overlapped[len(m.overlapped)-1], true
	}
	js := &r.replay.jit
	for len(js.pass) < len(r.active) {
		js.pass = append(js.pass, windowPass{ivEnd: []int{0}, evEnd: []int{0}})
	}
	var off sim.Time // the window's steps before this one
	for i := range js.win {
		off += js.win[i].dur
	}
	for k, rep := range r.active {
		b := rep.exec.busy - rep.exec.busyAtStart
		w.busy = append(w.busy, b)
		ps := &js.pass[k]
		if len(js.win) == 0 {
			// Every step of the window makes the same memory changes (the allocator proof)
			// and about as many kernel spans: room for the whole window at once, rather than
			// the garbage of growing to it.
			ps.ivs = slices.Grow(ps.ivs, jitterWindow*len(rep.proof.stepBusyIvs)*9/8)
			ps.ev = slices.Grow(ps.ev, jitterWindow*len(rep.proof.prevTrace))
		}
		for _, iv := range rep.proof.stepBusyIvs {
			ps.ivs = append(ps.ivs, busySpan{Start: iv.Start + off, End: iv.End + off})
		}
		for _, m := range rep.proof.prevTrace {
			ps.ev = append(ps.ev, memEvent{at: m.at + off, inUse: m.inUse, pool: m.pool})
		}
		ps.busy += b
		ps.ivEnd, ps.evEnd = append(ps.ivEnd, len(ps.ivs)), append(ps.evEnd, len(ps.ev))
	}
	return w
}

// replayWindow replays the steps after the current one up to the next one the loss scale
// skips (or the last), the j-th of them as window record j mod jitterWindow: the per-step
// records as cycling runs, each replica's busy time, nvidia-smi windows and memory timeline as
// whole windows repeated plus the leading part of one more, the spans and per-step
// utilization as one ReplayedSteps. The replay stops before a step that would end past
// MaxSimulatedTime: that one is simulated, and the run stops where a simulated one would.
func (r *runner) replayWindow() bool {
	win := r.replay.jit.win
	start := r.eng.Now()
	first := r.step + 1
	var period sim.Time // one pass over the window
	for i := range win {
		period += win[i].dur
	}
	// The steps that end by MaxSimulatedTime (a kernel ends by its step's end): the first
	// one past it is simulated, and tooLong stops the run there.
	limit := r.cfg.Steps - first + 1
	if period > 0 {
		room := MaxSimulatedTime - start
		fits, left := int(room/period)*len(win), room%period
		for i := 0; i < len(win) && win[i].dur <= left; i++ {
			fits, left = fits+1, left-win[i].dur
		}
		limit = min(limit, fits)
	}
	count := 0
	for count < limit && !r.sched.skip(first+count) {
		count++
	}
	if count == 0 {
		return false
	}
	full, rest := count/len(win), count%len(win)
	var restDur sim.Time
	for i := range rest {
		restDur += win[i].dur
	}
	total := sim.Time(full)*period + restDur
	dts := make([]float64, len(win))
	ars := make([]float64, len(win))
	bds := make([][numCats]sim.Time, len(win))
	kinds := make([]kindTimes, len(win))
	rs := ReplayedSteps{FirstStep: first - 1, Steps: count, Start: start, Window: make([]ReplayedStep, len(win)),
		AllReduceName: r.sync.allReduce.Impl}
	ops := 0
	for i := range win {
		w := &win[i]
		dts[i], ars[i], bds[i], kinds[i] = w.dt, w.ar, w.bd, w.kinds
		rs.Window[i] = ReplayedStep{Period: w.dur, AllReduceOffset: w.arOffset, AllReduce: w.ar}
		n := full
		if i < rest {
			n++
		}
		ops += n * w.ops
	}
	r.rec.stepTimes.addCycle(dts, count)
	r.rec.arTimes.addCycle(ars, count)
	r.rec.breakdowns.addCycle(bds, count)
	r.rec.kindBDs.addCycle(kinds, count)
	if m := &r.sync.multi; win[0].hasOverlap {
		for j := range count {
			w := &win[j%len(win)]
			m.exposed = append(m.exposed, w.exposed)
			m.overlapped = append(m.overlapped, w.overlapped)
		}
	}
	for k, rep := range r.active {
		ps := &r.replay.jit.pass[k]
		rep.exec.meter.AddPeriodic(start, period, full, ps.ivs)
		rep.stats.sampler.replay(start, period, full, ps.trace)
		var restBusy sim.Time
		for i := range rest {
			restBusy += win[i].busy[k]
		}
		if rest > 0 {
			at := start + sim.Time(full)*period
			rep.exec.meter.AddPeriodic(at, restDur, 1, ps.ivs[:ps.ivEnd[rest]])
			rep.stats.sampler.replay(at, restDur, 1, newStepTrace(ps.trace.ev[:ps.evEnd[rest]]))
		}
		busy := sim.Time(full)*ps.busy + restBusy
		last := win[(count-1)%len(win)].busy[k]
		rep.exec.busy += busy
		rep.exec.busyAtStart = rep.exec.busy - last
		rs.Devices = append(rs.Devices, rep.id)
		for i := range win {
			b := 0.0
			if win[i].dur > 0 {
				b = float64(win[i].busy[k]) / float64(win[i].dur)
			}
			rs.Window[i].Busy = append(rs.Window[i].Busy, b)
		}
	}
	r.rec.replayed = append(r.rec.replayed, rs)
	r.rec.spansDropped += ops
	r.rec.ffSteps += count
	r.step = first + count - 1
	r.resumeAt(start + total)
	return true
}

// windowPass is one replica's pass over the complete window as one step of the replay
// machinery: the kernels and memory changes of the window's steps, each shifted by the steps
// before it; ivEnd[i] and evEnd[i] count those of the first i steps.
type windowPass struct {
	ivs          []busySpan
	ev           []memEvent
	trace        *stepTrace // of ev, once the window is complete
	ivEnd, evEnd []int
	busy         sim.Time
}

// buildPasses completes each replica's windowPass once the window is.
func (r *runner) buildPasses() {
	for k := range r.replay.jit.pass[:len(r.active)] {
		ps := &r.replay.jit.pass[k]
		ps.trace = newStepTrace(ps.ev)
	}
}

// ReplayedStep is one step of a jittered fast-forward's window (ReplayedSteps.Window): its
// length, its all-reduce (offset from the step's start, seconds) and each replica's busy
// fraction (ReplayedSteps.Devices' order).
type ReplayedStep struct {
	Period, AllReduceOffset sim.Time
	AllReduce               float64
	Busy                    []float64
}
