package analysis

import (
	"fmt"

	"github.com/gpusim/gpusim/train"
)

// Training is a training job's size: how many samples one epoch has and how many epochs run.
type Training struct {
	// DatasetSize is the samples per epoch (ImageNet-1k's training set: 1,281,167).
	DatasetSize int `json:"dataset_size"`
	// Epochs is the passes over it.
	Epochs int `json:"epochs"`
}

// StepsPerEpoch is the optimizer updates of one epoch at a global batch: ceil(DatasetSize /
// batch), as Keras' fit counts them when the last batch is partial (a dataset batched without
// drop_remainder).
func (t Training) StepsPerEpoch(globalBatch int) int {
	if globalBatch < 1 {
		return 0
	}
	return (t.DatasetSize + globalBatch - 1) / globalBatch
}

// Seconds is the time to train at stepTime a step (the simulated median): every epoch's steps
// at that time. It leaves out what the simulated steps do not contain: the first steps' XLA
// compile or warm-up beyond the median, evaluation, checkpoints.
func (t Training) Seconds(globalBatch int, stepTime float64) float64 {
	return float64(t.Epochs) * float64(t.StepsPerEpoch(globalBatch)) * stepTime
}

// InputAssumption says where a configuration's batches come from, for a report that must not
// let a reader take synthetic throughput for an input pipeline's.
func InputAssumption(cfg train.Config) string {
	if cfg.Input == nil {
		return "synthetic: the batches are already on the GPU (the scenario has no input section), so tf.data never limits the throughput; add input: to include it"
	}
	cache := cfg.Input.Cache
	if cache == "" {
		cache = "none"
	}
	return fmt.Sprintf("tf.data as the scenario's input section describes (cache %s): every count is fed by one host's pipeline", cache)
}
