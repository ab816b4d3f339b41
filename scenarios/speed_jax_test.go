package scenarios_test

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/scenarios"
	"github.com/gpusim/gpusim/train"
)

// The JAX ground truth (testdata/h200/jax): jitted pure-JAX training steps on the H200, the
// closest stand-in for TF with jit_compile=True that the device machine has (same compiler,
// one program per step, no per-op host time). configs.csv lists the configs that
// tools/h200/jax_step.py measures; steps.csv, once measured, holds its results.
const (
	jaxConfigsCSV = "../testdata/h200/jax/configs.csv"
	jaxStepsCSV   = "../testdata/h200/jax/steps.csv"
	// jaxMAETarget is the target for the MAE against step_s (each step synced, as
	// Keras fit with verbose=1 syncs every step to update its progress bar). The per-step
	// host dispatch these steps pay (step_s - pipelined_step_s, 3.5-5.9 ms) is
	// hw.DefaultStepOverhead, measured on them; against pipelined_step_s (the GPU's time) the
	// MAE is logged as well. Three configs of a pure-JAX proxy are too few to hold a target
	// against: the test logs whether it is met and fails only on a config that does not run.
	jaxMAETarget = 0.15
)

// jaxRow is one config of configs.csv, with its measurement when read from steps.csv.
type jaxRow struct {
	model, prec, optimizer string
	batch, size            int
	step                   float64 // measured median step time, seconds (0: not measured)
	pipelined              float64 // measured step of 20 steps dispatched back to back (0: none)
	peak                   int64   // measured peak_bytes_in_use (0: not measured)
	line                   int
}

// readJAXRows reads configs.csv or jax_step.py's steps.csv. Rows with a non-empty error column
// (a config that failed on the device) are skipped; with measured, a row needs step_s. Errors
// name file:line:field.
func readJAXRows(name string, r io.Reader, measured bool) ([]jaxRow, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s:1: no header", name)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	need := []string{"model", "prec", "batch", "size", "optimizer"}
	if measured {
		need = append(need, "step_s")
	}
	for _, k := range need {
		if _, ok := col[k]; !ok {
			return nil, fmt.Errorf("%s:1:%s: missing column", name, k)
		}
	}
	var out []jaxRow
	for i, rec := range recs[1:] {
		line := i + 2
		get := func(k string) string {
			if j, ok := col[k]; ok && j < len(rec) {
				return rec[j]
			}
			return ""
		}
		if get("error") != "" {
			continue
		}
		num := func(k string) (float64, error) {
			v, err := strconv.ParseFloat(get(k), 64)
			if err != nil {
				return 0, fmt.Errorf("%s:%d:%s: %w", name, line, k, err)
			}
			return v, nil
		}
		row := jaxRow{model: get("model"), prec: get("prec"), optimizer: get("optimizer"), line: line}
		switch row.prec {
		case "tf32", "fp32", "bf16":
		default:
			return nil, fmt.Errorf("%s:%d:prec: %q, want tf32, fp32 or bf16", name, line, row.prec)
		}
		b, err := num("batch")
		if err != nil {
			return nil, err
		}
		s, err := num("size")
		if err != nil {
			return nil, err
		}
		row.batch, row.size = int(b), int(s)
		if measured {
			if row.step, err = num("step_s"); err != nil {
				return nil, err
			}
			if row.step <= 0 {
				return nil, fmt.Errorf("%s:%d:step_s: %g, want > 0", name, line, row.step)
			}
			if get("pipelined_step_s") != "" {
				if row.pipelined, err = num("pipelined_step_s"); err != nil {
					return nil, err
				}
			}
			if get("peak_bytes") != "" {
				p, err := num("peak_bytes")
				if err != nil {
					return nil, err
				}
				row.peak = int64(p)
			}
		}
		out = append(out, row)
	}
	return out, nil
}

func readJAXFile(t *testing.T, path string, measured bool) []jaxRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := readJAXRows(path, f, measured)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// jaxSettings are the --set overrides a user would give `gpusim run` for a measured config:
// the zoo model at the measured sequence or image size (BERT-base with its classification
// head), the batch, the precision, XLA on, the H200, the harness's optimizer.
func jaxSettings(r jaxRow) []string {
	model := r.model
	switch r.model {
	case "bert-base":
		model = fmt.Sprintf("bert-base:seq=%d,head=classification", r.size)
	case "gpt2":
		model = fmt.Sprintf("gpt2:seq=%d", r.size)
	default:
		if r.size != 224 {
			model = fmt.Sprintf("%s:image=%d", r.model, r.size)
		}
	}
	prec, tf32 := "float32", "true"
	switch r.prec {
	case "fp32":
		tf32 = "false"
	case "bf16":
		prec = "mixed_bfloat16"
	}
	return []string{"model=" + model, "batch=" + strconv.Itoa(r.batch), "precision=" + prec, "tf32=" + tf32,
		"xla=true", "hardware.gpu=h200", "optimizer=" + r.optimizer, "steps=8"}
}

// jaxSimulate runs a config as `gpusim run --set ...` does: the default built-in scenario
// with the overrides.
func jaxSimulate(r jaxRow) (*train.Result, error) {
	sc, err := scenarios.Resolve("default")
	if err != nil {
		return nil, err
	}
	if err := sc.SetAll(jaxSettings(r)); err != nil {
		return nil, err
	}
	res, err := train.Run(context.Background(), sc.Config)
	if err != nil {
		return nil, err
	}
	if res.OOM != nil {
		return nil, fmt.Errorf("OOM: %s", res.OOM.Message)
	}
	if res.StepTime <= 0 {
		return nil, errors.New("no step completed")
	}
	return res, nil
}

// jaxErrors summarises simulated/measured - 1 per config: the MAE per precision and over all.
type jaxErrors struct {
	byPrec map[string][]float64
	all    []float64
}

func (e *jaxErrors) add(prec string, rel float64) {
	if e.byPrec == nil {
		e.byPrec = map[string][]float64{}
	}
	e.byPrec[prec] = append(e.byPrec[prec], rel)
	e.all = append(e.all, rel)
}

func jaxMAE(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += math.Abs(x)
	}
	return s / float64(len(v))
}

func TestReadJAXRows(t *testing.T) {
	tests := []struct {
		name, in string
		measured bool
		want     []jaxRow
		wantErr  string
	}{
		{"configs", "model,prec,batch,size,optimizer\nresnet50,tf32,64,224,momentum\ngpt2,bf16,4,1024,adamw\n", false,
			[]jaxRow{{model: "resnet50", prec: "tf32", optimizer: "momentum", batch: 64, size: 224, line: 2},
				{model: "gpt2", prec: "bf16", optimizer: "adamw", batch: 4, size: 1024, line: 3}}, ""},
		{"measured, failed row skipped", "model,prec,batch,size,optimizer,step_s,peak_bytes,error\n" +
			"vgg16,bf16,32,224,momentum,0.0125,4000000000,\nvgg16,bf16,128,224,momentum,,,XlaRuntimeError: oom\n", true,
			[]jaxRow{{model: "vgg16", prec: "bf16", optimizer: "momentum", batch: 32, size: 224, step: 0.0125, peak: 4e9, line: 2}}, ""},
		{"pipelined", "model,prec,batch,size,optimizer,step_s,pipelined_step_s\nbert-base,bf16,16,128,adamw,0.0103,0.0067\n", true,
			[]jaxRow{{model: "bert-base", prec: "bf16", optimizer: "adamw", batch: 16, size: 128, step: 0.0103, pipelined: 0.0067, line: 2}}, ""},
		{"bad pipelined", "model,prec,batch,size,optimizer,step_s,pipelined_step_s\nbert-base,bf16,16,128,adamw,0.0103,x\n", true, nil, "t.csv:2:pipelined_step_s"},
		{"bad batch", "model,prec,batch,size,optimizer\nresnet50,tf32,x,224,momentum\n", false, nil, "t.csv:2:batch"},
		{"bad prec", "model,prec,batch,size,optimizer\nresnet50,fp8,64,224,momentum\n", false, nil, "t.csv:2:prec"},
		{"no step column", "model,prec,batch,size,optimizer\nresnet50,tf32,64,224,momentum\n", true, nil, "t.csv:1:step_s"},
		{"zero step", "model,prec,batch,size,optimizer,step_s\nresnet50,tf32,64,224,momentum,0\n", true, nil, "t.csv:2:step_s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readJAXRows("t.csv", strings.NewReader(tc.in), tc.measured)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d rows %+v, want %+v", len(got), got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("row %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestJAXSettings(t *testing.T) {
	tests := []struct {
		row  jaxRow
		want string
	}{
		{jaxRow{model: "resnet50", prec: "tf32", optimizer: "momentum", batch: 64, size: 224},
			"model=resnet50 batch=64 precision=float32 tf32=true xla=true hardware.gpu=h200 optimizer=momentum steps=8"},
		{jaxRow{model: "bert-base", prec: "bf16", optimizer: "adamw", batch: 16, size: 128},
			"model=bert-base:seq=128,head=classification batch=16 precision=mixed_bfloat16 tf32=true xla=true hardware.gpu=h200 optimizer=adamw steps=8"},
		{jaxRow{model: "gpt2", prec: "fp32", optimizer: "adamw", batch: 4, size: 1024},
			"model=gpt2:seq=1024 batch=4 precision=float32 tf32=false xla=true hardware.gpu=h200 optimizer=adamw steps=8"},
	}
	for _, tc := range tests {
		if got := strings.Join(jaxSettings(tc.row), " "); got != tc.want {
			t.Errorf("jaxSettings(%+v) = %q, want %q", tc.row, got, tc.want)
		}
	}
}

// TestJAXConfigsThroughScenarios runs every config the JAX harness measures through the
// scenario loader and train.Run, as a user would, and logs the predictions (docs/speed.md's
// "JAX/XLA ground truth" table). It fails when a config does not load, runs out of memory on
// the H200 or does not finish a step, when configs.csv lacks 5 models x 2 precisions x 2
// batches, or when bf16 is not faster than TF32 at a model's larger batch (H200: 989 vs 494
// dense TFLOP/s, NVIDIA H200 datasheet).
func TestJAXConfigsThroughScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("20 simulated runs")
	}
	rows := readJAXFile(t, jaxConfigsCSV, false)
	batches := map[[2]string]map[int]bool{}
	step := map[[3]string]float64{}
	for _, r := range rows {
		res, err := jaxSimulate(r)
		if err != nil {
			t.Fatalf("%s:%d: %s %s batch %d (--set %s): %v", jaxConfigsCSV, r.line, r.model, r.prec, r.batch,
				strings.Join(jaxSettings(r), " --set "), err)
		}
		k := [2]string{r.model, r.prec}
		if batches[k] == nil {
			batches[k] = map[int]bool{}
		}
		batches[k][r.batch] = true
		step[[3]string{r.model, r.prec, strconv.Itoa(r.batch)}] = res.StepTime
		t.Logf("%-12s %-4s batch %4d: simulated %8.2f ms/step, peak %6.2f GiB, first step compiles %.1f s",
			r.model, r.prec, r.batch, 1e3*res.StepTime, float64(res.Devices[0].PeakBytesInUse)/(1<<30), res.XLACompileTime)
	}
	models := map[string]bool{}
	for k, b := range batches {
		models[k[0]] = true
		if len(b) < 2 {
			t.Errorf("%s %s: %d batch sizes in %s, want 2", k[0], k[1], len(b), jaxConfigsCSV)
		}
	}
	if len(models) < 5 || len(batches) < 10 {
		t.Errorf("%s: %d models, %d (model, precision) pairs; want 5 x 2", jaxConfigsCSV, len(models), len(batches))
	}
	for k, b := range batches {
		if k[1] != "bf16" {
			continue
		}
		big := 0
		for n := range b {
			big = max(big, n)
		}
		bf, tf := step[[3]string{k[0], "bf16", strconv.Itoa(big)}], step[[3]string{k[0], "tf32", strconv.Itoa(big)}]
		if tf > 0 && bf >= tf {
			t.Errorf("%s batch %d: bf16 %.2f ms >= tf32 %.2f ms; want bf16 faster on the H200", k[0], big, 1e3*bf, 1e3*tf)
		}
	}
}

// TestJAXStepTimeThroughRun compares the simulator with the measured JAX step times: the MAE
// per precision and over all, the worst configs, and whether it meets jaxMAETarget. It skips
// while testdata/h200/jax/steps.csv has not been measured (see its README for the command).
func TestJAXStepTimeThroughRun(t *testing.T) {
	if _, err := os.Stat(jaxStepsCSV); errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s not measured yet: run tools/h200/jax_step.py on the H200 (testdata/h200/jax/README.md)", jaxStepsCSV)
	}
	rows := readJAXFile(t, jaxStepsCSV, true)
	var e, pipe jaxErrors
	type worst struct {
		name string
		rel  float64
	}
	var ws []worst
	for _, r := range rows {
		res, err := jaxSimulate(r)
		if err != nil {
			t.Fatalf("%s:%d: %s %s batch %d: %v", jaxStepsCSV, r.line, r.model, r.prec, r.batch, err)
		}
		rel := res.StepTime/r.step - 1
		e.add(r.prec, rel)
		name := fmt.Sprintf("%s %s %d", r.model, r.prec, r.batch)
		ws = append(ws, worst{name, rel})
		mem := ""
		if r.peak > 0 {
			mem = fmt.Sprintf(", peak simulated %.2f GiB vs measured %.2f GiB", float64(res.Devices[0].PeakBytesInUse)/(1<<30), float64(r.peak)/(1<<30))
		}
		pl := ""
		if r.pipelined > 0 {
			prel := res.StepTime/r.pipelined - 1
			pipe.add(r.prec, prel)
			pl = fmt.Sprintf(", pipelined %.2f ms (%+.1f%%)", 1e3*r.pipelined, 100*prel)
		}
		t.Logf("%-22s simulated %8.2f ms, measured %8.2f ms (%+6.1f%%)%s%s", name, 1e3*res.StepTime, 1e3*r.step, 100*rel, pl, mem)
	}
	if len(e.all) == 0 {
		t.Fatalf("%s: no measured row", jaxStepsCSV)
	}
	precs := make([]string, 0, len(e.byPrec))
	for p := range e.byPrec {
		precs = append(precs, p)
	}
	sort.Strings(precs)
	for _, p := range precs {
		t.Logf("MAE %s: %.1f%% over %d configs", p, 100*jaxMAE(e.byPrec[p]), len(e.byPrec[p]))
	}
	sort.Slice(ws, func(i, j int) bool { return math.Abs(ws[i].rel) > math.Abs(ws[j].rel) })
	for _, w := range ws[:min(5, len(ws))] {
		t.Logf("worst: %s %+.1f%%", w.name, 100*w.rel)
	}
	if len(pipe.all) > 0 {
		t.Logf("step-time MAE vs JAX pipelined_step_s (GPU time, no per-step sync): %.1f%% over %d configs", 100*jaxMAE(pipe.all), len(pipe.all))
	}
	got := jaxMAE(e.all)
	met := "met"
	if got > jaxMAETarget {
		met = "not met"
	}
	t.Logf("step-time MAE vs JAX/XLA through train.Run: %.1f%% over %d configs (issue target %.0f%%: %s)", 100*got, len(e.all), 100*jaxMAETarget, met)
}
