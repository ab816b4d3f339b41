package train_test

import (
	"context"
	"testing"

	"github.com/gpusim/gpusim/train"
)

func mustRun(t *testing.T, c train.Config) *train.Result {
	t.Helper()
	res, err := train.Run(context.Background(), c)
	if err != nil {
		t.Fatalf("Run(%s): %v", c.Name, err)
	}
	return res
}

// steadyWarmupSteps are the first steps a DLE-style throughput leaves out: the XLA
// compilation and the autotuning steps (run_squad.py's LogTrainRunHook skips
// num_steps_ignore_xla = 100 of some thousands; gpusim compiles at step 1).
const steadyWarmupSteps = 5

// steadyThroughput is the throughput as NVIDIA's DLE scripts compute it: samples over the
// total time of the steps after the warm-up (run_squad.py: (num_train_steps - skipped) x
// global_batch_size / train_time_wo_overhead), the mean step, not the median.
func steadyThroughput(res *train.Result) float64 {
	st := res.StepTimes
	if len(st) > steadyWarmupSteps {
		st = st[steadyWarmupSteps:]
	}
	var sum float64
	for _, s := range st {
		sum += s
	}
	if sum == 0 {
		return 0
	}
	return float64(res.GlobalBatch*len(st)) / sum
}
