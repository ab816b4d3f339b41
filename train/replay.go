package train

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/collective"
)

// The replay invariants, all checked in this file. A run replays instead of simulating in four
// ways, each only where a proof says the copy is exact (or, under jitter, statistically the
// same):
//
//   - fast-forward (fastforward.go): a step proven identical to every later one
//     (canFastForward) is copied up to the next step the loss scale skips;
//   - the jittered fast-forward (jitter.go): with kernel-time jitter the allocations still
//     repeat (canFastForward's structural proof), only the times differ; a window of proven
//     steps is simulated and the later steps replay it in turn while no pool changed and no
//     request failed since (countersMatch);
//   - an input-fed step's GPU part (fastforward.go): once its batch has arrived, a step of
//     one replica repeats the last one when gpuPartRepeats proves it;
//   - symmetric replicas: replicas proven copies of replica 0 (symmetricProof) are simulated
//     once, replica 0's measurements standing for all (fan, source).
//
// setupReplay decides once, when the run is planned, which of them the run may use; the
// proofs run at the end of each step. Every other part keeps what the proofs read: the
// replicas' stepProof (their step's kernels and memory changes, allocator counters), the
// schedule (skips, compiles) and the records (the last steps' times).

// replay is what the run may replay instead of simulating: whole steps (fast-forward), a
// jittered window of steps, or an input-fed step's GPU part; what newRunner decided may be
// replayed and what the steps so far proved.
type replay struct {
	jit          jitterState // the jittered fast-forward's window (jitter.go)
	ffPossible   bool        // fast-forward is on and every allocator can show its state
	recordSteps  bool        // each step's memory changes and kernels are kept for a replay
	replayInput  bool        // the GPU's part of a step may be replayed after its batch arrives
	proven       *gpuPart    // the GPU's part of the next step, when it repeats the last one
	stepReplayed bool        // the current step's GPU part is a replay
}

// stepProof is what a replica keeps so that its steps can be proven to repeat and replayed
// (replay.go): the step's kernels and memory changes, the previous step's, the allocator's
// state bytes, and the allocator counters at the step's start and now.
type stepProof struct {
	stepBusyIvs []busySpan // this step's kernels, relative to its start
	trace       []memEvent // this step's memory changes, relative to its start
	prevTrace   []memEvent // the previous step's (canFastForward swaps them)
	// the allocator's state bytes at the end of this step and the previous one
	// (stateAppender)
	state, prevState      []byte
	poolChanges, failures int  // pool size changes and failed requests so far
	poolChangesAtStart    int  // poolChanges when the step started
	failuresAtStart       int  // failures when the step started
	slotsAtStart          bool // the optimizer slots existed when the step started
}

// stateAppender is implemented by allocators that can write their complete state (everything
// later allocations depend on: chunk layout, bins, regions, pool size) as canonical bytes.
// Two allocators with equal state bytes answer every future request sequence identically.
type stateAppender interface {
	AppendState(dst []byte) []byte
}

// fastForwardable reports whether a can prove its state for canFastForward.
func fastForwardable(a allocator.Allocator) bool {
	switch a.(type) {
	case stateAppender, *allocator.BFC:
		return true
	}
	return false
}

// setupReplay decides, once the run is planned, what it may replay (above); symmetric lets it
// simulate proven symmetric replicas once.
func (r *runner) setupReplay(symmetric bool) {
	rp := &r.replay
	rp.recordSteps = r.cfg.FastForward
	for _, rep := range r.replicas {
		if !fastForwardable(rep.alloc) {
			rp.recordSteps = false
		}
	}
	// With an input pipeline the steps differ by their wait for a batch; the GPU's part of a
	// step (after the batch) may still be replayed (replayInput), for one replica without
	// accumulation (one wait per step, at its start).
	rp.replayInput = rp.recordSteps && r.feed.input != nil && len(r.replicas) == 1 && r.cfg.AccumulationSteps == 1
	rp.recordSteps = rp.recordSteps && (r.feed.input == nil || rp.replayInput)
	rp.ffPossible = rp.recordSteps && r.feed.input == nil
	if rp.recordSteps {
		r.sizeTraces()
	}
	if r.sync.multi.jitterOn {
		// Jitter makes every step's times different, never its allocations: the steps are
		// fast-forwarded by replaying a window of them (jitter.go), with TF's classic BFC
		// (the equal-bytes proof also asks for equal step times, which jitter never gives).
		for _, rep := range r.active {
			if !classicBFC(rep.alloc) {
				rp.ffPossible = false
			}
		}
	}
	if symmetric && r.symmetricProof() {
		r.active = r.replicas[:1]
	}
}

// classicBFC reports whether a is TF's classic BFC allocator, the one unchangedStep's
// structural proof holds for.
func classicBFC(a allocator.Allocator) bool {
	b, ok := a.(*allocator.BFC)
	return ok && b.Options().Variant == allocator.Classic
}

// unchangedStep is the structural proof of canFastForward for rep's step just ended: its
// allocator is TF's classic BFC and the step added no persistent tensor (the optimizer slots
// existed when it started), took or returned no region and had no failed request.
func (rep *replica) unchangedStep() bool {
	p := &rep.proof
	return classicBFC(rep.alloc) && p.slotsAtStart && p.poolChanges == p.poolChangesAtStart && p.failures == p.failuresAtStart
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
//     k-1 and k when nothing above changed. Step k+1 then starts where step k started and
//     runs it again, whatever step k-1 took (the first step's XLA compile, say).
//
// The structural proof needs nothing of step k-1 but that it ended: step k may follow a step
// the loss scale skipped (which frees its tensors like any step, without the optimizer
// update); the equal-bytes proof compares two steps, so both must be updates.
//
// Steps up to Config.TraceSteps keep every op span, so the replay starts after them: step k
// may be the last traced step (its copies drop the op spans it kept).
func (r *runner) canFastForward() bool {
	// Step k is copied, so it must not compile either (XLA compiles in the first step).
	if !r.replay.ffPossible || r.sched.skip(r.step) || r.step < r.cfg.TraceSteps || r.sched.compilesAfter(r.step-1) {
		return false
	}
	afterSkip := r.sched.skip(r.step - 1)
	_, sameTime := r.rec.stepTimes.last()
	_, sameSplit := r.rec.breakdowns.last()
	ok := true
	for _, rep := range r.active {
		switch a := rep.alloc.(type) {
		case stateAppender:
			// Equal bytes and the same requests at the same times in both steps (the last
			// two steps took the same time, split the same way).
			rep.proof.state, rep.proof.prevState = a.AppendState(rep.proof.prevState[:0]), rep.proof.state
			if afterSkip || !bytes.Equal(rep.proof.state, rep.proof.prevState) || !slices.Equal(rep.proof.trace, rep.proof.prevTrace) || sameTime < 2 || sameSplit < 2 {
				ok = false
			}
		case *allocator.BFC:
			if !rep.unchangedStep() {
				ok = false
			}
		default:
			return false
		}
		// prevTrace is now step k's memory trace, the one fastForward replays.
		rep.proof.trace, rep.proof.prevTrace = rep.proof.prevTrace, rep.proof.trace
		if cap(rep.proof.trace) < len(rep.proof.prevTrace) {
			rep.proof.trace = make([]memEvent, 0, len(rep.proof.prevTrace))
		}
	}
	return ok
}

// gpuPartRepeats reports whether the GPU part of step k just ended (after its batch arrived)
// repeats in step k+1, for a run planGPUReplay may replay (replayInput, step k+1 neither
// skipped nor compiling): everything after the batch arrives is the same when the allocator
// starts the step in the same state (unchangedStep), step k was not skipped either, no step
// from k on compiles, and k is past the steps that keep their op spans (Config.TraceSteps)
// or the last of them. The input pipeline only decides when the step starts.
func (r *runner) gpuPartRepeats() bool {
	return !r.sched.skip(r.step) && r.step >= r.cfg.TraceSteps && !r.sched.compilesAfter(r.step-1) && r.replicas[0].unchangedStep()
}

// countersMatch reports whether a complete jitter window still holds: no simulated replica's
// pool changed and no request failed since it was proven.
func (r *runner) countersMatch() bool {
	for i, rep := range r.active {
		if rep.proof.poolChanges != r.replay.jit.poolChanges[i] || rep.proof.failures != r.replay.jit.failues[i] {
			return false
		}
	}
	return true
}

// Symmetric replicas simulated once. With Config.SymmetricReplicas every replica's kernels
// take their mean time; when, beyond that, every replica runs the same plans from the same
// allocator state on a GPU of its own and nothing is shared between them but the all-reduce
// (priced once, the same on every GPU), each replica's step is an exact copy of the first
// replica's: the same requests at the same times give the same allocator answers, and the
// events of the replicas at one time are processed replica by replica, so replica 0 is never
// behind another. Run then simulates replica 0 only (runner.active) and writes its
// measurements for every replica (its device statistics, timeline, busy time, spans and
// per-step sums times the replica count). The proof (symmetricProof) requires:
//
//   - no per-replica randomness: SymmetricReplicas (no kernel-time jitter);
//   - the same plans: the per-replica batch of every replica is equal (setupPlans shares
//     plans by micro-batch, so the plan pointers are equal);
//   - the same allocator state: allocators of one kind and options, equal statistics before
//     the first tensor, each on a physical GPU of its own (no logical devices sharing a card)
//     that no other process uses, with equal memory in use;
//   - nothing that treats replicas differently: no input pipeline or host feed (the batch
//     arrival is shared and ordered), a host thread per GPU (TF_GPU_THREAD_MODE=gpu_private,
//     or one process per GPU: TF's shared runtime threads issue replica after replica), and
//     no reduction buffer on one replica only (the copy-based all-reduces).
//
// A run that runs out of memory is simulated again in full: at the failure the other replicas
// are behind replica 0 within the op that failed, so their statistics are not its copies.
// TestSymmetricReplicasMatchFullSimulation checks the copies against the full simulation.

// symmetricProof reports whether the replicas are proven to be copies of replica 0 (above).
func (r *runner) symmetricProof() bool {
	n := len(r.replicas)
	if n < 2 || !r.cfg.SymmetricReplicas || r.sync.multi.jitterOn || r.feed.input != nil || r.sync.multi.sharedLanes != nil || len(r.cfg.Processes) > 0 {
		return false
	}
	if r.sync.allReduce.ReduceDeviceExtraBytes > 0 && r.sync.allReduce.Impl != collective.ImplNCCL {
		return false
	}
	first := r.replicas[0]
	phys := map[int]bool{}
	for _, rep := range r.replicas {
		if rep.share != 1 || r.plans.replicaBatches[rep.id] != r.plans.replicaBatches[0] || len(rep.plans) != len(first.plans) {
			return false
		}
		for k := range rep.plans {
			if rep.plans[k] != first.plans[k] {
				return false
			}
		}
		p := r.mach.physicalOf(rep.logical)
		if phys[p] {
			return false
		}
		phys[p] = true
		if !sameAllocator(rep.alloc, first.alloc) || r.mach.devs[p].UsedBytes() != r.mach.devs[r.mach.physicalOf(first.logical)].UsedBytes() ||
			r.mach.devs[p].Spec().TotalBytes != r.mach.devs[r.mach.physicalOf(first.logical)].Spec().TotalBytes {
			return false
		}
	}
	return true
}

// sameAllocator reports whether a and b are allocators of one kind with the same options and
// statistics (both fresh: nothing allocated yet).
func sameAllocator(a, b allocator.Allocator) bool {
	if fmt.Sprintf("%T", a) != fmt.Sprintf("%T", b) || a.Stats() != b.Stats() {
		return false
	}
	if x, ok := a.(*allocator.BFC); ok {
		return reflect.DeepEqual(x.Options(), b.(*allocator.BFC).Options())
	}
	return true
}

// fan is how many replicas each simulated replica stands for: the replica count when the
// replicas are simulated once, else 1.
func (r *runner) fan() int {
	if len(r.active) == 0 {
		return 1 // no replica started (the process failed at GPU initialization)
	}
	return len(r.replicas) / len(r.active)
}

// source is the simulated replica whose measurements stand for rep.
func (r *runner) source(rep *replica) *replica {
	if len(r.active) < len(r.replicas) {
		return r.active[0]
	}
	return rep
}
