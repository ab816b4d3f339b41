package train

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
)

// dleRow is one throughput of testdata/dle_scaling.csv: rows copied from the calibration
// table of NVIDIA's DeepLearningExamples READMEs (TensorFlow/Classification/ConvNets/
// resnet50v1.5/README.md at 415a9aa3, "Training performance" tables; TensorFlow/
// LanguageModeling/BERT/README.md at 9de48bc9, "Fine-tuning training performance for SQuAD
// v1.1"). Both are Horovod runs (training_perf.sh: mpiexec -np N python main.py), XLA on; the
// ResNet-50 runs read the real ImageNet TFRecords ("averaged over an entire training epoch").
type dleRow struct {
	gpu, host, model, precision string
	batch, gpus                 int
	value                       float64
}

func readDLE(t *testing.T) []dleRow {
	t.Helper()
	f, err := os.Open("testdata/dle_scaling.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []dleRow
	for _, r := range recs[1:] {
		b, _ := strconv.Atoi(r[7])
		n, _ := strconv.Atoi(r[8])
		v, _ := strconv.ParseFloat(r[9], 64)
		out = append(out, dleRow{gpu: r[3], host: r[4], model: r[5], precision: r[6], batch: b, gpus: n, value: v})
	}
	return out
}

// dleConfig is a DLE run as gpusim states it: the README's GPU, box, model, precision and
// per-GPU batch; Horovod with one process per GPU; XLA; momentum SGD (ResNet-50) or Adam
// (BERT SQuAD fine-tuning); ResNet-50 fed by tf.data from ImageNet with AUTOTUNE.
func dleConfig(r dleRow, gpus int) Config {
	c := DefaultConfig()
	c.Model, c.GPU, c.Host, c.XLA, c.Steps = r.model, r.gpu, r.host, true, 40
	c.Precision, c.TF32 = "float32", r.precision == "tf32"
	if r.precision == "amp_fp16" {
		// TF1's automatic mixed precision graph rewrite: BERT's optimization.py calls
		// enable_mixed_precision_graph_rewrite, the ConvNets scripts set the env.
		c.Precision, c.Env = "mixed_float16", map[string]string{"TF_ENABLE_AUTO_MIXED_PRECISION": "1"}
	}
	c.Optimizer = "momentum"
	if r.model == "resnet50-v1.5" {
		c.Input = &Input{Prefetch: Autotune, ParallelCalls: Autotune, Cache: "none"}
	} else {
		c.Optimizer = "adam"
	}
	c.GPUCount, c.Batch = gpus, r.batch*gpus
	if gpus > 1 {
		c.Strategy = "horovod"
		if r.model != "resnet50-v1.5" && r.precision == "amp_fp16" {
			// BERT's optimization.py: hvd.DistributedOptimizer(..., compression=
			// Compression.fp16 if use_fp16 ...); the ResNet-50 runtime passes none.
			c.HorovodCompression = "fp16"
		}
	}
	return c
}

// TestDLEScaling: NVIDIA's published weak scaling (N-GPU throughput over 1-GPU throughput of
// the same table) against gpusim's, run for run, both as the mean step after the warm-up. The
// per-step constants stepJitterCV and processSyncPerLevel were fitted on the DGX A100
// ResNet-50 rows (AMP and TF32); every other row is held out. ResNet-50 must be within 3%,
// BERT-Large SQuAD within 5%; the rows listed in dleKnownOff are outside and kept at their
// error (a change that moves them shows). The log splits each row into the 1-GPU step and the
// multi-GPU cost per step (N-GPU step minus 1-GPU step), published and simulated: the BERT
// FP32/TF32 costs agree within 4 ms/step on every box, so where their scaling misses, the
// 1-GPU step is what differs.
// Measured at HEAD (go test ./train/ -run TestDLEScaling -v): ResNet-50 A100 TF32 -1.9%, AMP
// -0.1%; V100 FP32 -0.3%, AMP +0.4%; DGX-2 FP32 +1.0%, AMP +4.2%; BERT 9 of 12 rows within 5%.
func TestDLEScaling(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 48 runs")
	}
	rows := readDLE(t)
	type key struct {
		gpu, host, model, precision string
		batch                       int
	}
	one := map[key]float64{}
	for _, r := range rows {
		if r.gpus == 1 {
			one[key{r.gpu, r.host, r.model, r.precision, r.batch}] = r.value
		}
	}
	simOne := map[key]float64{}
	for _, r := range rows {
		k := key{r.gpu, r.host, r.model, r.precision, r.batch}
		if r.gpus == 1 {
			continue
		}
		if _, ok := simOne[k]; !ok {
			simOne[k] = steadyThroughput(mustRun(t, dleConfig(r, 1)))
		}
		b := float64(r.batch)
		res := mustRun(t, dleConfig(r, r.gpus))
		if res.OOM != nil {
			t.Errorf("%v x%d: OOM %s", k, r.gpus, res.OOM.Message)
			continue
		}
		want := r.value / one[k]
		got := steadyThroughput(res) / simOne[k]
		errPct := 100 * (got/want - 1)
		name := fmt.Sprintf("%s %s %s batch %d on %d GPUs (%s)", r.model, r.gpu, r.precision, r.batch, r.gpus, r.host)
		tol := 3.0
		if r.model != "resnet50-v1.5" {
			tol = 5
		}
		// The multi-GPU cost per step, apart from the single-GPU step: the N-GPU step minus
		// the 1-GPU step, published and simulated (each replica's batch is the same).
		pubExtra := 1e3 * (b*float64(r.gpus)/r.value - b/one[k])
		simExtra := 1e3 * (b*float64(r.gpus)/steadyThroughput(res) - b/simOne[k])
		t.Logf("%s: scaling %.3f, published %.3f (%+.1f%%); 1-GPU step %.0f ms (published %.0f), multi-GPU cost %.1f ms/step (published %.1f)",
			name, got, want, errPct, 1e3*b/simOne[k], 1e3*b/one[k], simExtra, pubExtra)
		if off, ok := dleKnownOff[name]; ok {
			if math.Abs(errPct-off) > 1.5 {
				t.Errorf("%s: scaling %.3f vs published %.3f is %+.1f%%; it was a known %+.1f%%", name, got, want, errPct, off)
			}
			continue
		}
		if math.Abs(errPct) > tol {
			t.Errorf("%s: scaling %.3f, published %.3f: %+.1f%%, want within %.0f%%", name, got, want, errPct, tol)
		}
	}
}

// dleKnownOff are the rows gpusim misses, with the error it has (scaling over published - 1,
// in %). BERT FP32 on DGX-1 (V100-16GB, batch 2): the multi-GPU cost per step matches (32 and
// 38 ms simulated, 29 and 34 published) but gpusim's 1-GPU step is 164 ms against the table's
// 272 ms (7.36 seq/s), so the same cost weighs more and the scaling comes out low: a
// single-GPU step-time error (issue 13), not a multi-GPU one. BERT AMP on DGX-2: the table
// gains only 1.71x from 4 to 8 GPUs (199.5 to 341.6 seq/s), a multi-GPU cost of 128 ms/step
// against 47 at 4 GPUs and 43 for FP32 at 8, which no per-step cost of gpusim reproduces.
// ResNet-50 AMP on DGX-2 16 GPUs: the simulated step is input-bound (the tf.data pipeline of
// 16 replicas on 96 host threads) at 17.5k img/s against 17.25k published, and gpusim's 1-GPU
// step is 2.5% slower than the table's (202 against 197 ms). The table reads JPEGs through
// tf.data as well (training_perf.sh passes no --use_dali), but runtime/runner.py gives each rank
// its own pipeline of map(num_parallel_calls=10), which gpusim's one pipeline does not model
// (docs/multigpu.md).
var dleKnownOff = map[string]float64{
	"bert-large:seq=384 v100-16gb fp32 batch 2 on 4 GPUs (dgx-1)":      -7.5,
	"bert-large:seq=384 v100-16gb fp32 batch 2 on 8 GPUs (dgx-1)":      -8.5,
	"bert-large:seq=384 v100-32gb amp_fp16 batch 24 on 8 GPUs (dgx-2)": 20.4,
	"resnet50-v1.5 v100-32gb amp_fp16 batch 256 on 16 GPUs (dgx-2)":    4.2,
}

// dleWarmupSteps are the first steps a DLE throughput leaves out: the XLA compilation and the
// autotuning steps (run_squad.py's LogTrainRunHook skips num_steps_ignore_xla = 100 of some
// thousands; gpusim compiles at step 1).
const dleWarmupSteps = 5

// steadyThroughput is the throughput as the DLE scripts compute it: samples over the total
// time of the steps after the warm-up (run_squad.py: (num_train_steps - skipped) x
// global_batch_size / train_time_wo_overhead), the mean step, not the median. With Horovod's
// cycle and per-replica jitter the steps differ, and the mean is what a long run averages.
func steadyThroughput(res *Result) float64 {
	st := res.StepTimes
	if len(st) > dleWarmupSteps {
		st = st[dleWarmupSteps:]
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
