package train

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/gpusim/gpusim/internal/testcsv"
)

// TestKerasTraceKernelTime: the GPU time gpusim prices for one Keras 3 train step (every op's
// kernels, no host dispatch) against the summed kernel durations of the real step under the
// JAX profiler on the H200 (testdata/h200/keras/trace/steps.csv, trace_kernel_ms_per_step;
// tools/h200/memkinds.py --parts keras). Not fitted: the traces located the passes the plan
// charged and XLA does not run (models.TestXLAGradientsAsKerasTraces).
//
// VGG16 float32 b128, its max-pool gradient priced as XLA expands it, is priced
// 6.0% short: its ReLU-gradient and bias-gradient fusions (input_reduce_select_fusion) and its
// pool kernels (reduce-window, scatter) stream slower than the kinds' rates
// (testdata/h200/keras/trace/README.md). Every row is held to the project's target for real
// Keras on the H200, step time within 10%, not to the gap each row shows today.
func TestKerasTraceKernelTime(t *testing.T) {
	const target = 0.10
	col, recs := testcsv.Read(t, "../testdata/h200/keras/trace/steps.csv")
	for _, rec := range recs {
		model, prec := rec[col["model"]], rec[col["precision"]]
		batch, _ := strconv.Atoi(rec[col["batch"]])
		want, err := strconv.ParseFloat(rec[col["trace_kernel_ms_per_step"]], 64)
		if err != nil {
			t.Fatalf("steps.csv row %v: want trace_kernel_ms_per_step", rec)
		}
		cfg := DefaultConfig()
		cfg.Model, cfg.Precision, cfg.GPU, cfg.Batch, cfg.XLA, cfg.Framework, cfg.KerasVersion, cfg.Optimizer = model, prec, "h200", batch, true, "jax", 3, "momentum"
		cfg.InputOnDevice = true
		r, err := newRunner(cfg, true)
		if err != nil {
			t.Fatal(err)
		}
		var got float64
		for _, c := range r.replicas[0].plans[0].costs {
			got += c.exec.Seconds()
		}
		got *= 1e3
		t.Logf("%s %s b%d: priced kernels %.2f ms, traced %.2f ms (%+.1f%%)", model, prec, batch, got, want, 100*(got/want-1))
		key := fmt.Sprintf("%s %s b%d", model, prec, batch)
		if math.Abs(got/want-1) > target {
			t.Errorf("%s: priced kernel time %.2f ms, traced %.2f ms: more than %.0f%% apart", key, got, want, 100*target)
		}
	}
}
