package train_test

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/gpusim/gpusim/internal/testcsv"
	"github.com/gpusim/gpusim/train"
)

// heldOutMisses are the held-out configs that miss one of issue 34's targets today, with why
// (testdata/h200/keras/heldout/README.md says more). TestKerasHeldOut only logs a known miss,
// also one that comes within its target (issue 29: a known miss that improves never fails;
// the log says to take the entry out), and fails when any other config misses.
var heldOutMisses = map[string]string{
	// The synchronised step is host-bound: XLA's GpuExecutable issues 130 command buffers and
	// some 460 cuDNN and fusion thunks outside them per step (22.9 ms of host time under the
	// profiler) for 13.2 ms of kernels; gpusim charges XLA's host nothing per thunk
	// (hw.GraphHostPerKernel) and predicts the kernels plus the Keras dispatch.
	"efficientnetv2b0 mixed_float16 step": "host-bound thunk issue not modelled",
	// The BFC peak is reached while XLA compiles the step (testdata/h200/keras/compilemem):
	// 3.22 GiB right after compile(), before any step, and 2.37 GiB (the state and the step's
	// 2.26 GiB temp buffer) with --xla_gpu_autotune_level=0. Its 3.04 GiB allocation is a
	// cuDNN engine's workspace the convolution autotuner tries (conv_algorithm_picker.cc,
	// AutotuneOneConvRunner: no memory limit); gpusim does not know cuDNN's candidate
	// workspaces and predicts the step's peak, which TestKerasStepPeakNoAutotune checks.
	"mobilenetv3large mixed_float16 peak": "compile-time autotuning workspace not modelled",
	// The same compile-time peak in the repeat (testdata/h200/keras/hostissue: 3.220 GiB).
	"mobilenetv3large mixed_float16 peak, hostissue": "compile-time autotuning workspace not modelled",
}

// TestKerasHeldOut: issue 34's targets on the H200 recordings of the Keras 3 models no
// gpusim constant was fitted on (testdata/h200/keras/heldout/README.md): the device-fed step
// within 10% and the peak memory within 5%, each. ConvNeXtTiny's step is not independent of
// the 7x7 depthwise micro-benchmark at its own layer shapes (hw.DepthwiseLargeWgrad).
func TestKerasHeldOut(t *testing.T) {
	type row struct {
		model, precision, rec string
		stepMS, peakB         float64
	}
	var rows []row
	// The clean recordings (one model at a time on the machine): ResNet50V2, ConvNeXtTiny,
	// and the two half-precision configs.
	col, recs := testcsv.Read(t, "../testdata/h200/profiles/steps.csv")
	for _, r := range recs {
		m, p := r[col["model"]], r[col["precision"]]
		if (m == "resnet50v2" || m == "convnexttiny") && p == "float32" || p == "mixed_float16" {
			rows = append(rows, row{m, p, "", num(t, r[col["sync_median_ms"]]), num(t, r[col["peak_bytes"]])})
		}
	}
	// The half-precision configs again, a day later with the same script and software
	// (testdata/h200/keras/hostissue), 40 synchronised steps each.
	col, recs = testcsv.Read(t, "../testdata/h200/keras/hostissue/steps.csv")
	for _, r := range recs {
		if m := r[col["model"]]; m == "efficientnetv2b0" || m == "mobilenetv3large" {
			rows = append(rows, row{m, r[col["precision"]], "hostissue", num(t, r[col["sync_median_ms"]]), num(t, r[col["peak_bytes"]])})
		}
	}
	// The float32 MobileNetV3Large and EfficientNetV2B0, recorded only in the held-out call.
	peak := map[string]float64{}
	col, recs = testcsv.Read(t, "../testdata/h200/keras/heldout/memory.csv")
	for _, r := range recs {
		if r[col["point"]] == "after_first_step" {
			peak[r[col["model"]]] = num(t, r[col["peak_bytes_in_use"]])
		}
	}
	col, recs = testcsv.Read(t, "../testdata/h200/keras/heldout/steps.csv")
	for _, r := range recs {
		if m := r[col["model"]]; m == "mobilenetv3large" || m == "efficientnetv2b0" {
			rows = append(rows, row{m, r[col["precision"]], "", num(t, r[col["device_sync_median_ms"]]), peak[m]})
		}
	}
	if len(rows) != 8 {
		t.Fatalf("%d held-out configs, want 8", len(rows))
	}
	apps := map[string]string{"resnet50v2": "ResNet50V2", "convnexttiny": "ConvNeXtTiny",
		"efficientnetv2b0": "EfficientNetV2B0", "mobilenetv3large": "MobileNetV3Large"}
	dir := t.TempDir()
	seen := map[string]bool{}
	for _, r := range rows {
		path := filepath.Join(dir, apps[r.model]+".json")
		if !seen[path] {
			writeKeras3Config(t, "../models/testdata/keras3/apps/"+apps[r.model]+".json.gz", path)
			seen[path] = true
		}
		c := train.DefaultConfig()
		// The MobileNetV3 exports leave their image size unset; the others ignore it.
		c.Model, c.Precision, c.GPU, c.Batch, c.XLA = "@"+path+":image=224", r.precision, "h200", 128, true
		c.Framework, c.KerasVersion, c.Optimizer, c.InputOnDevice = "jax", 3, "momentum", true
		res := mustRun(t, c)
		check := func(what string, got, want, tol float64) {
			key := r.model + " " + r.precision + " " + what
			if r.rec != "" {
				key += ", " + r.rec
			}
			e := got/want - 1
			t.Logf("%-52s gpusim %9.3f measured %9.3f (%+.1f%%)", key, got, want, 100*e)
			_, known := heldOutMisses[key]
			switch {
			case known && math.Abs(e) <= tol:
				t.Logf("%s: a known miss now within %.0f%% (%+.1f%%): take it out of heldOutMisses", key, 100*tol, 100*e)
			case !known && math.Abs(e) > tol:
				t.Errorf("%s: gpusim %.3f, measured %.3f (%+.1f%%): want within %.0f%%", key, got, want, 100*e, 100*tol)
			}
		}
		check("step", 1e3*res.StepTime, r.stepMS, 0.10)
		check("peak", float64(res.Devices[0].PeakBytesInUse)/(1<<30), r.peakB/(1<<30), 0.05)
	}
}

// TestKerasStepPeakNoAutotune: the peak of the executed step alone, the BFC peak of the same
// configs with XLA's autotuning off (--xla_gpu_autotune_level=0: compile allocates nothing,
// testdata/h200/keras/compilemem), within issue 34's 5%: for MobileNetV3Large mixed_float16
// this is the step that TestKerasHeldOut's peak miss leaves out (its compile-time autotuner
// workspace), for EfficientNetV2B0 mixed_float16 the same peak as with autotuning.
func TestKerasStepPeakNoAutotune(t *testing.T) {
	apps := map[string]string{"efficientnetv2b0": "EfficientNetV2B0", "mobilenetv3large": "MobileNetV3Large"}
	col, recs := testcsv.Read(t, "../testdata/h200/keras/compilemem/compilemem.csv")
	dir := t.TempDir()
	n := 0
	for _, r := range recs {
		if r[col["autotune"]] != "0" || r[col["path"]] != "aot" || r[col["point"]] != "after_first_step" {
			continue
		}
		m, p := r[col["model"]], r[col["precision"]]
		path := filepath.Join(dir, apps[m]+".json")
		writeKeras3Config(t, "../models/testdata/keras3/apps/"+apps[m]+".json.gz", path)
		c := train.DefaultConfig()
		c.Model, c.Precision, c.GPU, c.Batch, c.XLA = "@"+path+":image=224", p, "h200", 128, true
		c.Framework, c.KerasVersion, c.Optimizer, c.InputOnDevice = "jax", 3, "momentum", true
		got := float64(mustRun(t, c).Devices[0].PeakBytesInUse) / (1 << 30)
		want := num(t, r[col["peak_bytes_in_use"]]) / (1 << 30)
		t.Logf("%s %s peak without autotuning: gpusim %.3f GiB, measured %.3f GiB (%+.1f%%)", m, p, got, want, 100*(got/want-1))
		if math.Abs(got/want-1) > 0.05 {
			t.Errorf("%s %s: gpusim peak %.3f GiB, measured without autotuning %.3f GiB: want within 5%%", m, p, got, want)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d configs without autotuning in compilemem.csv, want 2", n)
	}
}

// writeKeras3Config writes the Keras config of a models/testdata/keras3 export (a gzipped
// JSON object whose "config" is model.to_json()'s) to path.
func writeKeras3Config(t *testing.T, export, path string) {
	t.Helper()
	f, err := os.Open(export)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Config json.RawMessage `json:"config"`
	}
	if err := json.NewDecoder(z).Decode(&e); err != nil || len(e.Config) == 0 {
		t.Fatalf("%s: no config (%v)", export, err)
	}
	if err := os.WriteFile(path, e.Config, 0o644); err != nil {
		t.Fatal(err)
	}
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(fmt.Errorf("%q: %v", s, err))
	}
	return v
}
