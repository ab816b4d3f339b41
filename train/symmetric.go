package train

import (
	"fmt"
	"reflect"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/collective"
)

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
		p := r.physicalOf(rep.logical)
		if phys[p] {
			return false
		}
		phys[p] = true
		if !sameAllocator(rep.alloc, first.alloc) || r.mach.devs[p].UsedBytes() != r.mach.devs[r.physicalOf(first.logical)].UsedBytes() ||
			r.mach.devs[p].Spec().TotalBytes != r.mach.devs[r.physicalOf(first.logical)].Spec().TotalBytes {
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
