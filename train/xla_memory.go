package train

import (
	"fmt"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/models"
)

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

// xlaMemorySlop is xla_gpu_memory_limit_slop_factor (xla/debug_options_flags.cc, default 95):
// the percentage of the device memory limit rematerialization aims for.
const xlaMemorySlop = 0.95

// xlaTemp is what buffer assignment gave a plan.
type xlaTemp struct {
	bytes    int64 // the temp buffer as allocated (after rematerialization)
	needed   int64 // without rematerialization: the peak of the step's temporaries
	floor    int64 // the least rematerialization reaches
	target   int64 // what rematerialization aimed for (0: no limit reached)
	recompB  float64
	recompF  float64
	recomp   float64 // fraction of the recomputable forward work done again in backward
	tensorIx int     // index of the temp tensor in the plan
}

// xlaAssign turns an op-by-op plan into what the compiled step allocates: one temp tensor
// allocated at the first compiled op and freed at the last, sized to the peak of the
// temporaries the op-by-op schedule has alive at once (the liveness sharing of buffer
// assignment); the per-op allocations of temporaries are gone. keepGrads keeps the weight
// gradients out of the temp buffer (they leave the compiled step: all-reduce, accumulation).
// limit is the device allocator's limit: when the step does not fit under xlaMemorySlop of it,
// the temp buffer is rematerialized down towards its floor, and the recomputed forward work is
// one more backward op.
func xlaAssign(mp *models.Plan, limit int64, keepGrads bool) (*models.Plan, *xlaTemp) {
	temp, state, inputs := xlaTemporaries(mp, keepGrads)
	x := &xlaTemp{}
	recomp := x.recomputable(mp, temp)
	peak, floor, first, last := tempLiveness(mp, temp, recomp)
	if first < 0 {
		return mp, nil
	}
	x.needed, x.floor, x.bytes = peak, min(floor, peak), peak
	if limit > 0 {
		if room := int64(xlaMemorySlop*float64(limit)) - state - inputs; peak > room {
			x.target = room
			x.bytes = max(room, x.floor)
			if peak > x.floor {
				x.recomp = float64(peak-x.bytes) / float64(peak-x.floor)
			}
		}
	}
	out := *mp
	out.Tensors = append(append([]models.Tensor{}, mp.Tensors...), models.Tensor{Name: "xla/temp",
		Bytes: x.bytes, Role: models.Temp, DType: models.Int32, Shape: []int64{x.bytes}})
	x.tensorIx = len(out.Tensors) - 1
	out.Ops = x.compiledOps(mp, temp, first, last)
	return &out, x
}

// xlaTemporaries marks the tensors buffer assignment packs into the temp buffer: all but the
// persistent ones (variables, optimizer slots), the kept gradients and the inputs. state and
// inputs are the bytes of the persistent tensors and of the inputs.
func xlaTemporaries(mp *models.Plan, keepGrads bool) (temp []bool, state, inputs int64) {
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
		case t.Role == models.Input:
			inputs += t.Bytes
		default:
			temp[i] = true
		}
	}
	return temp, state, inputs
}

// recomputable marks what rematerialization may drop: the temporaries the plan marks
// (models.Tensor.Recompute), outputs of cheap forward ops kept into backward. It adds the
// share of their producers' bytes and FLOPs to x's recomputable work.
func (x *xlaTemp) recomputable(mp *models.Plan, temp []bool) []bool {
	n := len(mp.Tensors)
	producer := make([]int, n)
	for i := range producer {
		producer[i] = -1
	}
	freedIn := make([]models.Phase, n)
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
		if freedIn[t] != models.Forward {
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
func tempLiveness(mp *models.Plan, temp, recomp []bool) (peak, floor int64, first, last int) {
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
				if first < 0 && op.Kind != models.HostToDevice {
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
func (x *xlaTemp) compiledOps(mp *models.Plan, temp []bool, first, last int) []models.Op {
	drop := func(ts []int) []int {
		var k []int
		for _, t := range ts {
			if !temp[t] {
				k = append(k, t)
			}
		}
		return k
	}
	ops := make([]models.Op, 0, len(mp.Ops)+1)
	for oi, op := range mp.Ops {
		op.Alloc, op.Free = drop(op.Alloc), drop(op.Free)
		if oi == first {
			op.Alloc = append(op.Alloc, x.tensorIx)
		}
		if x.recomp > 0 && op.Phase == models.Backward && (oi == 0 || mp.Ops[oi-1].Phase != models.Backward) {
			// The recomputed forward ops run inside backward, where their values are read.
			ops = append(ops, models.Op{Name: "xla/rematerialization", Phase: models.Backward,
				Kind: models.Elementwise, FLOPs: x.recomp * x.recompF, Bytes: x.recomp * x.recompB,
				Kernels: 1, DType: op.DType})
		}
		if oi == last {
			op.Free = append(op.Free, x.tensorIx)
		}
		ops = append(ops, op)
	}
	return ops
}

// xlaMemoryNote says what buffer assignment and rematerialization did.
func xlaMemoryNote(x *xlaTemp) string {
	if x == nil {
		return ""
	}
	msg := fmt.Sprintf("XLA packs the step's temporaries into one %s buffer (buffer assignment with liveness sharing)", allocator.HumanReadableNumBytes(x.bytes))
	if x.target > 0 {
		if x.bytes > x.target {
			msg += fmt.Sprintf("; rematerialization could not reach %s: only reduced to %s, down from %s",
				allocator.HumanReadableNumBytes(x.target), allocator.HumanReadableNumBytes(x.bytes), allocator.HumanReadableNumBytes(x.needed))
		} else {
			msg += fmt.Sprintf("; rematerialized from %s to fit the memory limit", allocator.HumanReadableNumBytes(x.needed))
		}
		msg += fmt.Sprintf(", recomputing %.0f%% of the cheap forward ops in backward", 100*x.recomp)
	}
	return msg
}
