package collective

import (
	"fmt"
	"math"
)

// ReadyGradient is one gradient as the backward pass produces it.
type ReadyGradient struct {
	Bytes int64
	// Ready is when the gradient is computed, in seconds from the start of the backward pass.
	Ready float64
}

// Bucket is one all-reduce of the overlapped schedule.
type Bucket struct {
	Bytes int64
	// Gradients is how many gradients the bucket holds.
	Gradients int
	// Ready is when its last gradient is computed; Start and End bound its all-reduce (s from
	// the start of the backward pass). Start = max(Ready, previous End): buckets share the one
	// NCCL stream.
	Ready, Start, End float64
	Result            Result
}

// Overlap is the overlapped bucketed all-reduce compared with one all-reduce after backward.
type Overlap struct {
	Buckets []Bucket
	// BackwardEnd is when the last gradient is ready.
	BackwardEnd float64
	// End is when the last bucket's all-reduce ends.
	End float64
	// ExposedSeconds = End - BackwardEnd: the communication the backward pass did not hide.
	ExposedSeconds float64
	// CommSeconds is the sum of the buckets' all-reduce times.
	CommSeconds float64
	// BucketBufferBytes is the memory the bucket buffers take on every replica (each bucket is
	// a concat of its gradients, alive until its result is unpacked).
	BucketBufferBytes int64
	// AfterBackward is the Keras default for comparison: one packed all-reduce (num_packs=1) of
	// everything once the backward pass has ended; its exposed time is all of it.
	AfterBackward Result
}

// OverlapBucketed schedules gradients into buckets of at least bucketBytes, in the order they
// are produced, and all-reduces each as soon as its last gradient is ready, while the backward
// pass goes on. This is what TF's CollectiveAllReduce does with
// CommunicationOptions(bytes_per_pack=...) (MultiWorkerMirroredStrategy; gradients reversed so
// that the first pack is the first computed) and what PyTorch DDP does with bucket_cap_mb; Keras
// fit with MirroredStrategy does not, which is why the comparison is worth printing. The model
// ignores the SMs NCCL kernels take from concurrent compute.
func OverlapBucketed(t Topology, grads []ReadyGradient, bucketBytes int64, algo string) (Overlap, error) {
	return overlap(t, grads, bucketBytes, algo, false)
}

// OverlapFused schedules gradients as Horovod fuses them (horovod/common/controller.cc,
// Controller::FuseResponses, v0.19): a gradient joins the current fused all-reduce while the
// total stays within fusionBytes (HOROVOD_FUSION_THRESHOLD), else it starts the next; one
// larger than fusionBytes goes alone. Each fused all-reduce starts when its last gradient is
// ready, as in OverlapBucketed.
func OverlapFused(t Topology, grads []ReadyGradient, fusionBytes int64, algo string) (Overlap, error) {
	return overlap(t, grads, fusionBytes, algo, true)
}

// overlap buckets grads at least bucketBytes each (TF's packs, PyTorch's buckets) or, with
// atMost, at most bucketBytes each (Horovod's fusion) and schedules them.
func overlap(t Topology, grads []ReadyGradient, bucketBytes int64, algo string, atMost bool) (Overlap, error) {
	if err := t.Validate(); err != nil {
		return Overlap{}, err
	}
	if bucketBytes <= 0 {
		return Overlap{}, fmt.Errorf("collective: overlap: bucket_bytes: %d, want > 0", bucketBytes)
	}
	var o Overlap
	var total int64
	cur := Bucket{}
	flush := func() error {
		if cur.Gradients == 0 {
			return nil
		}
		r, err := Collective(t, OpAllReduce, cur.Bytes, algo)
		if err != nil {
			return err
		}
		prevEnd := 0.0
		if k := len(o.Buckets); k > 0 {
			prevEnd = o.Buckets[k-1].End
		}
		cur.Result = r
		cur.Start = math.Max(cur.Ready, prevEnd)
		cur.End = cur.Start + r.Seconds
		o.CommSeconds += r.Seconds
		if cur.Gradients > 1 {
			o.BucketBufferBytes += cur.Bytes
		}
		o.Buckets = append(o.Buckets, cur)
		cur = Bucket{}
		return nil
	}
	for i, g := range grads {
		if g.Bytes < 0 || g.Ready < 0 || math.IsNaN(g.Ready) {
			return Overlap{}, fmt.Errorf("collective: overlap: gradient %d: bytes %d ready %v, want >= 0", i, g.Bytes, g.Ready)
		}
		total += g.Bytes
		o.BackwardEnd = math.Max(o.BackwardEnd, g.Ready)
		if atMost && cur.Gradients > 0 && cur.Bytes+g.Bytes > bucketBytes {
			if err := flush(); err != nil {
				return Overlap{}, err
			}
		}
		cur.Bytes += g.Bytes
		cur.Gradients++
		cur.Ready = math.Max(cur.Ready, g.Ready)
		if !atMost && cur.Bytes >= bucketBytes {
			if err := flush(); err != nil {
				return Overlap{}, err
			}
		}
	}
	if err := flush(); err != nil {
		return Overlap{}, err
	}
	if k := len(o.Buckets); k > 0 {
		o.End = o.Buckets[k-1].End
	} else {
		o.End = o.BackwardEnd
	}
	o.ExposedSeconds = math.Max(0, o.End-o.BackwardEnd)
	var err error
	o.AfterBackward, err = Collective(t, OpAllReduce, total, algo)
	if err != nil {
		return Overlap{}, err
	}
	return o, nil
}
