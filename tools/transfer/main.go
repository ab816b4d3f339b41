// Command transfer measures what a calibration from two runs is worth on runs it did not see:
// for each GPU of the shipped single-GPU sets (real TensorFlow: NVIDIA's DLE tables and the
// tf_cnn_benchmarks logs of the RTX 2080 Ti and 3090), it fits the GPU's
// profile (calibrate.Fit, as gpusim calibrate fit does) to two single-GPU ResNet-50 step
// times, one in float32 (TF32 on Ampere) and one under AMP, and predicts every other
// single-GPU row of that GPU with the spec-sheet profile and with the fitted one. Run it from
// the repository root:
//
//	go run ./tools/transfer
//
// It prints, per GPU, the two runs fitted, the parameters the fit moved, and the mean absolute
// error before and after the fit on the two fitted runs (FIT) and on the held-out rows
// (HELD OUT), apart: only the held-out figure says what the calibration is worth.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/calibrate"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/validate"
)

func main() {
	data := flag.String("data", "testdata", "the repository's testdata directory")
	verbose := flag.Bool("v", false, "print each fit's parameter table")
	flag.Parse()
	rs, err := Transfer(context.Background(), *data, runtime.GOMAXPROCS(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "transfer:", err)
		os.Exit(1)
	}
	if err := write(os.Stdout, rs, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "transfer:", err)
		os.Exit(1)
	}
}

// GPUResult is one GPU's calibration and what it predicts.
type GPUResult struct {
	GPU string
	// Fitted are the two runs the fit saw; HeldOut how many rows it predicts.
	Fitted  []string
	HeldOut int
	// Moved names the parameters the fit moved.
	Moved []string
	// Before and After are the held-out rows' mean absolute relative error with the
	// spec-sheet profile and with the fitted one.
	Before, After float64
	// FitBefore and FitAfter are the same on the two fitted step times.
	FitBefore, FitAfter float64
	Fit                 *calibrate.FitResult
}

// Transfer runs the experiment over the single-GPU DLE rows under data.
func Transfer(ctx context.Context, data string, jobs int) ([]GPUResult, error) {
	all, err := validate.ReadShipped(data)
	if err != nil {
		return nil, err
	}
	byGPU := map[string][]validate.Measurement{}
	for _, m := range all {
		if m.Set == "dle 1-GPU" || m.Set == "tfcnn 1-GPU" {
			byGPU[m.GPU()] = append(byGPU[m.GPU()], m)
		}
	}
	gpus := make([]string, 0, len(byGPU))
	for g := range byGPU {
		gpus = append(gpus, g)
	}
	sort.Strings(gpus)
	var out []GPUResult
	for _, g := range gpus {
		r, ok, err := transferGPU(ctx, g, byGPU[g], jobs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g, err)
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// fitRows picks the two ResNet-50 runs of a GPU: per precision class (float32/TF32, AMP or
// fp16) the first row of its set file (dle_tf.csv lists the newest README table first);
// false when the GPU lacks one.
func fitRows(ms []validate.Measurement) (fp32, amp int, ok bool) {
	fp32, amp = -1, -1
	for i, m := range ms {
		if !strings.HasPrefix(m.Model(), "resnet50") || m.Metric != validate.Throughput {
			continue
		}
		switch {
		case m.Precision() == "float32" && fp32 < 0:
			fp32 = i
		case m.Precision() == "mixed_float16" && amp < 0:
			amp = i
		}
	}
	return fp32, amp, fp32 >= 0 && amp >= 0
}

func transferGPU(ctx context.Context, gpu string, ms []validate.Measurement, jobs int) (GPUResult, bool, error) {
	i32, i16, ok := fitRows(ms)
	if !ok {
		return GPUResult{}, false, nil
	}
	base, err := hw.LookupGPU(gpu)
	if err != nil {
		return GPUResult{}, false, err
	}
	var obs []calibrate.Observation
	for _, i := range []int{i32, i16} {
		obs = append(obs, observation(ctx, base, ms[i]))
	}
	fit, err := calibrate.Fit(obs, calibrate.FitConfig{Params: calibrate.PriorParams(base, 1)})
	if err != nil {
		return GPUResult{}, false, err
	}
	var held []validate.Measurement
	for i, m := range ms {
		if i != i32 && i != i16 {
			held = append(held, m)
		}
	}
	calibrated := calibrate.ApplyParams(base, fit.Params)
	r := GPUResult{GPU: gpu, HeldOut: len(held), Fit: fit, Fitted: []string{ms[i32].Describe(), ms[i16].Describe()}}
	r.FitBefore, r.FitAfter = calibrate.MAE(fit.Residuals)
	for _, p := range fit.Table {
		if p.Identified {
			r.Moved = append(r.Moved, p.Name)
		}
	}
	if r.Before, err = heldMAE(ctx, held, nil, jobs); err != nil {
		return GPUResult{}, false, err
	}
	if r.After, err = heldMAE(ctx, held, &calibrated, jobs); err != nil {
		return GPUResult{}, false, err
	}
	return r, true, nil
}

// observation is a DLE ResNet-50 row as a calibration observation: its step time (the
// global batch over the table's throughput) and the row's scenario run with the candidate
// profile.
func observation(ctx context.Context, base hw.GPU, m validate.Measurement) calibrate.Observation {
	cfg := m.Config
	cfg.Steps, cfg.Name = 20, m.Ref
	return calibrate.Observation{
		Name:     m.Describe(),
		StepTime: float64(cfg.Batch) / m.Value,
		Predict: func(p calibrate.Params) (calibrate.Prediction, error) {
			g := calibrate.ApplyParams(base, p)
			c := cfg
			c.GPUProfile = &g
			res, err := train.Run(ctx, c)
			if err != nil {
				return calibrate.Prediction{}, err
			}
			if res.OOM != nil {
				return calibrate.Prediction{}, fmt.Errorf("%s: OOM", m.Ref)
			}
			return calibrate.Prediction{StepTime: res.StepTime}, nil
		},
	}
}

// heldMAE scores ms with profile g (nil: each row's own GPU).
func heldMAE(ctx context.Context, ms []validate.Measurement, g *hw.GPU, jobs int) (float64, error) {
	var run analysis.RunFunc
	if g != nil {
		run = func(ctx context.Context, cfg train.Config) (*train.Result, error) {
			cfg.GPUProfile = g
			return train.Run(ctx, cfg)
		}
	}
	v, err := validate.Score(ctx, ms, validate.Options{Jobs: jobs, Run: run})
	if err != nil {
		return 0, err
	}
	gr, ok := v.Group(ms[0].Set, "all", "")
	if !ok {
		return 0, fmt.Errorf("no scored rows")
	}
	return gr.MAE, nil
}

func write(w io.Writer, rs []GPUResult, verbose bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tFITTED ON\tMOVED\tFIT MAE (SPEC -> CAL)\tHELD OUT\tSPEC-SHEET MAE\tCALIBRATED MAE")
	var sb, sa, fb, fa float64
	for _, r := range rs {
		moved := strings.Join(r.Moved, ", ")
		if moved == "" {
			moved = "(none)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f%% -> %.1f%%\t%d\t%.1f%%\t%.1f%%\n", r.GPU, strings.Join(r.Fitted, "; "), moved, 100*r.FitBefore, 100*r.FitAfter, r.HeldOut, 100*r.Before, 100*r.After)
		n := float64(len(rs))
		sb, sa, fb, fa = sb+r.Before/n, sa+r.After/n, fb+r.FitBefore/n, fa+r.FitAfter/n
	}
	fmt.Fprintf(tw, "mean of %d GPUs\t\t\t%.1f%% -> %.1f%%\t\t%.1f%%\t%.1f%%\n", len(rs), 100*fb, 100*fa, 100*sb, 100*sa)
	if err := tw.Flush(); err != nil {
		return err
	}
	if verbose {
		for _, r := range rs {
			fmt.Fprintf(w, "\n%s\n", r.GPU)
			if err := r.Fit.WriteText(w); err != nil {
				return err
			}
		}
	}
	return nil
}
