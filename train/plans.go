package train

import "github.com/gpusim/gpusim/models"

// runPlans are the run's step plans as the replicas share them: the model, each replica's
// share of the global batch, the priced plans' cache key and layout, what the plans give the
// other parts (gradient bytes, Keras 3's state arrays, XLA's temp buffer) and the gradient
// accumulation op, priced at its first run.
type runPlans struct {
	// convNHWC: the run's convolutions are NHWC: XLA's layout (xlaConvNHWC), or TF's without
	// its layout optimizer.
	convNHWC bool
	gpuKey   string // gpu written out, the priced-plan cache's key (memo.go)
	model    *models.Model
	// replicaBatches is each replica's share of the global batch (splitBatch), computed once
	// in setupPlans.
	replicaBatches []int
	gradBytes      int64
	stateArrays    int             // Framework jax: the arrays Keras passes to the train step (dispatch.go)
	xlaTemp        *models.XLATemp // buffer assignment of the first plan (nil without XLA)
	accumCost      *opCost         // the gradient accumulation op, priced at its first run
}
