package train

import (
	"fmt"
	"sort"

	"github.com/gpusim/gpusim/collective"
	"github.com/gpusim/gpusim/models"
)

// AllReduceInfo describes MirroredStrategy's gradient all-reduce of one optimizer update.
type AllReduceInfo struct {
	// Impl is the cross-device ops TF selected: "nccl" (NcclAllReduce), "hierarchical_copy" or
	// "reduction_to_one_device" (TF's fallback with virtual GPUs).
	Impl string
	// Topology is the interconnect the ranks use: "nvswitch", "nvlink" or "pcie"; "one GPU"
	// when every replica is a logical GPU of the same card.
	Topology string
	// NumPacks is NcclAllReduce(num_packs); Calls the NCCL all-reduces per update.
	NumPacks, Calls int
	// GradientBytes is one replica's gradients; Seconds the all-reduce time per update;
	// BusBW nccl-tests' bus bandwidth of it (bytes/s).
	GradientBytes int64
	Seconds       float64
	BusBW         float64
	// LaunchSeconds is the host time to launch one step's NCCL kernels on every GPU (one
	// ncclAllReduce per pack and GPU), paid before the all-reduce starts.
	LaunchSeconds float64
	// Overlapped says the all-reduce runs while the backward pass does (Horovod's fused
	// buckets); ExposedSeconds and OverlappedSeconds are then its median time after the
	// slowest replica's backward pass and the part hidden under backward passes, per step.
	Overlapped                        bool
	ExposedSeconds, OverlappedSeconds float64
	// NCCLBufferBytes is the device memory NCCL's communicator allocates on every GPU outside
	// TF's allocator: its channels' receive buffers (collective.NCCLBufferBytes).
	NCCLBufferBytes int64
	// PackBufferBytes is the most memory the all-reduce's buffers (TF's concat/split packs and
	// the reduced outputs) add on every replica beyond what it held when the all-reduce
	// started; ReduceDeviceExtraBytes is what a copy-based reduction adds on the first replica
	// (received copies and the sum), 0 for NCCL.
	PackBufferBytes, ReduceDeviceExtraBytes int64
	// BucketedSeconds and BucketedExposedSeconds time the alternative that all-reduces
	// BucketBytes buckets while the backward pass runs (collective.OverlapBucketed): the
	// communication time and the part of it the backward pass does not hide.
	BucketBytes                             int64
	BucketedSeconds, BucketedExposedSeconds float64
	// Horovod is Horovod's own plan (strategy horovod with NCCL): its fusion buckets replace
	// MirroredStrategy's packs, and Impl, Calls, Seconds and BusBW above describe them; nil
	// otherwise.
	Horovod *HorovodAllReduce
}

// HorovodAllReduce is one step's Horovod all-reduce of every replica's gradients.
type HorovodAllReduce struct {
	// FusionThresholdBytes is HOROVOD_FUSION_THRESHOLD, the most a fused response holds.
	FusionThresholdBytes int64
	// Buckets are the fused responses, in the order the backward pass fills them: one
	// ncclAllReduce each.
	Buckets []HorovodBucket
	// Compression is hvd.DistributedOptimizer's compression ("none" or "fp16"); WireBytes the
	// bytes one replica all-reduces after it.
	Compression string
	WireBytes   int64
	// NCCLSeconds is the buckets' ncclAllReduce times summed; CopySeconds their fusion-buffer
	// copies, in and out, summed; PostReduceSeconds the per-gradient TF ops after the
	// all-reduce (decompression cast, average) when XLA does not fuse them.
	NCCLSeconds, CopySeconds, PostReduceSeconds float64
	// CycleSeconds is HOROVOD_CYCLE_TIME: a tensor is negotiated at the background thread's
	// first cycle after every rank's host enqueued it (hidden when the hosts run ahead of
	// the GPUs).
	CycleSeconds float64
}

// HorovodBucket is one fused response.
type HorovodBucket struct {
	Bytes     int64
	Gradients int
	// Seconds is its ncclAllReduce's time.
	Seconds float64
}

// bucketBytes is the bucket size of the overlapped comparison: PyTorch DDP's default
// bucket_cap_mb=25 (torch/nn/parallel/distributed.py).
const bucketBytes = 25 << 20

// arOpName is the TF op or class whose allocation shows in an OOM during the all-reduce.
func (r *runner) arOpName() string {
	switch r.sync.allReduce.Impl {
	case collective.ImplHierarchicalCopy:
		return "HierarchicalCopyAllReduce"
	case collective.ImplReductionToOneDevice:
		return "ReductionToOneDevice"
	}
	return "NcclAllReduce"
}

// reducesOn says replica id sums gradients in the copy-based reductions: ReductionToOneDevice
// sums on the first device; HierarchicalCopyAllReduce on two roots per pack, GPU i % n and
// the one n/2 after it (cross_device_utils.aggregate_gradients_using_hierarchical_copy).
func (r *runner) reducesOn(id int) bool {
	if r.sync.allReduce.Impl != collective.ImplHierarchicalCopy {
		return id == 0
	}
	n := len(r.replicas)
	for i := range r.sync.allReduce.Pack.Packs {
		if m0 := i % n; id == m0 || id == (m0+n/2)%n {
			return true
		}
	}
	return false
}

// allocReduceExtra allocates, on the reducing replicas (reducesOn), the received copies and the sum collective.GradientAllReduce counts in
// ReduceDeviceExtraBytes; they are freed when the all-reduce ends.
func (r *runner) allocReduceExtra(rep *replica) bool {
	b := r.sync.allReduce.ReduceDeviceExtraBytes
	if !r.reducesOn(rep.id) || b <= 0 || r.sync.allReduce.Impl == collective.ImplNCCL {
		return true
	}
	h, ok := rep.alloc.Allocate(b)
	if !ok {
		r.fail(rep, models.Tensor{Name: "reduce_to_device", Bytes: b, DType: models.Float32}, r.arOpName())
		return false
	}
	rep.mem.reduceExtra, rep.mem.hasReduceExtra = h, true
	r.recordMem(rep, b)
	rep.stats.arPeakBytes = max(rep.stats.arPeakBytes, rep.alloc.Stats().BytesInUse)
	return true
}

// outOfPlace adds the output buffers of an all-reduce that cannot reduce the gradients in
// place. NCCL's kernel reuses its input only when it holds the buffer alone (nccl_ops.cc,
// forward_input_or_allocate_output): the gradient accumulators are variables, so with
// accumulation every reduced gradient gets a new buffer. ReductionToOneDevice's results are
// add_n outputs and copies: new buffers too, and the inputs die after them.
func outOfPlace(ar *collective.GradientAllReduce, grads []int64, accumulating bool) {
	p := &ar.Pack
	if len(p.Outputs) != 1 || p.Outputs[0] != collective.GradientsName {
		return
	}
	if !accumulating && ar.Impl != collective.ImplReductionToOneDevice {
		return
	}
	for i := range p.Stages {
		st := &p.Stages[i]
		if st.Name != "allreduce" {
			continue
		}
		p.Outputs = nil
		for j, b := range grads {
			name := fmt.Sprintf("reduced_grad_%d", j)
			st.Alloc = append(st.Alloc, collective.Buffer{Name: name, Bytes: b})
			p.Outputs = append(p.Outputs, name)
		}
		st.Free = append(st.Free, collective.GradientsName)
		return
	}
}

// packBufferBytes replays the all-reduce stages and returns the most bytes their buffers add
// at once over the bytes in use when the all-reduce starts (gradients alive unless they went
// into accumulators).
func (r *runner) packBufferBytes() int64 {
	var cur, peak int64
	live := r.cfg.AccumulationSteps == 1
	alive := make([]bool, len(r.sync.packBufs))
	for _, st := range r.sync.packStages {
		for _, b := range st.alloc {
			cur += r.rounded(r.sync.packBufs[b].Bytes)
			alive[b] = true
		}
		peak = max(peak, cur)
		for _, b := range st.free {
			switch {
			case b < 0 && live:
				for _, g := range r.sync.gradSizes {
					cur -= r.rounded(g)
				}
				live = false
			case b >= 0 && alive[b]:
				cur -= r.rounded(r.sync.packBufs[b].Bytes)
				alive[b] = false
			}
		}
	}
	return peak
}

// rounded is the size the training process's allocator books for a request: BFC rounds up to
// kMinAllocationSize, 256 bytes (tsl/framework/bfc_allocator.cc RoundedBytes); the others book
// the request.
func (r *runner) rounded(n int64) int64 {
	if r.cfg.Memory.Allocator != "" && r.cfg.Memory.Allocator != "bfc" {
		return n
	}
	return (n + 255) / 256 * 256
}

// bucketed times the overlapped alternative from the step plan: each gradient is ready when
// the backward op that produces it ends.
func (r *runner) bucketed(p *plan) (collective.Overlap, error) {
	ready := map[int]float64{}
	var t float64
	started := false
	for i, op := range p.Ops {
		if op.Phase != models.Backward {
			if started {
				break
			}
			continue
		}
		started = true
		t += p.costs[i].exec.Seconds()
		for _, ti := range op.Alloc {
			if p.Tensors[ti].Role == models.Gradient {
				ready[ti] = t
			}
		}
	}
	var grads []collective.ReadyGradient
	for _, ti := range p.Gradients {
		rt, ok := ready[ti]
		if !ok {
			rt = t
		}
		grads = append(grads, collective.ReadyGradient{Bytes: p.Tensors[ti].Bytes, Ready: rt})
	}
	sort.SliceStable(grads, func(i, j int) bool { return grads[i].Ready < grads[j].Ready })
	return collective.OverlapBucketed(r.sync.topo, grads, bucketBytes, "")
}

// allReduceInfo fills Result.AllReduce.
func (r *runner) allReduceInfo() *AllReduceInfo {
	if len(r.replicas) < 2 {
		return nil
	}
	ar := r.sync.allReduce
	info := &AllReduceInfo{Impl: ar.Impl, Topology: r.sync.topo.Kind, NumPacks: r.cfg.NumPacks, Calls: len(ar.Calls),
		GradientBytes: r.plans.gradBytes, Seconds: ar.Seconds, BusBW: ar.BusBW,
		PackBufferBytes: r.packBufferBytes(), ReduceDeviceExtraBytes: ar.ReduceDeviceExtraBytes,
		LaunchSeconds: r.sync.multi.launch}
	if r.sync.multi.overlap != nil {
		info.Overlapped = true
		info.ExposedSeconds, info.OverlappedSeconds = median(r.sync.multi.exposed), median(r.sync.multi.overlapped)
		h := r.horovodInfo()
		if r.cfg.Strategy == "horovod" {
			info.Horovod = h
		}
		info.NumPacks, info.Calls = 0, len(h.Buckets)
		info.Seconds = h.NCCLSeconds + h.CopySeconds
		info.BusBW = 0
		if n := len(r.replicas); h.NCCLSeconds > 0 {
			// nccl-tests' busbw of the buckets together: algbw x 2(n-1)/n.
			info.BusBW = float64(h.WireBytes) / h.NCCLSeconds * 2 * float64(n-1) / float64(n)
		}
	}
	if ar.Impl == collective.ImplNCCL {
		info.NCCLBufferBytes = collective.NCCLBufferBytes(r.sync.topo)
	}
	cards := map[int]bool{}
	for _, rep := range r.replicas {
		cards[r.mach.tfd.logical[rep.logical].GPU] = true
	}
	if len(cards) == 1 {
		// Logical GPUs of one card: the copies are device-memory traffic, no link is used.
		info.Topology = "one GPU"
	}
	if ar.Impl == collective.ImplNCCL && info.Horovod == nil {
		if o, err := r.bucketed(r.replicas[0].plans[len(r.replicas[0].plans)-1]); err == nil {
			info.BucketBytes, info.BucketedSeconds, info.BucketedExposedSeconds = bucketBytes, o.CommSeconds, o.ExposedSeconds
		}
	}
	return info
}

// horovodInfo describes the fusion buckets setupHorovod planned.
func (r *runner) horovodInfo() *HorovodAllReduce {
	m := &r.sync.multi
	h := &HorovodAllReduce{FusionThresholdBytes: horovodFusionBytes, Compression: r.cfg.HorovodCompression,
		PostReduceSeconds: m.postReduce, CycleSeconds: horovodCycleSeconds}
	if h.Compression == "" {
		h.Compression = "none"
	}
	for i, b := range m.overlap.Buckets {
		h.Buckets = append(h.Buckets, HorovodBucket{Bytes: b.Bytes, Gradients: b.Gradients, Seconds: b.Result.Seconds})
		h.WireBytes += b.Bytes
		h.NCCLSeconds += b.Result.Seconds
		h.CopySeconds += 2 * m.fusionCopy[i]
	}
	return h
}
