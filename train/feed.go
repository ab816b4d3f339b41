package train

import "github.com/gpusim/gpusim/sim"

// feed is the host input of the training process: one tf.data pipeline (or Keras fit's array
// feed) per process that reads input, the replicas each one feeds, the batches asked for and
// not yet taken by every replica of their process, and the replicas' summed wait for them.
type feed struct {
	input      inputSource   // the first process's pipeline (inputs[0])
	inputs     []inputSource // one per process that reads input (newInputs)
	perProcess int           // replicas fed by each of inputs
	batches    map[batchKey]*batch
	inputWait  sim.Time // summed over replicas
}
