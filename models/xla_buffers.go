package models

// XLA memory: what the allocator sees when the step is one compiled executable.
//
// XLA's buffer assignment (xla/service/buffer_assignment.cc) gives every temporary of the
// compiled step (activations kept for backward, gradients, cuDNN/cuBLAS scratch, everything
// that is neither a parameter nor an output aliased to one) an offset in one temp allocation,
// sharing offsets between values whose live ranges do not overlap; the GPU runtime asks the
// allocator for that one buffer per execution (gpu_executable.cc). Real Keras 3 on JAX shows it
// byte for byte: the BFC's largest_alloc_size is the compiled step's temp_size_in_bytes
// rounded to the BFC's 256-byte granule in all 13 recorded configs (testdata/h200/keras).
// The parameters and optimizer state are donated and aliased (outputs reuse their buffers), so
// they stay the variables' own allocations, and the input batch is an argument.
//
// Under a memory limit XLA rematerializes (xla/service/hlo_rematerialization.cc, run by
// gpu_compiler.cc with the limit xla_gpu_memory_limit_slop_factor percent of the device's
// memory, default 95): it drops values it can recompute from values still live and recomputes
// them where backward reads them. Real ResNet-50 FP32 under a 20.97 GiB limit: b400 "only
// reduced to 19.77GiB, down from 30.10GiB originally" and runs; b416 reduces to 20.89GiB and
// then fails to allocate its 20.68GiB temp buffer (testdata/h200/keras/log.txt).

// XLAMemorySlop is xla_gpu_memory_limit_slop_factor (xla/debug_options_flags.cc, default 95):
// the percentage of the device memory limit rematerialization aims for.
const XLAMemorySlop = 0.95

// XLATemp is what buffer assignment gave a plan.
type XLATemp struct {
	Bytes    int64   // the temp buffer as allocated (after rematerialization)
	Needed   int64   // without rematerialization: the peak of the step's temporaries
	Floor    int64   // the least rematerialization reaches
	Target   int64   // what rematerialization aimed for (0: no limit reached)
	Recomp   float64 // fraction of the recomputable forward work done again in backward
	recompB  float64
	recompF  float64
	tensorIx int // index of the temp tensor in the plan
}

// XLAAssign turns the op-by-op plan mp into what the compiled step allocates: one temp tensor
// allocated at the first compiled op and freed at the last, sized to the peak of the
// temporaries the op-by-op schedule has alive at once (the liveness sharing of buffer
// assignment); the per-op allocations of temporaries are gone. keepGrads keeps the weight
// gradients out of the temp buffer (they leave the compiled step: all-reduce, accumulation).
// limit is the device allocator's limit: when the step does not fit under XLAMemorySlop of it,
// the temp buffer is rematerialized down towards its floor, and the recomputed forward work is
// one more backward op.
func XLAAssign(mp *Plan, limit int64, keepGrads bool) (*Plan, *XLATemp) {
	temp, state, inputs := xlaTemporaries(mp, keepGrads)
	x := &XLATemp{}
	recomp := x.recomputable(mp, temp)
	peak, floor, first, last := tempLiveness(mp, temp, recomp)
	if first < 0 {
		return mp, nil
	}
	x.Needed, x.Floor, x.Bytes = peak, min(floor, peak), peak
	if limit > 0 {
		if room := int64(XLAMemorySlop*float64(limit)) - state - inputs; peak > room {
			x.Target = room
			x.Bytes = max(room, x.Floor)
			if peak > x.Floor {
				x.Recomp = float64(peak-x.Bytes) / float64(peak-x.Floor)
			}
		}
	}
	out := *mp
	out.Tensors = append(append([]Tensor{}, mp.Tensors...), Tensor{Name: "xla/temp",
		Bytes: x.Bytes, Role: Temp, DType: Int32, Shape: []int64{x.Bytes}})
	x.tensorIx = len(out.Tensors) - 1
	out.Ops = x.compiledOps(mp, temp, first, last)
	return &out, x
}

// xlaTemporaries marks the tensors buffer assignment packs into the temp buffer: all but the
// persistent ones (variables, optimizer slots), the kept gradients and the inputs. state and
// inputs are the bytes of the persistent tensors and of the inputs.
func xlaTemporaries(mp *Plan, keepGrads bool) (temp []bool, state, inputs int64) {
	n := len(mp.Tensors)
	pers := make([]bool, n)
	for _, i := range append(append([]int{}, mp.Persistent...), mp.Slots...) {
		pers[i] = true
		state += mp.Tensors[i].Bytes
	}
	keep := make([]bool, n)
	if keepGrads {
		for _, i := range mp.Gradients {
			keep[i] = true
		}
	}
	temp = make([]bool, n)
	for i, t := range mp.Tensors {
		switch {
		case pers[i] || keep[i]:
		case t.Role == Input:
			inputs += t.Bytes
		default:
			temp[i] = true
		}
	}
	return temp, state, inputs
}

// recomputable marks what rematerialization may drop: the temporaries the plan marks
// (Tensor.Recompute), outputs of cheap forward ops kept into backward. It adds the
// share of their producers' bytes and FLOPs to x's recomputable work.
func (x *XLATemp) recomputable(mp *Plan, temp []bool) []bool {
	n := len(mp.Tensors)
	producer := make([]int, n)
	for i := range producer {
		producer[i] = -1
	}
	freedIn := make([]Phase, n)
	for oi, op := range mp.Ops {
		for _, t := range op.Alloc {
			producer[t] = oi
		}
		for _, t := range op.Free {
			freedIn[t] = op.Phase
		}
	}
	recomp := make([]bool, n)
	for t := range mp.Tensors {
		oi := producer[t]
		if !temp[t] || oi < 0 || !mp.Tensors[t].Recompute {
			continue
		}
		op := mp.Ops[oi]
		if freedIn[t] != Forward {
			recomp[t] = true
			var outB int64
			for _, a := range op.Alloc {
				outB += mp.Tensors[a].Bytes
			}
			share := float64(mp.Tensors[t].Bytes) / float64(max(outB, 1))
			x.recompB += share * op.Bytes
			x.recompF += share * op.FLOPs
		}
	}
	return recomp
}

// tempLiveness walks the live curve of temporaries (allocations at an op's start, frees at
// its end): its peak, the floor rematerialization can reach (all recomputable values dropped
// but the largest one an op reads), and the first device op and last op that touch a
// temporary (first < 0: none).
func tempLiveness(mp *Plan, temp, recomp []bool) (peak, floor int64, first, last int) {
	var live, liveR int64
	first, last = -1, -1
	for oi, op := range mp.Ops {
		var big int64 // the largest recomputable value this op may need materialized
		for _, t := range op.Alloc {
			if temp[t] {
				live += mp.Tensors[t].Bytes
				if recomp[t] {
					liveR += mp.Tensors[t].Bytes
				}
				if first < 0 && op.Kind != HostToDevice {
					first = oi
				}
			}
		}
		for _, t := range op.Free {
			if recomp[t] {
				big = max(big, mp.Tensors[t].Bytes)
			}
		}
		peak = max(peak, live)
		floor = max(floor, live-liveR+big)
		for _, t := range op.Free {
			if temp[t] {
				live -= mp.Tensors[t].Bytes
				if recomp[t] {
					liveR -= mp.Tensors[t].Bytes
				}
				last = oi
			}
		}
	}
	return peak, floor, first, last
}

// compiledOps is mp's ops without the temporaries' allocations: the temp buffer is allocated
// at op first and freed at op last, and a rematerialization op starts the backward pass when
// x recomputes.
func (x *XLATemp) compiledOps(mp *Plan, temp []bool, first, last int) []Op {
	drop := func(ts []int) []int {
		var k []int
		for _, t := range ts {
			if !temp[t] {
				k = append(k, t)
			}
		}
		return k
	}
	ops := make([]Op, 0, len(mp.Ops)+1)
	for oi, op := range mp.Ops {
		op.Alloc, op.Free = drop(op.Alloc), drop(op.Free)
		if oi == first {
			op.Alloc = append(op.Alloc, x.tensorIx)
		}
		if x.Recomp > 0 && op.Phase == Backward && (oi == 0 || mp.Ops[oi-1].Phase != Backward) {
			// The recomputed forward ops run inside backward, where their values are read.
			ops = append(ops, Op{Name: "xla/rematerialization", Phase: Backward,
				Kind: Elementwise, FLOPs: x.Recomp * x.recompF, Bytes: x.Recomp * x.recompB,
				Kernels: 1, DType: op.DType})
		}
		if oi == last {
			op.Free = append(op.Free, x.tensorIx)
		}
		ops = append(ops, op)
	}
	return ops
}
