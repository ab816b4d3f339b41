package train

import (
	"fmt"
	"sort"

	"github.com/gpusim/gpusim/sim"
)

// result assembles the Result from the runner's state after the engine stopped.
func (r *runner) result() *Result {
	cfg := r.cfg
	if r.oom == nil {
		r.notes = append(r.notes, r.sched.lossNotes...)
	} else if done := r.rec.stepTimes.n; done > 0 && r.rec.skipped > 0 {
		// The schedule's notes speak of steps the OOM left unrun; say what did happen.
		r.notes = append(r.notes, fmt.Sprintf("%d of the %d steps completed before the OOM were skipped by loss scaling", r.rec.skipped, done))
	}
	res := &Result{
		Scenario: cfg.Name, Model: cfg.Model, GPU: r.mach.gpu.Name, Precision: cfg.Precision,
		Replicas: len(r.replicas), GPUs: r.mach.visible, GlobalBatch: cfg.Batch, AccumulationSteps: cfg.AccumulationSteps,
		StepsRequested: cfg.Steps, StepTimes: r.rec.stepTimes.expand(), FastForwarded: r.rec.ffSteps,
		StepTime: medianOf(&r.rec.stepTimes), AllReduceTime: medianOf(&r.rec.arTimes), Replayed: r.rec.replayed,
		SkippedSteps: r.rec.skipped, OOM: r.oom, Processes: r.mach.others, Events: r.eng.Processed(),
		Notes: r.notes, Warnings: r.warnings, WorkspaceFallbacks: r.rec.workspaceMisses * r.fan(),
		AutotunedConvs: r.rec.autotuned * r.fan(), AutotuneSkips: r.rec.autotuneSkips * r.fan(),
		Spans: sortSpans(r.rec.spans), SpansDropped: r.rec.spansDropped, Utilization: r.rec.util,
	}
	r.inputBufferResult(res)
	res.ReplicaBatches = r.plans.replicaBatches
	if res.StepTime > 0 {
		res.Throughput = float64(cfg.Batch) / res.StepTime
	}
	elapsed := r.end
	res.Elapsed = elapsed.Seconds()
	busy, usedBytes := r.replicaDevices(res)
	r.idleDevices(res)
	for i, d := range r.mach.devs {
		used, ok := usedBytes[i]
		if !ok {
			used = d.UsedBytes()
		}
		res.Physical = append(res.Physical, PhysicalGPU{Index: i, TotalBytes: d.Spec().TotalBytes, UsedBytes: used})
	}
	if len(r.replicas) > 0 {
		res.GPUUtilization = busy / float64(len(r.replicas))
	}
	if elapsed > 0 && len(r.replicas) > 0 {
		res.InputStallFraction = float64(r.feed.inputWait) / float64(len(r.replicas)) / float64(elapsed)
	}
	r.breakdownResult(res)
	res.ScalingEfficiency = r.scalingEfficiency(res)
	res.AllReduce = r.allReduceInfo()
	if r.mach.tfd != nil {
		res.DeviceTable = r.mach.tfd.ctx.Table()
	}
	r.prefixResult(res)
	r.inputResult(res)
	r.xlaResult(res)
	r.kindResult(res)
	return res
}

// inputBufferResult reports the tf.data pipeline's buffer level over the run.
func (r *runner) inputBufferResult(res *Result) {
	ps, ok := r.feed.input.(pipelineSource)
	if !ok {
		return
	}
	for _, l := range ps.p.Stats().BufferLevel {
		if l.T >= r.end {
			break
		}
		res.InputBuffer = append(res.InputBuffer, LevelPoint{T: l.T.Seconds(), Width: l.Width.Seconds(), Mean: l.Mean})
	}
}

// replicaDevices adds each replica's device to res; it returns the sum of their busy
// fractions and the memory used on the physical GPUs of replicas simulated as copies.
func (r *runner) replicaDevices(res *Result) (busy float64, usedBytes map[int]int64) {
	usedBytes = map[int]int64{}
	for _, rep := range r.replicas {
		// A replica simulated as a copy of replica 0 (replay.go) has its measurements.
		src := r.source(rep)
		d := r.replicaDevice(rep, src)
		if src != rep {
			usedBytes[d.Physical] = r.mach.devs[r.mach.physicalOf(src.logical)].UsedBytes()
		}
		busy += d.BusyFraction
		res.Devices = append(res.Devices, d)
	}
	return busy, usedBytes
}

// replicaDevice is rep's device with the allocator statistics, growth, timelines and busy
// fraction measured on src (rep itself, or the replica it copies).
func (r *runner) replicaDevice(rep, src *replica) Device {
	s := src.alloc.Stats()
	d := Device{
		Name: rep.device, Allocator: rep.alloc.Name(), Physical: r.mach.physicalOf(rep.logical),
		PeakBytesInUse: s.PeakBytesInUse, PeakPoolBytes: s.PeakPoolBytes, BytesLimit: s.BytesLimit,
		BytesInUse: s.BytesInUse, PoolBytes: s.PoolBytes, LargestFreeBlock: s.LargestFreeBlockBytes,
		Growth: src.stats.growth, GrowthDropped: src.stats.dropped, Timeline: src.stats.sampler.timeline(),
		AccumulatorBytes: src.stats.accumBytes, AllReduceStartBytes: src.stats.arStartBytes, AllReducePeakBytes: src.stats.arPeakBytes,
		FirstStepPeakBytes: src.stats.firstPeak, SteadyPeakBytes: src.stats.steadyPeak,
	}
	if src != rep {
		d.Growth = append([]PoolChange(nil), src.stats.growth...)
	}
	switch {
	case r.rec.stepTimes.len() >= 2:
		d.StepProfile, d.StepProfileStep = src.stats.profiles[1].timeline(), 2
	case r.step >= 1:
		d.StepProfile, d.StepProfileStep = src.stats.profiles[0].timeline(), 1
	}
	if r.end > 0 {
		d.BusyFraction = float64(src.exec.busy) / float64(r.end)
	}
	return d
}

// idleDevices adds the visible GPUs no replica runs on: TF creates an allocator on every
// visible GPU (and preallocates it by default) even when only the first runs the model, so
// those GPUs are listed too, idle, holding their pool.
func (r *runner) idleDevices(res *Result) {
	used := map[int]bool{}
	for _, rep := range r.replicas {
		used[rep.logical] = true
	}
	for i, a := range r.mach.allocs {
		if used[i] {
			continue
		}
		s := a.Stats()
		res.Devices = append(res.Devices, Device{
			Name: r.mach.configs[i].Device, Allocator: a.Name(), Idle: true, Physical: r.mach.physicalOf(i),
			PeakBytesInUse: s.PeakBytesInUse, PeakPoolBytes: s.PeakPoolBytes, BytesLimit: s.BytesLimit,
			BytesInUse: s.BytesInUse, PoolBytes: s.PoolBytes, LargestFreeBlock: s.LargestFreeBlockBytes,
			Timeline: []MemPoint{{InUse: s.BytesInUse, MaxInUse: s.BytesInUse, PoolBytes: s.PoolBytes}},
		})
	}
}

// breakdownResult reports the median step's time per category, averaged over the replicas.
func (r *runner) breakdownResult(res *Result) {
	i := medianRun(&r.rec.stepTimes)
	if i < 0 {
		return
	}
	bd := r.rec.breakdowns.at(i)
	n := float64(len(r.replicas))
	for c, name := range categories {
		if c == catCompile && bd[c] == 0 {
			continue // only runs that compiled under XLA show the category
		}
		res.Breakdown = append(res.Breakdown, Share{Category: name, Seconds: float64(bd[c]) / n / float64(sim.Second)})
	}
}

// scalingEfficiency compares the run's throughput with Replicas copies of one replica
// training alone: the step time of one replica without all-reduce or waiting for others is the
// compute part of its breakdown.
func (r *runner) scalingEfficiency(res *Result) float64 {
	if res.Replicas <= 1 || res.StepTime == 0 {
		if res.StepTime == 0 {
			return 0
		}
		return 1
	}
	var alone float64
	for _, s := range res.Breakdown {
		if s.Category != CatSync && s.Category != CatAllReduce {
			alone += s.Seconds
		}
	}
	if alone == 0 {
		return 0
	}
	return finite(alone / res.StepTime)
}

// sortSpans orders spans by start time (stable: at equal starts, in recording order).
func sortSpans(s []Span) []Span {
	sort.SliceStable(s, func(i, j int) bool { return s[i].Start < s[j].Start })
	return s
}

// prefixResult sets res.Prefix: the peaks recordPrefix kept, or the run's own end when it
// ended (out of memory, or at its last step) before step PrefixSteps did.
func (r *runner) prefixResult(res *Result) {
	if r.cfg.Input != nil || r.cfg.FitFromArrays {
		return
	}
	p := Prefix{Steps: min(r.cfg.Steps, PrefixSteps)}
	for i, d := range res.Devices {
		peak := d.PeakBytesInUse
		if r.rec.prefixDone && i < len(r.rec.prefixPeaks) {
			peak = r.rec.prefixPeaks[i]
		}
		p.PeakBytesInUse = append(p.PeakBytesInUse, peak)
	}
	if !r.rec.prefixDone {
		p.OOM = res.OOM
	}
	res.Prefix = p
}
