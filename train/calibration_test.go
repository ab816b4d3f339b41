package train_test

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/internal/testcsv"
	"github.com/gpusim/gpusim/train"
)

// dleRow is one throughput of testdata/dle_scaling.csv: rows copied from the calibration
// table of NVIDIA's DeepLearningExamples READMEs (TensorFlow/Classification/ConvNets/
// resnet50v1.5/README.md at 415a9aa3, "Training performance" tables; TensorFlow/
// LanguageModeling/BERT/README.md at 9de48bc9, "Fine-tuning training performance for SQuAD
// v1.1"). Both are Horovod runs (training_perf.sh: mpiexec -np N python main.py), XLA on; the
// ResNet-50 runs read the real ImageNet TFRecords ("averaged over an entire training epoch").
type dleRow struct {
	commit, gpu, host, model, precision string
	batch, gpus                         int
	value                               float64
}

func readDLE(t *testing.T) []dleRow {
	t.Helper()
	_, recs := testcsv.Read(t, "testdata/dle_scaling.csv")
	var out []dleRow
	for _, r := range recs {
		b, _ := strconv.Atoi(r[7])
		n, _ := strconv.Atoi(r[8])
		v, _ := strconv.ParseFloat(r[9], 64)
		out = append(out, dleRow{commit: r[1], gpu: r[3], host: r[4], model: r[5], precision: r[6], batch: b, gpus: n, value: v})
	}
	return out
}

// dleConfig is the scenario `gpusim validate` runs for the same row of testdata/dle/dle_tf.csv
// (analysis.Measurement.Config: NVIDIA's box, Horovod with one process per GPU and fp16
// compression for BERT under AMP, ResNet-50 fed by each rank's own tf.data pipeline), so that
// this test and validate's multi-GPU figures rest on one scenario per row.
func dleConfig(t *testing.T, ms []analysis.Measurement, r dleRow, gpus int) train.Config {
	t.Helper()
	for _, m := range ms {
		if m.Source == analysis.SourceDLE && strings.Contains(m.Ref, "@"+r.commit+",") && m.GPU == r.gpu &&
			m.Host == r.host && m.Model == r.model && m.Label == r.precision && m.Batch == r.batch && m.GPUs == gpus {
			return m.Config(40)
		}
	}
	t.Fatalf("no row of testdata/dle/dle_tf.csv is %+v on %d GPUs", r, gpus)
	return train.Config{}
}

func mustRun(t *testing.T, c train.Config) *train.Result {
	t.Helper()
	res, err := train.Run(context.Background(), c)
	if err != nil {
		t.Fatalf("Run(%s): %v", c.Name, err)
	}
	return res
}

// TestDLEScaling: NVIDIA's published weak scaling (N-GPU throughput over 1-GPU throughput of
// the same table) against gpusim's, run for run, both as the mean step after the warm-up, each
// row simulated as `gpusim validate` simulates it (dleConfig). The per-step constants
// stepJitterCV and processSyncPerLevel were fitted on the DGX A100 ResNet-50 rows (AMP and
// TF32); every other row is held out. ResNet-50 must be within 3%, BERT-Large SQuAD within 5%;
// the rows listed in dleKnownOff are outside and kept at their error (a change that moves them
// shows). The log splits each row into the 1-GPU step and the multi-GPU cost per step (N-GPU
// step minus 1-GPU step), published and simulated.
// Measured at HEAD (go test ./train/ -run TestDLEScaling -v): ResNet-50 A100 TF32 -0.8%, AMP
// -0.7%; V100 FP32 -0.5%, AMP +1.0%; DGX-2 FP32 +0.7%, AMP -0.1%; BERT 7 of 12 rows within 5%
// (every FP32/TF32 row, within 4.2%, and the A100 AMP 8-GPU one, +0.9%).
func TestDLEScaling(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 48 runs")
	}
	rows := readDLE(t)
	ms, err := analysis.ReadMeasurements("../testdata")
	if err != nil {
		t.Fatal(err)
	}
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
			simOne[k] = steadyThroughput(mustRun(t, dleConfig(t, ms, r, 1)))
		}
		b := float64(r.batch)
		res := mustRun(t, dleConfig(t, ms, r, r.gpus))
		if res.OOM != nil {
			t.Errorf("%v x%d: OOM %s", k, r.gpus, res.OOM.Message)
			continue
		}
		want := r.value / one[k]
		got := steadyThroughput(res) / simOne[k]
		errPct := 100 * (got/want - 1)
		// Named by the model without its impl option (the TF1 rows' google-research).
		model, _, _ := strings.Cut(r.model, ",impl=")
		name := fmt.Sprintf("%s %s %s batch %d on %d GPUs (%s)", model, r.gpu, r.precision, r.batch, r.gpus, r.host)
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
// in %). BERT under AMP (Horovod with Compression.fp16): gpusim's multi-GPU cost per step is
// 16-26 ms where the table's is 30-47 ms (DGX-2 8 GPUs: 128 ms, the table gaining only 1.71x
// from 4 to 8 GPUs). These cells were measured before NVIDIA's run_squad.py bound each rank to
// its GPU's CPUs (mpirun -bind-to none; set_affinity came in with c0ed4be8). The one cell
// re-measured after that, the A100 8-GPU row (36c0549c), went from 180 to 21 ms, which gpusim
// matches. Horovod's float16 path costs no more per byte than float32's, so compression halves
// the NCCL time (testdata/dle/README.md, "BERT-Large SQuAD on several GPUs under AMP"). On V100
// gpusim's 1-GPU step is also slower than the table's (DGX-1: 174 against 134 ms, with the 20.06
// scripts' resource variables, analysis.Measurement.dleResourceVariables), which weighs the same
// cost less: both push the scaling up (docs/multigpu.md lists the per-step costs checked in the
// sources).
var dleKnownOff = map[string]float64{
	"bert-large:seq=384 v100-16gb amp_fp16 batch 4 on 4 GPUs (dgx-1)":       7.8,
	"bert-large:seq=384 v100-16gb amp_fp16 batch 4 on 8 GPUs (dgx-1)":       12.0,
	"bert-large:seq=384 v100-sxm3-32gb amp_fp16 batch 24 on 4 GPUs (dgx-2)": 5.7,
	"bert-large:seq=384 v100-sxm3-32gb amp_fp16 batch 24 on 8 GPUs (dgx-2)": 22.9,
	"bert-large:seq=384 a100-40gb amp_fp16 batch 32 on 4 GPUs (dgx-a100)":   6.3,
}

// dleWarmupSteps are the first steps a DLE throughput leaves out: the XLA compilation and the
// autotuning steps (run_squad.py's LogTrainRunHook skips num_steps_ignore_xla = 100 of some
// thousands; gpusim compiles at step 1).
const dleWarmupSteps = 5

// steadyThroughput is the throughput as the DLE scripts compute it: samples over the total
// time of the steps after the warm-up (run_squad.py: (num_train_steps - skipped) x
// global_batch_size / train_time_wo_overhead), the mean step, not the median. With Horovod's
// cycle and per-replica jitter the steps differ, and the mean is what a long run averages.
func steadyThroughput(res *train.Result) float64 {
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
