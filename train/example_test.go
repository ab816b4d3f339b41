package train_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/gpusim/gpusim/train"
)

// ResNet-50 with a global batch of 4096 does not fit a T4: the run ends in step 1 with TF's
// ResourceExhaustedError.
func ExampleRun_oom() {
	cfg := train.DefaultConfig()
	cfg.Batch, cfg.GPU, cfg.Steps = 4096, "t4", 5
	res, err := train.Run(context.Background(), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("oom:", res.OOM != nil, "at step", res.OOM.Step)
	fmt.Println(strings.HasPrefix(res.OOM.Message, "ResourceExhaustedError: OOM when allocating tensor with shape[4096,"))
	// Output:
	// oom: true at step 1
	// true
}

// MirroredStrategy over four GPUs splits a global batch of 130 as tf.distribute does.
func ExampleRun_mirrored() {
	cfg := train.DefaultConfig()
	cfg.Batch, cfg.GPUCount, cfg.Strategy, cfg.Steps = 130, 4, "mirrored", 3
	res, err := train.Run(context.Background(), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Replicas, "replicas, batches", res.ReplicaBatches, "all-reduce > 0:", res.AllReduceTime > 0)
	// Output:
	// 4 replicas, batches [33 33 32 32] all-reduce > 0: true
}
