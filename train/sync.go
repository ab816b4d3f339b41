package train

import (
	"fmt"

	"github.com/gpusim/gpusim/collective"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/sim"
)

// gradSync is how the replicas meet every step: the interconnect, the gradient all-reduce
// planned once (TF's pack stages and buffers, or Horovod's fused buckets in multiState), NCCL's
// communicator buffers, and the step's two barriers (the all-reduce after the backward passes,
// the end of the step after the optimizer).
type gradSync struct {
	topo  collective.Topology
	multi multiState
	// ncclBuffers: NCCL's communicator buffers are allocated (at the first all-reduce)
	ncclBuffers bool
	allReduce   collective.GradientAllReduce
	packBufs    []collective.Buffer // every buffer the all-reduce stages allocate
	packStages  []packStage         // the stages with buffer names resolved to indices
	gradSizes   []int64             // one replica's gradient sizes, optimizer order
	done        int                 // replicas finished with the current step
	atBarrier   int
	arStart     sim.Time // when the step's all-reduce started
}

// packStage is one stage of the packed all-reduce: buffers (indices into gradSync.packBufs) to
// allocate, then to free (-1 = the gradients).
type packStage struct {
	name        string
	alloc, free []int
}

// setupAllReduce prices the gradient all-reduce once (every update moves the same bytes) with
// the cross-device ops MirroredStrategy selects.
func (r *runner) setupAllReduce() error {
	if len(r.replicas) < 2 {
		return nil
	}
	p := r.replicas[0].plans[0]
	grads := make([]int64, len(p.Gradients))
	elem := 4
	for i, ti := range p.Gradients {
		grads[i] = p.Tensors[ti].Bytes
		if r.mirroredCompression() && p.Tensors[ti].DType == models.Float32 {
			// tf_cnn_benchmarks' compact gradient transfer: the NCCL all-reduce (and the
			// packs) carry each float32 gradient's float16 cast (Config.HorovodCompression).
			grads[i], elem = grads[i]/2, 2
		}
	}
	impl, warn, err := r.mach.tfd.crossDeviceOps(r.cfg.CrossDeviceOps)
	if err != nil {
		return err
	}
	if warn != "" {
		r.notes = append(r.notes, "tf.distribute: "+warn)
	}
	t := r.sync.topo
	for _, rep := range r.replicas {
		t.Physical = append(t.Physical, r.mach.tfd.logical[rep.logical].GPU)
	}
	packs := r.cfg.NumPacks
	if r.cfg.Strategy == "horovod" {
		// Horovod reduces the gradients in place, fused in its own persistent buffer
		// (replicas.go), not through TF's concat-and-split packer.
		packs = 0
	}
	ar, err := collective.PlanGradientAllReduce(t, grads, collective.GradientOptions{Impl: impl,
		Pack: collective.PackOptions{NumPacks: packs, ElemBytes: elem}})
	if err != nil {
		return fmt.Errorf("plan all-reduce: %w", err)
	}
	outOfPlace(&ar, grads, r.cfg.AccumulationSteps > 1)
	r.sync.gradSizes = grads
	r.sync.allReduce = ar
	index := map[string]int{collective.GradientsName: -1}
	for _, st := range ar.Pack.Stages {
		ps := packStage{name: st.Name}
		for _, b := range st.Alloc {
			index[b.Name] = len(r.sync.packBufs)
			ps.alloc = append(ps.alloc, len(r.sync.packBufs))
			r.sync.packBufs = append(r.sync.packBufs, b)
		}
		for _, name := range st.Free {
			i, ok := index[name]
			if !ok {
				return fmt.Errorf("plan all-reduce: stage %s frees unknown buffer %q", st.Name, name)
			}
			ps.free = append(ps.free, i)
		}
		r.sync.packStages = append(r.sync.packStages, ps)
	}
	for _, w := range ar.Warnings {
		r.notes = append(r.notes, "all-reduce: "+w)
	}
	return nil
}

// barrier waits until every replica finished its backward pass, then all-reduces the
// gradients: NcclAllReduce after the whole backward pass (Keras fit does not overlap them),
// with the pack buffers of TF's _ConcatAndSplitPacker allocated on every replica.
func (r *runner) barrier(rep *replica) {
	rep.exec.bwEnd = r.eng.Now()
	r.sync.atBarrier++
	if r.sync.atBarrier < len(r.active) {
		return
	}
	now := r.eng.Now()
	r.sync.arStart = now
	if !r.allocNCCLBuffers() {
		return
	}
	arTime := r.allReduceTime(now)
	for _, rp := range r.active {
		rp.exec.cat[catSync] += now - rp.exec.mark
		rp.exec.mark = now
		rp.stats.arStartBytes = rp.alloc.Stats().BytesInUse
		if len(r.replicas) > 1 && !r.runPackStages(rp) {
			return
		}
		rp := rp
		r.eng.At(now+arTime, func() {
			if r.oom != nil {
				return
			}
			if rp.mem.hasReduceExtra {
				rp.alloc.Free(rp.mem.reduceExtra)
				rp.mem.hasReduceExtra = false
				r.recordMem(rp, 0)
			}
			t := r.eng.Now()
			rp.exec.cat[catAllReduce] += t - rp.exec.mark
			rp.exec.mark = t
			rp.exec.hostT, rp.exec.devFree = t, t
			rp.exec.opIdx = r.plan(rp).optStart
			rp.exec.optimizing = true
			if r.sched.skipThis {
				// LossScaleOptimizer: non-finite gradients skip apply_gradients on all replicas.
				// The slots exist all the same: the optimizer's variables are built before the
				// finite check (Keras 3 builds them with the model's state before the first
				// step; tf.keras's LossScaleOptimizer.apply_gradients creates them before its
				// tf.cond, which cannot create variables).
				if !r.allocSlots(rp, r.plan(rp), "apply_gradients") {
					return
				}
				rp.exec.opIdx = len(r.plan(rp).Ops)
			}
			r.nextOp(rp)
		})
	}
	if len(r.replicas) > 1 {
		r.rec.arTimes.add(arTime.Seconds(), 1)
		for _, rp := range r.replicas {
			r.rec.spans = append(r.rec.spans, Span{Device: rp.id, Track: TrackAllReduce, Name: r.sync.allReduce.Impl, Step: r.step - 1,
				Start: now.Seconds(), Dur: arTime.Seconds()})
			if r.source(rp) == rp {
				r.addBusy(rp, now, now+arTime) // NCCL's kernels count for nvidia-smi
			}
		}
	}
}

// runPackStages allocates and frees the all-reduce's buffers on one replica in TF's order.
// The buffers left at the end (the reduced gradients) are freed with the step's tensors.
func (r *runner) runPackStages(rep *replica) bool {
	p := r.plan(rep)
	bufs := rep.mem.packBufs[:0]
	for range r.sync.packBufs {
		bufs = append(bufs, -1)
	}
	rep.mem.packBufs = bufs
	rep.stats.arPeakBytes = rep.alloc.Stats().BytesInUse
	for _, st := range r.sync.packStages {
		for _, b := range st.alloc {
			h, ok := rep.alloc.Allocate(r.sync.packBufs[b].Bytes)
			if !ok {
				r.fail(rep, models.Tensor{Name: r.sync.packBufs[b].Name, Bytes: r.sync.packBufs[b].Bytes, DType: models.Float32}, r.arOpName()+"/"+st.name)
				return false
			}
			bufs[b] = h
			r.recordMem(rep, r.sync.packBufs[b].Bytes)
			rep.stats.arPeakBytes = max(rep.stats.arPeakBytes, rep.alloc.Stats().BytesInUse)
		}
		if st.name == "allreduce" && !r.allocReduceExtra(rep) {
			return false
		}
		for _, b := range st.free {
			if b < 0 {
				for _, ti := range p.Gradients {
					if rep.mem.isLive[ti] {
						rep.alloc.Free(rep.mem.live[ti])
						rep.mem.isLive[ti] = false
					}
				}
			} else if bufs[b] >= 0 {
				rep.alloc.Free(bufs[b])
				bufs[b] = -1
			}
		}
		if len(st.free) > 0 {
			r.recordMem(rep, 0)
		}
	}
	// The reduced gradients stay until the end of the step; freed in allocation order.
	rep.mem.extra = rep.mem.extra[:0]
	for _, h := range bufs {
		if h >= 0 {
			rep.mem.extra = append(rep.mem.extra, h)
		}
	}
	return true
}
