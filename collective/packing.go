package collective

import (
	"fmt"
)

// eigenMaxAlignBytes is EIGEN_MAX_ALIGN_BYTES in TensorFlow builds (third_party/eigen3 BUILD:
// "EIGEN_MAX_ALIGN_BYTES=64"). A dim-0 split shares its input's buffer only when every output
// starts and ends on this alignment (tensorflow/core/framework/ops_util.h IsDim0SliceAligned,
// used by SplitV's SplitHasAlignedOutputsInFirstDimension); otherwise it copies.
const eigenMaxAlignBytes = 64

// GradientsName names the input gradient tensors in a PackPlan's Free lists: the caller owns
// them, and TF's executor drops them once the packing concat has read them.
const GradientsName = "gradients"

// Buffer is one device allocation the gradient all-reduce makes on every replica.
type Buffer struct {
	Name  string
	Bytes int64
}

// Stage is one step of TF's packed all-reduce on one replica, in execution order: Alloc lists
// the buffers its op allocates before running, Free the buffers dead once it has run (by name;
// GradientsName is the caller's gradient tensors).
type Stage struct {
	// Name is "pack.concat", "pack.split", "allreduce", "unpack.concat" or "unpack.split".
	Name  string
	Alloc []Buffer
	Free  []string
}

// PackOptions are TF's packing knobs.
type PackOptions struct {
	// NumPacks is NcclAllReduce(num_packs=...) / HierarchicalCopyAllReduce(num_packs=...):
	// 0 all-reduces every gradient on its own; k >= 1 concatenates all gradients and splits
	// the result into k packs (Keras' default strategy uses NcclAllReduce(num_packs=1)).
	NumPacks int
	// ElemBytes is the gradients' element size (4 for float32 variables, also under
	// mixed_float16, whose variables stay float32). 0 means 4.
	ElemBytes int
}

// PackPlan is what TF's _ConcatAndSplitPacker (tensorflow/python/distribute/cross_device_ops.py)
// does to one replica's gradients, with the memory each step takes.
type PackPlan struct {
	NumPacks int
	// GradientBytes are the input gradients' sizes; TotalBytes their sum.
	GradientBytes []int64
	TotalBytes    int64
	// Packs are the buffers handed to NCCL, one all-reduce each, in launch order.
	Packs []int64
	// Stages is the allocation sequence on every replica.
	Stages []Stage
	// Outputs are the buffers that hold the reduced gradients at the end (GradientsName when the
	// reduction happened in place); the optimizer reads them and the caller frees them after
	// the update.
	Outputs []string
	// PeakBytes is the most memory the gradients and the stages' buffers hold at once, and
	// ExtraBytes = PeakBytes - TotalBytes is what the all-reduce costs beyond the gradients a
	// single-GPU step already holds: the "pack buffers" of a MirroredStrategy memory report.
	PeakBytes, ExtraBytes int64
}

func aligned(offsetElems int64, elemBytes int) bool {
	return offsetElems*int64(elemBytes)%eigenMaxAlignBytes == 0
}

// allAligned reports whether every boundary of consecutive pieces (sizes in elements) is
// 64-byte aligned, as SplitV requires to hand out slices instead of copies.
func allAligned(sizes []int64, elemBytes int) bool {
	var off int64
	for _, s := range sizes {
		if !aligned(off, elemBytes) {
			return false
		}
		off += s
		if !aligned(off, elemBytes) {
			return false
		}
	}
	return true
}

// Pack plans TF's gradient packing for gradients of the given sizes (bytes each, in the order
// the optimizer lists its variables). It follows the TF source step by step:
//
//   - pack: reshape each gradient to 1-D (no copy), concat them (array_ops.concat of one tensor
//     is an identity, otherwise a new buffer of the total size), then split into num_packs
//     sizes total//k, ..., with the remainder on the last (identity for k = 1; slices of the
//     concat buffer when every boundary is 64-byte aligned; copies otherwise);
//   - all-reduce every pack with NCCL: the kernel forwards its input in place when it owns the
//     buffer alone (nccl_ops.cc forward_input_or_allocate_output), which slices do not;
//   - unpack: concat the reduced packs (identity for one), split back into the gradient sizes
//     (slices when aligned, copies otherwise).
//
// NumPacks 0 reduces each gradient in place, one NCCL call per gradient.
func Pack(gradientBytes []int64, o PackOptions) (PackPlan, error) {
	eb := o.ElemBytes
	if eb == 0 {
		eb = 4
	}
	if eb < 0 {
		return PackPlan{}, fmt.Errorf("collective: pack: elem_bytes: %d, want > 0", o.ElemBytes)
	}
	if o.NumPacks < 0 {
		// TF: NcclAllReduce raises ValueError for a negative num_packs.
		return PackPlan{}, fmt.Errorf("collective: pack: num_packs: NCCL all-reduce requires num_packs >= 0, but %d is specified", o.NumPacks)
	}
	p := PackPlan{NumPacks: o.NumPacks, GradientBytes: append([]int64(nil), gradientBytes...)}
	elems := make([]int64, len(gradientBytes))
	var totalElems int64
	for i, b := range gradientBytes {
		if b < 0 || b%int64(eb) != 0 {
			return PackPlan{}, fmt.Errorf("collective: pack: gradient %d: %d bytes is not a whole number of %d-byte elements", i, b, eb)
		}
		elems[i] = b / int64(eb)
		totalElems += elems[i]
		p.TotalBytes += b
	}
	if len(gradientBytes) == 0 {
		return p, nil
	}
	if o.NumPacks == 0 {
		p.Packs = append([]int64(nil), gradientBytes...)
		p.Stages = []Stage{{Name: "allreduce"}}
		p.Outputs = []string{GradientsName}
		p.PeakBytes, p.ExtraBytes = p.TotalBytes, 0
		return p, nil
	}

	// The buffer currently holding the flat gradients.
	flat := GradientsName
	if len(gradientBytes) > 1 {
		p.Stages = append(p.Stages, Stage{Name: "pack.concat", Alloc: []Buffer{{"concat", p.TotalBytes}}, Free: []string{GradientsName}})
		flat = "concat"
	}
	packElems := splitElems(totalElems, o.NumPacks)
	packNames, owned := p.splitPacks(flat, packElems, eb)
	for _, e := range packElems {
		p.Packs = append(p.Packs, e*int64(eb))
	}
	reduced := p.allReduce(flat, packNames, owned, packElems, eb)
	p.unpack(reduced, elems, eb)
	p.PeakBytes = peakOf(p.TotalBytes, p.Stages)
	p.ExtraBytes = p.PeakBytes - p.TotalBytes
	return p, nil
}

// splitElems is array_ops.split's sizes for k packs: total//k each, the remainder on the last.
func splitElems(total int64, k int) []int64 {
	split := total / int64(k)
	packElems := make([]int64, k)
	for i := range packElems {
		packElems[i] = split
	}
	packElems[k-1] = total - split*int64(k-1)
	return packElems
}

// splitPacks adds the split of the flat buffer into packs, returning each pack's buffer and
// whether it owns that buffer alone: one pack is the flat buffer, aligned packs are slices of
// it, unaligned ones copies.
func (p *PackPlan) splitPacks(flat string, packElems []int64, eb int) (names []string, owned []bool) {
	k := len(packElems)
	names = make([]string, k)
	owned = make([]bool, k) // the pack's buffer has no other reference
	switch {
	case k == 1:
		names[0], owned[0] = flat, true
	case allAligned(packElems, eb):
		for i := range names {
			names[i] = flat
		}
	default:
		st := Stage{Name: "pack.split", Free: []string{flat}}
		for i, e := range packElems {
			names[i] = fmt.Sprintf("pack_%d", i)
			owned[i] = true
			st.Alloc = append(st.Alloc, Buffer{names[i], e * int64(eb)})
		}
		p.Stages = append(p.Stages, st)
	}
	return names, owned
}

// allReduce adds the NCCL stage and returns each reduced pack's buffer: in place for an owned
// pack, a new output for a slice.
func (p *PackPlan) allReduce(flat string, packNames []string, owned []bool, packElems []int64, eb int) []string {
	ar := Stage{Name: "allreduce"}
	reduced := make([]string, len(packElems))
	for i, e := range packElems {
		if owned[i] {
			reduced[i] = packNames[i]
			continue
		}
		reduced[i] = fmt.Sprintf("reduced_%d", i)
		ar.Alloc = append(ar.Alloc, Buffer{reduced[i], e * int64(eb)})
	}
	if len(ar.Alloc) > 0 {
		ar.Free = []string{flat} // the slices' source dies with its last slice
	}
	p.Stages = append(p.Stages, ar)
	return reduced
}

// unpack adds the concat of the reduced packs and the split back into the gradients (elems
// each), setting the plan's outputs.
func (p *PackPlan) unpack(reduced []string, elems []int64, eb int) {
	unflat := reduced[0]
	if len(reduced) > 1 {
		p.Stages = append(p.Stages, Stage{Name: "unpack.concat", Alloc: []Buffer{{"unpacked", p.TotalBytes}}, Free: dedupe(reduced)})
		unflat = "unpacked"
	}
	switch {
	case len(p.GradientBytes) == 1 || allAligned(elems, eb):
		p.Outputs = []string{unflat}
	default:
		st := Stage{Name: "unpack.split", Free: []string{unflat}}
		for i, b := range p.GradientBytes {
			name := fmt.Sprintf("grad_reduced_%d", i)
			st.Alloc = append(st.Alloc, Buffer{name, b})
			p.Outputs = append(p.Outputs, name)
		}
		p.Stages = append(p.Stages, st)
	}
}

func dedupe(names []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// peakOf replays stages from the gradients alone and returns the most bytes alive at once
// (allocations of a stage are all alive while it runs, before its frees).
func peakOf(gradients int64, stages []Stage) int64 {
	alive := map[string]int64{GradientsName: gradients}
	var cur, peak int64 = gradients, gradients
	for _, s := range stages {
		for _, b := range s.Alloc {
			alive[b.Name] = b.Bytes
			cur += b.Bytes
		}
		peak = max(peak, cur)
		for _, n := range s.Free {
			cur -= alive[n]
			delete(alive, n)
		}
	}
	return peak
}
