package train

import (
	"math"
	"testing"

	"github.com/gpusim/gpusim/pipeline"
)

// TestHorovodRanksRunTheirOwnPipelines: Horovod runs a process per GPU, each with its own
// tf.data pipeline over its shard; MirroredStrategy's one process runs one pipeline for the
// global batch. With 2 map calls of 3 ms per pipeline, 4 ranks of 64 images each wait
// 64 x 3 ms / 2 = 96 ms for a batch, while one pipeline of 2 calls builds the global 256 in
// 384 ms: the input-bound steps differ by the process count.
func TestHorovodRanksRunTheirOwnPipelines(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		want     float64 // seconds per step, input-bound
	}{{"horovod", 64 * 3e-3 / 2}, {"mirrored", 256 * 3e-3 / 2}} {
		c := cfgWith(func(c *Config) {
			c.GPUCount, c.Batch, c.Strategy, c.Steps = 4, 256, tc.strategy, 8
			c.Precision, c.XLA, c.HostCores = "mixed_float16", true, 64
			in := DefaultInput()
			in.ParallelCalls, in.Prefetch = 2, 2
			in.Pipeline.MapCost = pipeline.Const(3e-3)
			c.Input = &in
		})
		res := mustRun(t, c)
		st := res.StepTimes[len(res.StepTimes)/2:]
		var mean float64
		for _, s := range st {
			mean += s / float64(len(st))
		}
		if math.Abs(mean/tc.want-1) > 0.05 {
			t.Errorf("%s: input-bound step %.1f ms, want %.1f ms", tc.strategy, 1e3*mean, 1e3*tc.want)
		}
		if tc.strategy == "horovod" && (res.Input == nil || res.Input.Elements%64 != 0) {
			t.Errorf("horovod: rank 0's pipeline delivered %v elements, want batches of 64", res.Input)
		}
	}
}
