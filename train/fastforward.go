package train

import (
	"fmt"

	"github.com/gpusim/gpusim/sim"
)

// sizeTraces gives each replica's step trace room for the memory changes of one step (one per
// tensor an op allocates, one per op that frees, the variables and slots), so that recording
// it rarely grows the slice (the all-reduce's buffers may add a few).
func (r *runner) sizeTraces() {
	for _, rep := range r.active {
		n := 16
		for _, p := range rep.plans {
			n += len(p.Persistent) + len(p.Slots) + len(p.Ops)
			for _, op := range p.Ops {
				n += len(op.Alloc)
			}
		}
		rep.proof.trace = make([]memEvent, 0, n)
	}
}

// fastForward replays the steps up to the next one the loss scale skips (or the last) as
// copies of the step just simulated, in O(1) per stretch rather than per step: the per-step
// records grow by one run (steprecord.go), each GPU's busy time and nvidia-smi windows by the
// step's kernels repeated (pipeline.UtilizationMeter.AddPeriodic), its memory timeline by the
// step's memory changes repeated (sampler.replay), and the spans and per-step utilization of
// the stretch are one ReplayedSteps that Result.VisitSpans and VisitUtilization expand.
func (r *runner) fastForward() {
	dt, _ := r.rec.stepTimes.last()
	bd, _ := r.rec.breakdowns.last()
	kinds, _ := r.rec.kindBDs.last()
	ar, _ := r.rec.arTimes.last()
	stepDur := r.eng.Now() - r.stepStart
	// A replayed step is past Config.TraceSteps: it drops the op spans the step kept or dropped.
	dropped := r.rec.stepOps
	start := r.eng.Now()
	first := r.step + 1
	count := 0
	for first+count <= r.cfg.Steps && !r.sched.skip(first+count) {
		count++
	}
	if r.replayTooLong(first, count, start, stepDur) {
		return
	}
	if count > 0 {
		r.rec.stepTimes.add(dt, count)
		r.rec.breakdowns.add(bd, count)
		r.rec.kindBDs.add(kinds, count)
		rs := ReplayedSteps{FirstStep: first - 1, Steps: count, Start: start, Period: stepDur}
		if len(r.replicas) > 1 {
			r.rec.arTimes.add(ar, count)
			rs.AllReduceName, rs.AllReduceOffset, rs.AllReduce = r.sync.allReduce.Impl, r.sync.arStart-r.stepStart, ar
		}
		for _, rep := range r.replicas {
			if src := r.source(rep); src != rep {
				// A copy of replica 0, simulated once: its figures are replica 0's.
				rs.Devices = append(rs.Devices, rep.id)
				rs.Busy = append(rs.Busy, rs.Busy[0])
				continue
			}
			stepBusy := rep.exec.busy - rep.exec.busyAtStart
			rep.exec.busyAtStart = rep.exec.busy + sim.Time(count-1)*stepBusy
			rep.exec.busy += sim.Time(count) * stepBusy
			rep.exec.meter.AddPeriodic(start, stepDur, count, rep.proof.stepBusyIvs)
			// The trace of the last step is in prevTrace after canFastForward's swap.
			rep.stats.sampler.replay(start, stepDur, count, newStepTrace(rep.proof.prevTrace))
			busy := 0.0
			if stepDur > 0 {
				busy = float64(stepBusy) / float64(stepDur)
			}
			rs.Devices = append(rs.Devices, rep.id)
			rs.Busy = append(rs.Busy, busy)
		}
		r.rec.replayed = append(r.rec.replayed, rs)
		r.rec.spansDropped += dropped * count
		r.rec.ffSteps += count
	}
	// Move the clock over the replayed steps; a step the loss scale skips is simulated again.
	r.step = first + count - 1
	r.resumeAt(start + sim.Time(count)*stepDur)
}

// resumeAt schedules, at the end of replayed steps, the next simulated step, or the end of
// the run when the replayed steps were the last.
func (r *runner) resumeAt(at sim.Time) {
	r.eng.At(at, func() {
		if r.step < r.cfg.Steps {
			r.step++
			r.startStep()
			return
		}
		r.end = r.eng.Now()
		r.eng.Stop()
	})
}

// replayTooLong stops the run (tooLong) when a kernel of the count steps replayed from
// first, starting at start, would end past MaxSimulatedTime: at the first such step, on the
// first replica whose kernel it is, as replaying step by step would.
func (r *runner) replayTooLong(first, count int, start, stepDur sim.Time) bool {
	hit, at := -1, sim.Time(0)
	for _, rep := range r.active {
		if len(rep.proof.stepBusyIvs) == 0 {
			continue
		}
		end := rep.proof.stepBusyIvs[len(rep.proof.stepBusyIvs)-1].End
		// The first j with start + j*stepDur + end > MaxSimulatedTime.
		j := 0
		if room := MaxSimulatedTime - start - end; room >= 0 {
			if stepDur <= 0 {
				continue
			}
			j = int(room/stepDur) + 1
		}
		if j < count && (hit < 0 || j < hit) {
			hit, at = j, start+sim.Time(j)*stepDur+end
		}
	}
	if hit < 0 {
		return false
	}
	r.step = first + hit
	return r.tooLong(at)
}

// ReplayedSteps is a stretch of fast-forwarded steps: Steps copies of one step, the first
// (0-based index FirstStep) starting at Start, each lasting Period. Their spans and per-step
// utilization are not stored one by one; Result.VisitSpans and VisitUtilization give them.
type ReplayedSteps struct {
	FirstStep, Steps int
	Start, Period    sim.Time
	// AllReduceName is the all-reduce span's name (empty with one replica); it starts
	// AllReduceOffset after each step's start and lasts AllReduce seconds.
	AllReduceName   string
	AllReduceOffset sim.Time
	AllReduce       float64
	// Devices are the replicas (Span.Device), Busy each one's busy fraction of every step.
	Devices []int
	Busy    []float64
	// Window, when set, is the jittered fast-forward's window (jitter.go): step j of the
	// stretch is Window[j mod len(Window)], which then gives its Period, all-reduce and Busy.
	Window []ReplayedStep `json:",omitempty"`
}

// step returns step j's length, all-reduce offset and length, and busy fractions.
func (rs *ReplayedSteps) step(j int) (sim.Time, sim.Time, float64, []float64) {
	if len(rs.Window) == 0 {
		return rs.Period, rs.AllReduceOffset, rs.AllReduce, rs.Busy
	}
	w := &rs.Window[j%len(rs.Window)]
	return w.Period, w.AllReduceOffset, w.AllReduce, w.Busy
}

// visit calls span for each span of the stretch, in the order the step-by-step run records
// them after sorting by start: each step's step spans, then its all-reduce spans.
func (rs *ReplayedSteps) visit(span func(Span)) {
	st := rs.Start
	for j := range rs.Steps {
		if len(rs.Window) == 0 {
			st = rs.Start + sim.Time(j)*rs.Period
		}
		period, arOffset, ar, _ := rs.step(j)
		step := rs.FirstStep + j
		stepSpans := func() {
			for _, d := range rs.Devices {
				span(Span{Device: d, Track: TrackStep, Name: fmt.Sprintf("step %d", step+1), Step: step, Start: st.Seconds(), Dur: period.Seconds()})
			}
		}
		arSpans := func() {
			if rs.AllReduceName == "" {
				return
			}
			for _, d := range rs.Devices {
				span(Span{Device: d, Track: TrackAllReduce, Name: rs.AllReduceName, Step: step, Start: (st + arOffset).Seconds(), Dur: ar})
			}
		}
		if arOffset > 0 {
			stepSpans()
			arSpans()
		} else {
			arSpans()
			stepSpans()
		}
		st += period
	}
}

// visitSpans calls fn for each span of the run, the replayed stretches' included, in time
// order.
func (r *Result) visitSpans(fn func(Span)) {
	i := 0
	for k := range r.Replayed {
		rs := &r.Replayed[k]
		t := rs.Start.Seconds()
		for ; i < len(r.Spans) && r.Spans[i].Start <= t; i++ {
			fn(r.Spans[i])
		}
		rs.visit(fn)
	}
	for ; i < len(r.Spans); i++ {
		fn(r.Spans[i])
	}
}

// visitUtilization calls fn for each per-step utilization point, the replayed stretches'
// included, in the order the step-by-step run records them.
func (r *Result) visitUtilization(fn func(UtilPoint)) {
	i := 0
	for k := range r.Replayed {
		rs := &r.Replayed[k]
		t := rs.Start.Seconds()
		for ; i < len(r.Utilization) && r.Utilization[i].T < t; i++ {
			fn(r.Utilization[i])
		}
		st := rs.Start
		for j := range rs.Steps {
			if len(rs.Window) == 0 {
				st = rs.Start + sim.Time(j)*rs.Period
			}
			period, _, _, busy := rs.step(j)
			for d, dev := range rs.Devices {
				fn(UtilPoint{Device: dev, T: st.Seconds(), Busy: busy[d]})
			}
			st += period
		}
	}
	for ; i < len(r.Utilization); i++ {
		fn(r.Utilization[i])
	}
}

// gpuPart is what a step of an input-fed run does once its batch has arrived, kept from a
// step proven to repeat (the allocator proof of canFastForward): its time by category and by
// op kind, the GPU's busy time and kernels and the memory changes (offsets from the batch's
// arrival), the ops it ran.
type gpuPart struct {
	cat   [numCats]sim.Time // the input wait excluded
	kinds kindTimes
	dur   sim.Time // from the batch's arrival to the step's end
	busy  sim.Time
	ivs   []busySpan
	trace *stepTrace
	ops   int
}

// planGPUReplay decides, at the end of step k of a run fed by tf.data, whether step k+1's
// GPU part is a copy of step k's (the proof is gpuPartRepeats, replay.go) and keeps it. A
// replayed step leaves the allocator untouched, so the proof carries over to the steps after
// it.
func (r *runner) planGPUReplay() {
	replayed := r.replay.stepReplayed
	r.replay.stepReplayed = false
	if !r.replay.replayInput || r.sched.skip(r.step+1) || r.sched.compilesAfter(r.step) {
		r.replay.proven = nil
		return
	}
	if replayed && r.replay.proven != nil {
		return
	}
	r.replay.proven = nil
	if !r.gpuPartRepeats() {
		return
	}
	rep := r.replicas[0]
	wait := rep.exec.cat[catInput]
	g := &gpuPart{cat: rep.exec.cat, kinds: rep.exec.kinds, dur: r.eng.Now() - r.stepStart - wait, busy: rep.exec.busy - rep.exec.busyAtStart, ops: r.rec.stepOps}
	g.cat[catInput] = 0
	for _, iv := range rep.proof.stepBusyIvs {
		g.ivs = append(g.ivs, busySpan{Start: iv.Start - wait, End: iv.End - wait})
	}
	ev := make([]memEvent, len(rep.proof.trace))
	for i, m := range rep.proof.trace {
		ev[i] = memEvent{at: m.at - wait, inUse: m.inUse, pool: m.pool}
	}
	g.trace = newStepTrace(ev)
	r.replay.proven = g
}

// replayGPUPart runs the proven GPU part for rep, whose batch arrived at a: the busy time,
// kernels and memory changes at their offsets, the op spans dropped, the step's end at
// a + dur.
func (r *runner) replayGPUPart(rep *replica, a sim.Time) {
	g := r.replay.proven
	if r.tooLong(a + g.dur) {
		return
	}
	wait := rep.exec.cat[catInput]
	rep.exec.cat = g.cat
	rep.exec.cat[catInput] = wait
	rep.exec.kinds = g.kinds
	rep.exec.busy += g.busy
	rep.exec.meter.AddPeriodic(a, g.dur, 1, g.ivs)
	rep.stats.sampler.replay(a, g.dur, 1, g.trace)
	r.rec.spansDropped += g.ops
	r.replay.stepReplayed = true
	r.rec.ffSteps++
	rep.exec.mark = a + g.dur
	r.eng.At(a+g.dur, func() { r.endStep(rep) })
}
