package train

import (
	"fmt"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/sim"
)

// replicaMemory is what a replica holds in its allocator: the live tensors of the step (by plan
// tensor index), the variables, slots and accumulators allocated once, and the all-reduce's
// buffers.
type replicaMemory struct {
	live   []allocator.Handle
	isLive []bool
	// variables, slots and accumulators, allocated once
	persistent []allocator.Handle
	slotsDone  bool
	extra      []allocator.Handle // all-reduce output buffers, freed at the end of the step
	packBufs   []allocator.Handle // live all-reduce buffers by index into gradSync.packBufs (-1: none)
	// the copy-based reduction's buffer on the reducing replica
	reduceExtra    allocator.Handle
	hasReduceExtra bool
}

// memStats is what a replica's memory did, for its Device in the Result: the timeline, the
// profiles of steps 1 and 2, the peaks, the pool's growth, and the all-reduce's and the
// accumulators' bytes.
type memStats struct {
	sampler  *sampler
	profiles [2]*sampler // memory within steps 1 and 2, relative to the step's start
	// firstPeak is the most in use up to the end of step 1 (variables, autotuning scratch
	// and the first step), steadyPeak the most in use after it.
	firstPeak, steadyPeak int64
	growth                []PoolChange
	dropped               int
	lastPool              int64
	// multi-GPU memory: bytes in use when the all-reduce started and at its peak (latest
	// update), the gradient accumulators
	arStartBytes int64
	arPeakBytes  int64
	accumBytes   int64
}

type memEvent struct {
	at          sim.Time // offset from the step start
	inUse, pool int64
}

// profilePoints is the resolution of Device.StepProfile.
const profilePoints = 120

// maxGrowth caps Device.Growth so that a run that regrows its pool every step (garbage
// collection returning regions) stays O(1) in memory.
const maxGrowth = 64

func (r *runner) allocPersistent(rep *replica, p *plan, ti int, op string) bool {
	h, ok := rep.alloc.Allocate(p.Tensors[ti].Bytes)
	if !ok {
		r.fail(rep, p.Tensors[ti], op)
		return false
	}
	rep.mem.persistent = append(rep.mem.persistent, h)
	r.recordMem(rep, p.Tensors[ti].Bytes)
	return true
}

// allocSlots allocates the optimizer's slot variables once, at the first update: Keras creates
// them in optimizer.build at the first apply_gradients. It reports false on an OOM.
func (r *runner) allocSlots(rep *replica, p *plan, op string) bool {
	if rep.mem.slotsDone {
		return true
	}
	for _, ti := range p.Slots {
		if !r.allocPersistent(rep, p, ti, op) {
			return false
		}
	}
	rep.mem.slotsDone = true
	return true
}

// allocOpTensor allocates tensor ti of the pending op; false when the step ran out of memory.
func (r *runner) allocOpTensor(rep *replica, ti int) bool {
	op := &rep.exec.pend
	if rep.mem.isLive[ti] || op.plan.isPers[ti] {
		return true
	}
	t := &op.plan.Tensors[ti]
	h, ok := rep.alloc.Allocate(t.Bytes)
	if !ok && t.Role == models.Workspace {
		// cuDNN scratch space is requested without retry_on_failure: BFC logs "The caller
		// indicates that this is not a failure, but may mean that there could be
		// performance gains if more memory were available" (bfc_allocator.cc) and the
		// autotuner picks an algorithm that fits; the op runs without the workspace.
		r.rec.workspaceMisses++
		rep.proof.failures++
		if r.rec.workspaceMisses == 1 {
			r.notes = append(r.notes, fmt.Sprintf("step %d, op %s: cuDNN workspace of %s did not fit; TF logs \"the caller indicates that this is not a failure\" and falls back to an algorithm without it (the simulated op time is unchanged)", r.step, op.name, allocator.HumanReadableNumBytes(t.Bytes)))
		}
		return true
	}
	if !ok {
		r.fail(rep, *t, op.name)
		return false
	}
	rep.mem.live[ti], rep.mem.isLive[ti] = h, true
	r.recordMem(rep, t.Bytes)
	return true
}

// autotune runs cuDNN's first-run profiling of a convolution (models.AutotuneScratch): the
// redzone copy of the written buffer if it fits, then each candidate's workspace in turn,
// freed after it. A request that does not fit fails that candidate only (TF allocates
// scratch with retry_on_failure false; the BFC allocator may still extend a growing pool or
// give free regions back first, as it does for any request).
func (r *runner) autotune(rep *replica, at *models.AutotuneScratch, opName string) {
	rep.exec.tuned[at.Key] = true
	r.rec.autotuned++
	var wrap allocator.Handle
	wrapped := false
	if at.Wrap > 0 {
		if h, ok := rep.alloc.Allocate(at.Wrap); ok {
			wrap, wrapped = h, true
			r.recordMem(rep, at.Wrap)
		}
	}
	for _, b := range at.Workspace {
		if b < 0 {
			r.rec.autotuneSkips++
			continue
		}
		h, ok := rep.alloc.Allocate(b)
		if !ok {
			r.rec.autotuneSkips++
			rep.proof.failures++
			if r.rec.autotuneSkips == 1 {
				r.notes = append(r.notes, fmt.Sprintf("step %d, op %s: cuDNN autotuning skipped an algorithm whose %s of scratch did not fit (not an error in TF: the candidate is marked failed and a smaller-workspace one is used)", r.step, opName, allocator.HumanReadableNumBytes(b)))
			}
			continue
		}
		r.recordMem(rep, b)
		rep.alloc.Free(h)
		r.recordMem(rep, 0)
	}
	if wrapped {
		rep.alloc.Free(wrap)
		r.recordMem(rep, 0)
	}
}

// freeTensors frees the plan tensors of the list still alive on rep (an op's dead inputs, a
// micro-step's gradients). Frees only lower the bytes in use (and never change the pool): one
// memory sample after them keeps the timeline's maxima.
func (r *runner) freeTensors(rep *replica, tensors []int) {
	freed := false
	for _, ti := range tensors {
		if rep.mem.isLive[ti] {
			rep.alloc.Free(rep.mem.live[ti])
			rep.mem.isLive[ti] = false
			freed = true
		}
	}
	if freed {
		r.recordMem(rep, 0)
	}
}

func (r *runner) freeStepTensors(rep *replica) {
	freed := len(rep.mem.extra) > 0
	for _, h := range rep.mem.extra {
		rep.alloc.Free(h)
	}
	rep.mem.extra = rep.mem.extra[:0]
	for ti, l := range rep.mem.isLive {
		if l {
			rep.alloc.Free(rep.mem.live[ti])
			rep.mem.isLive[ti] = false
			freed = true
		}
	}
	if freed {
		r.recordMem(rep, 0)
	}
}

func (r *runner) fail(rep *replica, t models.Tensor, op string) {
	o := rep.alloc.LastOOM()
	res := &OOM{Step: r.step, MicroStep: rep.exec.micro + 1, Op: op, Tensor: t.Name, Device: rep.device,
		Allocator: rep.alloc.Name(), Requested: t.Bytes, Time: r.eng.Now().Seconds()}
	if r.step == 0 {
		res.MicroStep = 0
	}
	msg := allocator.TensorMessage(tensorShape(t), tensorDType(t), rep.device, rep.alloc.Name())
	res.Message = "ResourceExhaustedError: " + msg
	if o != nil {
		res.Log = o.Log
		res.Fragmentation = o.Fragmentation
		res.Regions = o.Regions
		res.Time += o.Wait.Seconds()
		res.Wait = o.Wait.Seconds()
	}
	r.oom = res
	r.end = r.eng.Now()
	r.eng.Stop()
}

// tfDType is DataTypeString of a dtype (tensorflow/core/framework/types.cc).
func tfDType(d models.DType) string {
	switch d {
	case models.Float16:
		return "half"
	case models.BFloat16:
		return "bfloat16"
	case models.Int32:
		return "int32"
	}
	return "float"
}

// usageReader is implemented by allocators that give their bytes in use and pool size
// without computing the rest of their statistics (allocator.BFC).
type usageReader interface {
	Usage() (inUse, pool int64)
}

// usage returns rep's allocator's bytes in use and pool size.
func usage(a allocator.Allocator) (inUse, pool int64) {
	if u, ok := a.(usageReader); ok {
		return u.Usage()
	}
	s := a.Stats()
	return s.BytesInUse, s.PoolBytes
}

// recordMem records rep's memory after a request of request bytes (0 after frees): into its
// memStats, and for the replay proofs into the step's trace and the pool-change count.
func (r *runner) recordMem(rep *replica, request int64) {
	inUse, pool := usage(rep.alloc)
	now := r.eng.Now()
	if rep.stats.record(now, r.stepStart, r.step, inUse, pool, request) {
		rep.proof.poolChanges++
	}
	if r.replay.recordSteps {
		rep.proof.trace = append(rep.proof.trace, memEvent{at: now - r.stepStart, inUse: inUse, pool: pool})
	}
}

// record notes the replica's bytes in use and pool size at now, in step (1-based, 0 before
// the first) that started at stepStart, after a request of request bytes (0 for frees): the
// timeline, the peaks, the profile of steps 1 and 2 and the pool's growth. It reports whether
// the pool changed.
func (s *memStats) record(now, stepStart sim.Time, step int, inUse, pool, request int64) bool {
	s.sampler.record(now, inUse, pool)
	if step <= 1 {
		s.firstPeak = max(s.firstPeak, inUse)
	} else {
		s.steadyPeak = max(s.steadyPeak, inUse)
	}
	if step >= 1 && step <= len(s.profiles) {
		s.profiles[step-1].record(now-stepStart, inUse, pool)
	}
	if pool == s.lastPool {
		return false
	}
	if len(s.growth) < maxGrowth {
		s.growth = append(s.growth, PoolChange{Time: now.Seconds(), Step: step, PoolBytes: pool,
			RegionBytes: pool - s.lastPool, Request: request})
	} else {
		s.dropped++
	}
	s.lastPool = pool
	return true
}
