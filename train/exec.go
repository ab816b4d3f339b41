package train

import (
	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/framework"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/sim"
)

func (r *runner) run() (*Result, error) {
	if r.oom != nil {
		return r.result(), nil
	}
	// Variables are created before the first step (model build), then gradient accumulators.
	for _, rep := range r.active {
		p := rep.plans[0]
		rep.mem.persistent = make([]allocator.Handle, 0, len(p.Persistent)+len(p.Slots)+len(p.Gradients)+1)
		for _, ti := range p.Persistent {
			if !r.allocPersistent(rep, p, ti, "variables") {
				return r.result(), nil
			}
		}
		if r.cfg.Strategy == "horovod" && len(r.replicas) > 1 {
			// Horovod's fusion buffer, allocated through TF's allocator at the first fused
			// all-reduce and kept (horovod/tensorflow/mpi_ops.cc, PersistentBuffer of
			// HOROVOD_FUSION_THRESHOLD bytes).
			h, ok := rep.alloc.Allocate(horovodFusionBytes)
			if !ok {
				r.fail(rep, models.Tensor{Name: "horovod_fusion_buffer", Bytes: horovodFusionBytes, DType: models.Float32}, "HorovodAllreduce")
				return r.result(), nil
			}
			rep.mem.persistent = append(rep.mem.persistent, h)
			r.recordMem(rep, horovodFusionBytes)
		}
		if r.cfg.AccumulationSteps > 1 {
			// One float32 accumulator per trainable variable (tf.Variable(tf.zeros_like(v)) in
			// the usual gradient-accumulation train_step).
			for _, ti := range p.Gradients {
				if !r.allocPersistent(rep, p, ti, "gradient_accumulators") {
					return r.result(), nil
				}
				rep.stats.accumBytes += p.Tensors[ti].Bytes
			}
		}
	}
	r.step = 1
	r.startStep()
	r.eng.Run(-1)
	if r.abort != nil {
		return nil, r.abort
	}
	return r.result(), nil
}

func (r *runner) startStep() {
	r.stepStart = r.eng.Now()
	r.sync.done, r.sync.atBarrier = 0, 0
	r.sched.skipThis = r.sched.skip(r.step)
	r.rec.stepOps = 0
	r.drawJitter()
	for _, rep := range r.active {
		rep.exec.micro = 0
		rep.exec.optimizing = false
		rep.exec.cat = [numCats]sim.Time{}
		rep.exec.kinds = kindTimes{}
		rep.exec.mark = r.stepStart
		rep.proof.trace = rep.proof.trace[:0]
		rep.proof.stepBusyIvs = rep.proof.stepBusyIvs[:0]
		rep.exec.busyAtStart = rep.exec.busy
		if r.step <= len(rep.stats.profiles) {
			st := rep.alloc.Stats()
			rep.stats.profiles[r.step-1].record(0, st.BytesInUse, st.PoolBytes)
		}
		rep.proof.poolChangesAtStart, rep.proof.failuresAtStart, rep.proof.slotsAtStart = rep.proof.poolChanges, rep.proof.failures, rep.mem.slotsDone
		r.compileThenStart(rep)
	}
}

// startMicro waits for the micro-step's input batch, then runs its ops.
func (r *runner) startMicro(rep *replica) {
	k := (r.step-1)*r.cfg.AccumulationSteps + rep.exec.micro
	r.feed.whenBatch(rep.id, k, func() {
		now := r.eng.Now()
		if now > rep.exec.mark {
			r.rec.spans = append(r.rec.spans, Span{Device: rep.id, Track: TrackInput, Name: "wait for batch", Step: r.step - 1,
				Start: rep.exec.mark.Seconds(), Dur: (now - rep.exec.mark).Seconds()})
		}
		rep.exec.cat[catInput] += now - rep.exec.mark
		r.feed.inputWait += now - rep.exec.mark
		rep.exec.mark = now
		rep.exec.opIdx = 0
		rep.exec.hostT, rep.exec.devFree = now, now
		if rep.exec.micro == 0 {
			// Keras fit's host work per step before the step's first op (the GPU waits:
			// it shows as launch time).
			rep.exec.hostT += sim.FromSeconds(r.stepHost())
		}
		rep.exec.opsStart = now
		if r.replay.proven != nil {
			r.replayGPUPart(rep, now)
			return
		}
		r.nextOp(rep)
	})
}

func (r *runner) plan(rep *replica) *plan { return rep.plans[rep.exec.micro] }

func (r *runner) final(rep *replica) bool { return rep.exec.micro == len(rep.plans)-1 }

// nextOp runs the op at rep.opIdx of the current micro-step. Forward and backward ops run in
// every micro-step; at the first optimizer op the backward pass is over (endBackward); the
// optimizer ops run after the all-reduce, in the last micro-step only.
func (r *runner) nextOp(rep *replica) {
	if r.oom != nil {
		return
	}
	p := r.plan(rep)
	if rep.exec.opIdx == p.optStart && !rep.exec.optimizing {
		r.endBackward(rep)
		return
	}
	if rep.exec.opIdx == len(p.Ops) {
		r.endStep(rep)
		return
	}
	i := rep.exec.opIdx
	op := &p.Ops[i]
	if op.Phase == models.Optimizer && !r.allocSlots(rep, p, op.Name) {
		return
	}
	rep.exec.pend = pendingOp{name: op.Name, alloc: op.Alloc, free: op.Free, cost: p.costs[i], plan: p, tune: op.Autotune}
	r.issue(rep)
}

// pendingOp is the op a replica is issuing or running. then runs at its end; nil means the
// next op of the plan.
type pendingOp struct {
	name        string
	alloc, free []int
	cost        opCost
	plan        *plan
	tune        *models.AutotuneScratch // cuDNN profiling on the op's first run, or nil
	then        func()
}

// issue issues rep.pend: the host spends its issue time, the GPU starts it when it is free and
// the op has been issued. Allocations happen at the start, frees at the end.
func (r *runner) issue(rep *replica) {
	// Logical GPUs carved from one physical GPU share its SMs: with k replicas on the card
	// running the same step in lockstep, each op takes k times as long.
	rep.exec.pend.cost.exec *= sim.Time(rep.share)
	if rep.jitter > 0 {
		// This replica's GPU runs this step's kernels at its own pace (replicas.go).
		rep.exec.pend.cost.exec = sim.Time(float64(rep.exec.pend.cost.exec) * rep.jitter)
	}
	rep.exec.hostT = r.sync.multi.hostIssue(rep.exec.hostT, rep.exec.pend.cost.issue)
	start := max(rep.exec.devFree, rep.exec.hostT)
	if start > r.eng.Now() {
		rep.exec.cat[catLaunch] += start - rep.exec.mark
		rep.exec.mark = start
		r.eng.At(start, rep.onStart)
		return
	}
	r.opStart(rep)
}

func (r *runner) opStart(rep *replica) {
	if r.oom != nil {
		return
	}
	op := &rep.exec.pend
	// The first run of a convolution profiles its algorithms after the op has allocated its
	// output and before the chosen algorithm's workspace is taken.
	tune := op.tune != nil && !rep.exec.tuned[op.tune.Key]
	if tune && !cudnnAutotune(r.cfg.Env) {
		// TF_CUDNN_USE_AUTOTUNE=0: cuDNN's heuristic picks the algorithm without profiling,
		// so no candidate's scratch is ever asked for.
		rep.exec.tuned[op.tune.Key], tune = true, false
	}
	var deferred []int
	for _, ti := range op.alloc {
		if tune && op.plan.Tensors[ti].Role == models.Workspace {
			deferred = append(deferred, ti)
			continue
		}
		if !r.allocOpTensor(rep, ti) {
			return
		}
	}
	if tune {
		r.autotune(rep, op.tune, op.name)
		for _, ti := range deferred {
			if !r.allocOpTensor(rep, ti) {
				return
			}
		}
	}
	rep.exec.busy += op.cost.exec
	r.addBusy(rep, r.eng.Now(), r.eng.Now()+op.cost.exec)
	r.eng.At(r.eng.Now()+op.cost.exec, rep.onEnd)
}

func (r *runner) opEnd(rep *replica) {
	if r.oom != nil {
		return
	}
	now := r.eng.Now()
	op := &rep.exec.pend
	if r.step <= r.cfg.TraceSteps {
		sp := Span{Device: rep.id, Track: TrackCompute, Name: op.name, Step: r.step - 1,
			Start: (now - op.cost.exec).Seconds(), Dur: op.cost.exec.Seconds()}
		r.rec.spans = append(r.rec.spans, sp)
		for _, m := range r.replicas[len(r.active):] {
			// The replicas simulated as copies of this one end the same op at the same time.
			sp.Device = m.id
			r.rec.spans = append(r.rec.spans, sp)
		}
	} else {
		r.rec.spansDropped += r.fan()
	}
	r.rec.stepOps += r.fan()
	rep.exec.kinds[op.cost.kind] += now - rep.exec.mark
	rep.exec.cat[op.cost.cat] += now - rep.exec.mark
	rep.exec.mark = now
	rep.exec.devFree = now
	r.freeTensors(rep, op.free)
	if then := op.then; then != nil {
		op.then = nil
		then()
		return
	}
	rep.exec.opIdx++
	r.nextOp(rep)
}

// endBackward runs after the last backward op of a micro-step: gradients go into the
// accumulators (when accumulating), then the next micro-step or the all-reduce barrier.
func (r *runner) endBackward(rep *replica) {
	p := r.plan(rep)
	after := func() {
		if r.cfg.AccumulationSteps > 1 {
			// The micro-step's gradients are in the accumulators: dead now, on every micro-step
			// (the all-reduce and the optimizer read the accumulators).
			r.freeTensors(rep, p.Gradients)
		}
		if !r.final(rep) {
			// Gradients were added to the accumulators and are dropped; next micro-batch.
			r.freeStepTensors(rep)
			rep.exec.micro++
			r.startMicro(rep)
			return
		}
		r.barrier(rep)
	}
	if r.cfg.AccumulationSteps == 1 {
		after()
		return
	}
	// accumulator += gradient for every variable: read both, write one (one
	// AssignAddVariableOp per variable; XLA fuses them into one kernel), after what the
	// optimizer's code does to each micro-step's gradients (models.OptimizerSpec's MicroStep
	// fields: NVIDIA's TF1 BERT clips, unscales and checks them every micro-step).
	// Every micro-step of every replica adds the same bytes: priced once per run.
	if r.plans.accumCost == nil {
		kernels, passes := len(p.Gradients), 1
		bytes := 3 * float64(r.plans.gradBytes)
		if o, err := models.LookupOptimizer(r.cfg.Optimizer); err == nil {
			per, k := o.MicroStepBytesPerElement, o.MicroStepKernels
			if models.Precision(r.cfg.Precision) == models.MixedFloat16 {
				per, k = per+o.MixedMicroStepBytesPerElement, k+o.MixedMicroStepKernels
			}
			// The gradients are float32: per element bytes are a quarter of theirs.
			bytes += per / 4 * float64(r.plans.gradBytes)
			passes += k
		}
		if r.cfg.XLA {
			kernels = 1
		}
		c, err := r.mach.gpu.Cost(hw.Work{Kind: hw.KindElementwise, Bytes: bytes, Kernels: kernels * passes, TF32: r.cfg.TF32})
		if err != nil {
			panic("train: pricing gradient accumulation: " + err.Error())
		}
		r.plans.accumCost = &opCost{exec: sim.FromSeconds(c.Exec), issue: sim.FromSeconds(c.Issue), cat: catBackward, kind: kindIndex(hw.KindElementwise)}
	}
	rep.exec.pend = pendingOp{name: "accumulate_gradients", plan: p, then: after, cost: *r.plans.accumCost}
	r.issue(rep)
}

// endStep runs when a replica finished its optimizer ops. The step ends when all have.
func (r *runner) endStep(rep *replica) {
	r.freeStepTensors(rep)
	r.sync.done++
	if r.sync.done < len(r.active) {
		return
	}
	now := r.eng.Now()
	var sum [numCats]sim.Time
	for _, rp := range r.active {
		rp.exec.cat[catSync] += now - rp.exec.mark
		rp.exec.mark = now
		for c := range sum {
			sum[c] += rp.exec.cat[c] * sim.Time(r.fan())
		}
	}
	r.rec.stepTimes.add((now - r.stepStart).Seconds(), 1)
	r.recordStepSeries(r.stepStart, now)
	r.rec.breakdowns.add(sum, 1)
	r.rec.kindBDs.add(r.sumKinds(), 1)
	if r.sched.skipThis {
		r.rec.skipped++
	}
	if r.step == PrefixSteps {
		r.recordPrefix()
	}
	if r.step >= r.cfg.Steps {
		// The input pipeline would keep prefetching; the run is over.
		r.end = now
		r.eng.Stop()
		return
	}
	if r.sync.multi.jitterOn {
		if r.jitterStep() {
			return
		}
	} else if r.canFastForward() {
		r.fastForward()
		return
	}
	r.planGPUReplay()
	r.step++
	r.startStep()
}

// stepHost is the host time of a step before its first kernel that the GPU waits for. Under
// TF it is the profile's StepOverhead, amortized over steps_per_execution. Keras 3 on JAX
// (Framework "jax") calls the jitted train step once per batch even with
// steps_per_execution > 1 (keras/src/backend/jax/trainer.py, _make_function loops over
// step_function), each call passing every state array (dispatch.go).
func (r *runner) stepHost() float64 {
	// From numpy arrays the feed carries the whole call (arrayFeed.cost): JAX dispatches
	// the step asynchronously and the host goes on to the next batch.
	if r.fw.Framework == framework.JAX && r.cfg.FitFromArrays && r.cfg.Input == nil {
		return 0
	}
	if r.fw.Framework == framework.JAX {
		return r.mach.gpu.DispatchScale() * jaxDispatch(r.plans.stateArrays)
	}
	return r.mach.gpu.StepOverhead / float64(r.cfg.StepsPerExecution)
}

// replicaExec is where a replica is in its step and what its step took: the micro-step and op
// being run, the host's and the GPU's clocks, the step's time by category and op kind, and the
// GPU's busy time (in nvidia-smi's sample windows too).
type replicaExec struct {
	micro       int             // micro-step being run
	tuned       map[string]bool // convolution shapes cuDNN has profiled on this GPU
	opIdx       int
	optimizing  bool // past the all-reduce: running optimizer ops
	pend        pendingOp
	hostT       sim.Time // when the host has issued the ops so far
	devFree     sim.Time // when the GPU finished the previous op
	mark        sim.Time // start of the interval not yet attributed to a category
	cat         [numCats]sim.Time
	kinds       kindTimes // the step's op time by hw kind (bykind.go)
	busy        sim.Time
	meter       busyMeter // kernel time in nvidia-smi sample windows
	busyAtStart sim.Time  // busy when the step started
	// when the last micro-step's ops started and the backward pass ended (Horovod's
	// overlap, replicas.go)
	opsStart, bwEnd sim.Time
}
