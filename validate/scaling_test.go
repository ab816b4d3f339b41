package validate

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/train"
)

// scalingTarget is a table whose weak scaling (N-GPU throughput over the 1-GPU throughput of
// the same table) issue 15 holds gpusim to, read from testdata/dle/checks.csv
// (scaling_target): NVIDIA's ConvNets ResNet-50 "Training performance" tables (DGX-1, DGX-2,
// DGX A100; XLA on, real ImageNet TFRecords) within 3% each, and TF1 BERT-Large SQuAD v1.1
// fine-tuning on 4 and 8 GPUs within 5% (its 16-GPU cells are logged). Both are Horovod runs
// (training_perf.sh: mpiexec -np N python main.py).
type scalingTarget struct {
	provenance string
	tol        float64
	maxGPUs    int // the most GPUs the target covers (0: all)
}

func scalingTables(t *testing.T) []scalingTarget {
	t.Helper()
	var out []scalingTarget
	for _, c := range dleChecks(t, "scaling_target") {
		tol, err := strconv.ParseFloat(c.want, 64)
		if err != nil {
			t.Fatalf("checks.csv scaling_target %q: want %q", c.version, c.want)
		}
		out = append(out, scalingTarget{c.version, tol, c.gpus})
	}
	return out
}

// scalingKnownMisses are the cells gpusim does not reproduce, with the reason; they are
// logged, never asserted, so that one that improves never fails. BERT under AMP (Horovod with
// Compression.fp16): the tables' multi-GPU cost per step is 30-140 ms where gpusim's is 16-30.
// These cells were measured before NVIDIA's run_squad.py bound each rank to its GPU's CPUs
// (mpirun -bind-to none; set_affinity came in later); the one cell re-measured after that, the
// A100 8-GPU row, went from 180 to 21 ms, which gpusim matches. Horovod's float16 path costs no
// more per byte than float32's (testdata/dle/README.md, "BERT-Large SQuAD on several GPUs
// under AMP"), and gpusim does not model unbound ranks.
var scalingKnownMisses = map[string]bool{
	"bert-large:seq=384 v100-16gb amp_fp16 batch 4 on 4 GPUs (dgx-1)":       true,
	"bert-large:seq=384 v100-16gb amp_fp16 batch 4 on 8 GPUs (dgx-1)":       true,
	"bert-large:seq=384 v100-32gb amp_fp16 batch 24 on 4 GPUs (dgx-1)":      true,
	"bert-large:seq=384 v100-32gb amp_fp16 batch 24 on 8 GPUs (dgx-1)":      true,
	"bert-large:seq=384 v100-sxm3-32gb amp_fp16 batch 24 on 4 GPUs (dgx-2)": true,
	"bert-large:seq=384 v100-sxm3-32gb amp_fp16 batch 24 on 8 GPUs (dgx-2)": true,
	"bert-large:seq=384 a100-40gb amp_fp16 batch 32 on 4 GPUs (dgx-a100)":   true,
}

func shippedDLE(t *testing.T) []Measurement {
	t.Helper()
	ms, err := ReadSet("../testdata/dle/dle_tf.csv")
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func mustRun(t *testing.T, c train.Config) *train.Result {
	t.Helper()
	res, err := train.Run(context.Background(), c)
	if err != nil {
		t.Fatalf("Run(%s): %v", c.Name, err)
	}
	return res
}

// steadyThroughput is the throughput as the DLE scripts compute it: samples over the total
// time of the steps after the warm-up (run_squad.py: (num_train_steps - skipped) x
// global_batch_size / train_time_wo_overhead; the first 5 steps hold gpusim's XLA compile and
// autotuning), the mean step, not the median: with Horovod's cycle and per-replica jitter the
// steps differ, and the mean is what a long run averages.
func steadyThroughput(res *train.Result) float64 {
	st := res.StepTimes
	if len(st) > 5 {
		st = st[5:]
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

// TestDLEScaling: NVIDIA's published weak scaling against gpusim's, run for run, each row
// simulated as `gpusim validate` simulates it (its shipped scenario), both as the mean step
// after the warm-up. The per-step constants stepJitterCV and processSyncPerLevel were fitted
// on the DGX A100 ResNet-50 rows (AMP and TF32); every other row is held out. The log splits
// each row into the 1-GPU step and the multi-GPU cost per step (N-GPU step minus 1-GPU step),
// published and simulated.
func TestDLEScaling(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 60 runs")
	}
	type key struct {
		table, gpu, label string
		batch             int
	}
	one := map[key]Measurement{}
	var multi []Measurement
	tol, maxGPUs := map[string]float64{}, map[string]int{}
	tables := scalingTables(t)
	for _, m := range shippedDLE(t) {
		for _, tb := range tables {
			if !strings.HasPrefix(m.Version, tb.provenance) {
				continue
			}
			tol[m.Version], maxGPUs[m.Version] = tb.tol, tb.maxGPUs
			if m.GPUs() == 1 {
				one[key{m.Version, m.GPU(), m.Label, m.Batch()}] = m
			} else {
				multi = append(multi, m)
			}
		}
	}
	if len(multi) < 20 {
		t.Fatalf("%d multi-GPU rows in the scaling tables, want at least 20", len(multi))
	}
	simOne := map[key]float64{}
	for _, m := range multi {
		k := key{m.Version, m.GPU(), m.Label, m.Batch()}
		base, ok := one[k]
		if !ok {
			t.Errorf("%s: no 1-GPU row of its table at its batch", m.Ref)
			continue
		}
		if _, ok := simOne[k]; !ok {
			simOne[k] = steadyThroughput(mustRun(t, base.run(40)))
		}
		res := mustRun(t, m.run(40))
		if res.OOM != nil {
			t.Errorf("%s: OOM %s", m.Describe(), res.OOM.Message)
			continue
		}
		want := m.Value / base.Value
		got := steadyThroughput(res) / simOne[k]
		model, _, _ := strings.Cut(m.Model(), ",impl=")
		name := fmt.Sprintf("%s %s %s batch %d on %d GPUs (%s)", model, m.GPU(), m.Label, m.Batch(), m.GPUs(), m.Config.Host)
		b, n := float64(m.Batch()), float64(m.GPUs())
		pubExtra := 1e3 * (b*n/m.Value - b/base.Value)
		simExtra := 1e3 * (b*n/steadyThroughput(res) - b/simOne[k])
		t.Logf("%s: scaling %.3f, published %.3f (%+.1f%%); 1-GPU step %.0f ms (published %.0f), multi-GPU cost %.1f ms/step (published %.1f)",
			name, got, want, 100*(got/want-1), 1e3*b/simOne[k], 1e3*b/base.Value, simExtra, pubExtra)
		if scalingKnownMisses[name] || maxGPUs[m.Version] > 0 && m.GPUs() > maxGPUs[m.Version] {
			continue
		}
		if math.Abs(got/want-1) > tol[m.Version] {
			t.Errorf("%s: scaling %.3f, published %.3f: %+.1f%%, want within %.0f%%", name, got, want, 100*(got/want-1), 100*tol[m.Version])
		}
	}
}

// TestDLEResNetStagesBatchesAhead: NVIDIA's ConvNets ResNet-50 copies each batch to the GPU a
// step ahead (model/resnet.py _stage: a CPU StagingArea, then a GPU StagingArea, both puts
// grouped into the train op), and its batches are float32 images (tf.image.resize_images), so
// every step moves 256 x 602 KB over PCIe while it computes on the previous batch. Simulated
// as `gpusim validate` runs the DGX-2 AMP 1-GPU row, a step's copy takes 8 ms or more and none
// of it is on the step's critical path: the step neither waits for the copy nor copies it
// again itself (no h2d op time in its breakdown by kind).
func TestDLEResNetStagesBatchesAhead(t *testing.T) {
	var row *Measurement
	for _, m := range shippedDLE(t) {
		if m.Config.Host == "dgx-2" && m.Model() == "resnet50-v1.5" && m.Label == "amp_fp16" && m.GPUs() == 1 && m.Config.Input != nil {
			row = &m
			break
		}
	}
	if row == nil {
		t.Fatal("no DGX-2 ResNet-50 AMP 1-GPU row with an input pipeline in testdata/dle/dle_tf.csv")
	}
	res := mustRun(t, row.run(40))
	if res.Input == nil || res.Input.Batches == 0 {
		t.Fatal("the DLE ResNet-50 row runs no tf.data pipeline")
	}
	perBatch := res.Input.H2DTime.Seconds() / float64(res.Input.Batches)
	var wait float64
	for _, s := range res.Breakdown {
		if s.Category == train.CatInput {
			wait = s.Seconds
		}
	}
	t.Logf("copy %.1f ms per batch, input wait %.2f ms of a %.1f ms step", 1e3*perBatch, 1e3*wait, 1e3*res.StepTime)
	if perBatch < 8e-3 {
		t.Errorf("a batch of %d float32 images copies in %.1f ms, want >= 8 ms (154 MB over PCIe)", row.Batch(), 1e3*perBatch)
	}
	// The host's map calls make a batch in about the step's time at this batch, so the step
	// may wait a little for a batch to be made; a copy taken at the step's start would add
	// the whole copy to every step.
	if wait > perBatch/2 {
		t.Errorf("the step waits %.2f ms for its input, a %.1f ms copy; the staged copy should leave none on the critical path", 1e3*wait, 1e3*perBatch)
	}
	for _, s := range res.ByKind {
		if s.Category == "h2d" {
			t.Errorf("the step copies its batch again itself (h2d %.1f ms); the pipeline's staged copy is the only one", 1e3*s.Seconds)
		}
	}
}
