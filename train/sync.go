package train

import (
	"github.com/gpusim/gpusim/collective"
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
