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
// A user calibrates on their own box, so the experiment runs per rig first: a GPU model in one
// host (the row's hardware.host.profile), whose two runs and held-out rows all come from that
// box, its TF build and its cooling. Rigs of one GPU model differ more than a GPU parameter
// can say (the shared RTX 3090 logs come from an EPYC server and a Threadripper workstation
// with different TF builds), so a fit pooled over them answers a question no user asks. The
// second table pools each GPU model's rows over its rigs, fitted to the first pair, as a
// user with no host profile would; rigs without a ResNet-50 pair are left out of the first.
//
// Each table prints the two runs fitted, the parameters the fit moved, and the mean absolute
// error before and after the fit on the two fitted runs (FIT) and on the held-out rows
// (HELD OUT), apart: only the held-out figure says what the calibration is worth. The rig
// table's summary lines give the mean over rigs and the mean over GPU models of their rigs'
// means, so a GPU with many rigs counts once.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
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
	// GPU is the GPU model; Host the host profile of a rig's rows ("" for a GPU pooled over
	// its rigs, or rows that name no host).
	GPU, Host string
	// PerRig is true for a rig's result, false for a GPU pooled over its rigs.
	PerRig bool
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
	// Spread is the held-out rows' sibling spread (Spread), over SpreadRows of them: how far
	// one configuration's published figures are from each other, which no model can beat.
	Spread     float64
	SpreadRows int
	Fit        *calibrate.FitResult
}

// Transfer runs the experiment over the shipped single-GPU rows under data: the per-rig
// results first (PerRig), then the per-GPU ones, each sorted by GPU and host.
func Transfer(ctx context.Context, data string, jobs int) ([]GPUResult, error) {
	all, err := validate.ReadShipped(data)
	if err != nil {
		return nil, err
	}
	type key struct {
		gpu, host string
		perRig    bool
	}
	groups := map[key][]validate.Measurement{}
	for _, m := range all {
		if m.Set == "dle 1-GPU" || m.Set == "tfcnn 1-GPU" {
			rig := key{m.GPU(), m.Config.Host, true}
			groups[rig] = append(groups[rig], m)
			pooled := key{m.GPU(), "", false}
			groups[pooled] = append(groups[pooled], m)
		}
	}
	keys := make([]key, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.perRig != b.perRig {
			return a.perRig
		}
		if a.gpu != b.gpu {
			return a.gpu < b.gpu
		}
		return a.host < b.host
	})
	var out []GPUResult
	for _, k := range keys {
		r, ok, err := transferGPU(ctx, k.gpu, groups[k], jobs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", GPUResult{GPU: k.gpu, Host: k.host, PerRig: k.perRig}.Name(), err)
		}
		if ok {
			r.Host, r.PerRig = k.host, k.perRig
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
	r.Spread, r.SpreadRows = Spread(held)
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

// Spread is the mean absolute relative difference between each row of ms that has siblings
// (rows of the same configuration, metric and host: one table in several README versions,
// one benchmark in several log folders) and the mean of its siblings, and how many rows
// have any. A model that predicted every configuration's mean exactly would still be this
// far off the rows, so it is a floor under the held-out MAE of the rows it covers.
func Spread(ms []validate.Measurement) (mae float64, n int) {
	type key struct {
		config, host, tf string
		metric           validate.Metric
	}
	by := map[key][]float64{}
	keys := make([]key, len(ms))
	for i, m := range ms {
		keys[i] = key{m.Describe(), m.Config.Host, m.Config.TFVersion, m.Metric}
		by[keys[i]] = append(by[keys[i]], m.Value)
	}
	for i, m := range ms {
		vs := by[keys[i]]
		if len(vs) < 2 {
			continue
		}
		sum := -m.Value
		for _, v := range vs {
			sum += v
		}
		mae += math.Abs(m.Value/(sum/float64(len(vs)-1)) - 1)
		n++
	}
	if n > 0 {
		mae /= float64(n)
	}
	return mae, n
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

// Split parts Transfer's results into the per-rig ones and the per-GPU pooled ones.
func Split(rs []GPUResult) (rigs, gpus []GPUResult) {
	for _, r := range rs {
		if r.PerRig {
			rigs = append(rigs, r)
		} else {
			gpus = append(gpus, r)
		}
	}
	return rigs, gpus
}

func write(w io.Writer, rs []GPUResult, verbose bool) error {
	rigs, gpus := Split(rs)
	fmt.Fprintln(w, "Per rig (a GPU in one host): fit on the rig's two runs, predict its other rows")
	if err := writeTable(w, "RIG", rigs); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nPer GPU model, its rigs pooled: fit on the first pair, predict the rest")
	if err := writeTable(w, "GPU", gpus); err != nil {
		return err
	}
	if verbose {
		for _, r := range rs {
			fmt.Fprintf(w, "\n%s\n", r.Name())
			if err := r.Fit.WriteText(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// Name is the result's name in the tables: gpu@host for a rig, the GPU alone when pooled.
func (r GPUResult) Name() string {
	switch {
	case !r.PerRig:
		return r.GPU
	case r.Host == "":
		return r.GPU + "@(host not named)"
	}
	return r.GPU + "@" + r.Host
}

func writeTable(w io.Writer, first string, rs []GPUResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tFITTED ON\tMOVED\tFIT MAE (SPEC -> CAL)\tHELD OUT\tSPEC-SHEET MAE\tCALIBRATED MAE\tSIBLING SPREAD (ROWS)\n", first)
	var sb, sa, fb, fa float64
	for _, r := range rs {
		moved := strings.Join(r.Moved, ", ")
		if moved == "" {
			moved = "(none)"
		}
		spread := "-"
		if r.SpreadRows > 0 {
			spread = fmt.Sprintf("%.1f%% (%d)", 100*r.Spread, r.SpreadRows)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f%% -> %.1f%%\t%d\t%.1f%%\t%.1f%%\t%s\n", r.Name(), strings.Join(r.Fitted, "; "), moved, 100*r.FitBefore, 100*r.FitAfter, r.HeldOut, 100*r.Before, 100*r.After, spread)
		n := float64(len(rs))
		sb, sa, fb, fa = sb+r.Before/n, sa+r.After/n, fb+r.FitBefore/n, fa+r.FitAfter/n
	}
	fmt.Fprintf(tw, "mean of %d\t\t\t%.1f%% -> %.1f%%\t\t%.1f%%\t%.1f%%\n", len(rs), 100*fb, 100*fa, 100*sb, 100*sa)
	if rs[0].PerRig {
		b, a, n := MeanOverGPUs(rs)
		fmt.Fprintf(tw, "mean of %d GPU models (each its rigs' mean)\t\t\t\t\t%.1f%%\t%.1f%%\n", n, 100*b, 100*a)
	}
	return tw.Flush()
}

// MeanOverGPUs is the held-out MAE before and after the fit averaged over GPU models, each
// the mean over its rigs, and how many GPU models there are.
func MeanOverGPUs(rigs []GPUResult) (before, after float64, n int) {
	type acc struct {
		b, a float64
		n    int
	}
	by := map[string]*acc{}
	var order []string
	for _, r := range rigs {
		g := by[r.GPU]
		if g == nil {
			g = &acc{}
			by[r.GPU] = g
			order = append(order, r.GPU)
		}
		g.b, g.a, g.n = g.b+r.Before, g.a+r.After, g.n+1
	}
	for _, name := range order {
		g := by[name]
		before += g.b / float64(g.n) / float64(len(order))
		after += g.a / float64(g.n) / float64(len(order))
	}
	return before, after, len(order)
}
