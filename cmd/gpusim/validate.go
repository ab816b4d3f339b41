package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/gpusim/gpusim"
	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/validate"
)

func init() {
	register(command{name: "validate", summary: "predicted vs measured: the real measurements the project ships, or your own", run: runValidate})
}

// validateExamples are the usage examples of gpusim validate; a test runs each of them.
var validateExamples = []string{
	"gpusim validate",
	"gpusim validate --set dle --rows",
	"gpusim validate --set dle -o json",
	"gpusim validate --data examples/my-fleet.csv --plot out/",
}

const validateUsage = `Usage:
  gpusim validate [--data DIR|FILE] [--set NAME]... [--rows] [--plot DIR] [-o text|json]

Runs real measurements through gpusim, each as the scenario that reproduces it, and prints
predicted against measured. Without --data, every measurement the project ships (the copy
built into the binary, so from any directory; --data DIR reads a testdata directory instead):

  dle 1-GPU      NVIDIA DeepLearningExamples README tables (real TensorFlow on DGX-1, DGX-2,
                 DGX A100), one GPU, throughput: the accuracy figures
  dle multi-GPU  the same tables' multi-GPU rows, one Horovod process per GPU as NVIDIA ran them
  tfcnn 1-GPU    tf_cnn_benchmarks on GeForce RTX 2080 Ti and RTX 3090 boxes (Lambda's logs,
                 TF 1.15-2.4, synthetic data), one GPU, throughput
  tfcnn multi-GPU  the same logs on 2-8 GPUs, one process and NCCL; "scaling" is the n-GPU
                 throughput over n times the 1-GPU one of the same log folder
  h200-keras     real Keras 3 model.fit (JAX backend, XLA) on the H200, step time, the batch
                 already on the GPU (device-fed) and from host arrays (host-fed)
  h200-jax       jitted pure-JAX training steps on the H200, step time
  h200-pytorch   PyTorch-eager training steps on the H200, step time (not TF: a proxy)

With --data FILE, your own measurements: a CSV file, one measurement a row, with the columns
  metric       throughput (samples/s over all GPUs), step_time (s), run_mean (a whole run's
               mean throughput) or time_to_train (s); the last two need run_steps
  value        what you measured
  model, ...   any scenario key (gpusim run --help), one column each: hardware.gpu,
               hardware.count, batch (global), precision, xla, optimizer, ...; empty = default
  set          more overrides as --set text: "strategy.name=horovod; input.cache=memory"
and, optionally, provenance (where the figure comes from), source (the set's name; default the
file's name), label (your name for the precision) and any columns of your own. examples/
my-fleet.csv is one (rows of NVIDIA's published tables); testdata/dle/dle_tf.csv, the shipped
DLE set, is another and goes through the same path.

For each set: the mean absolute relative error (MAE), the mean signed error (bias: + is a
prediction too fast for a throughput, too slow for a step time) and the largest error, over all
rows and by GPU, model, precision and XLA; the XLA on/off and AMP/TF32 (AMP/FP32) speedups of
rows of one table that differ in that knob only, and each multi-GPU row's scaling over its
1-GPU twin; leave-one-GPU-out / leave-one-model-out figures over a set file's single-GPU rows,
and leave-one-architecture-out over every set's (each fold is the plain prediction); and the
coverage of the 80% prediction intervals that run, compare and capacity print: for each shipped
row, the interval from the residuals of the other configurations only (the row's model, GPU and
precision left out), and how often it holds the measured value (the PyTorch proxies are not in
the intervals' residuals); for a file of your own, how often the intervals gpusim prints for its
rows hold them. testdata/dle/README.md says which DLE rows are kept and why the others are not.

--set keeps the sets whose name starts with NAME (repeatable). --rows lists every row; a
"run mean" row is a table that gives a whole run's mean throughput, its startup included
(the 2019 TF1 SQuAD tables), predicted as that run's steps plus the XLA compile gpusim
simulates. --plot DIR writes predicted-vs-measured.png and .svg there: log-log, one panel per
metric, the y = x line and the band within 10% of it, points coloured by GPU (by set when
there are several).

A file that cannot be read as measurements (a row cut short, a bad value, a column that looks
like a misspelled scenario key) is one error naming its file, line and column, exit 2.

Examples:
`

func runValidate(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := pflag.NewFlagSet("validate", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	data := fs.String("data", "", "a testdata `DIR` laid out as the repository's, or a measurement-set CSV FILE (default: the shipped sets built into gpusim)")
	plotDir := fs.String("plot", "", "write predicted-vs-measured.png and .svg into `DIR`")
	format := fs.StringP("output", "o", "text", "output format: text or json")
	sets := fs.StringArray("set", nil, "keep only the sets whose name starts with `NAME` (repeatable)")
	rows := fs.Bool("rows", false, "list every row, not only the summaries")
	jobs := fs.IntP("jobs", "j", runtime.GOMAXPROCS(0), "runs simulated at once (the answer does not depend on it)")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return usagef("validate: %v", err)
	}
	if *help {
		fmt.Fprint(stdout, validateUsage+"  "+strings.Join(validateExamples, "\n  ")+"\n\nFlags:\n"+fs.FlagUsages())
		return nil
	}
	if fs.NArg() > 0 {
		return usagef("validate: unexpected argument %q", fs.Arg(0))
	}
	if *format != "text" && *format != "json" {
		return usagef("validate: -o %q: want text or json", *format)
	}
	if *jobs < 1 {
		return usagef("validate: --jobs %d: want at least 1", *jobs)
	}
	ms, err := readMeasurements(*data)
	if err != nil {
		return err
	}
	if len(*sets) > 0 {
		var kept []validate.Measurement
		for _, m := range ms {
			for _, s := range *sets {
				if strings.HasPrefix(m.Set, s) {
					kept = append(kept, m)
					break
				}
			}
		}
		if len(kept) == 0 {
			return usagef("validate: --set %s: no measurement in such a set (%s)", strings.Join(*sets, ","), strings.Join(setNames(ms), ", "))
		}
		ms = kept
	}
	v, rs, err := validate.Residuals(ctx, ms, validate.Options{Jobs: *jobs, Run: validateProgress(stderr, len(ms))})
	if err != nil {
		return err
	}
	st, err := os.Stat(*data)
	cov := intervalCoverage(rs, err == nil && !st.IsDir())
	if *plotDir != "" {
		paths, err := validate.WritePlot(*plotDir, v)
		if err != nil {
			return err
		}
		for _, p := range paths {
			fmt.Fprintf(stderr, "wrote %s\n", p)
		}
	}
	if *format == "json" {
		return writeValidateJSON(stdout, v, cov)
	}
	if err := writeValidateText(stdout, v, *rows); err != nil {
		return err
	}
	return writeCoverageText(stdout, cov)
}

// coverageJSON is the coverage of the prediction intervals over one family of rows.
type coverageJSON struct {
	Quantity string  `json:"quantity"`
	Set      string  `json:"set"`
	Level    float64 `json:"level"`
	Held     int     `json:"held"`
	N        int     `json:"n"`
	Coverage float64 `json:"coverage"`
	// Basis says where the residuals come from: this run's rows, or the shipped table.
	Basis string `json:"basis"`
}

// intervalCoverage is the coverage of the 80% interval on this run's speed residuals: for the
// shipped sets leave-one-cluster-out among themselves, for a user's file (own) the intervals
// the shipped table gives its rows; and leave-one-cluster-out over the shipped peak-memory
// residuals (the H200 Keras peaks, which validate does not run).
func intervalCoverage(rs []analysis.Residual, own bool) []coverageJSON {
	var out []coverageJSON
	add := func(q, basis string, gs []analysis.CoverageGroup) {
		for _, g := range gs {
			if g.N > 0 {
				out = append(out, coverageJSON{q, g.Set, analysis.IntervalLevel, g.Held, g.N, float64(g.Held) / float64(g.N), basis})
			}
		}
	}
	shipped := analysis.ShippedUncertainty()
	if own {
		add(analysis.QuantitySpeed, "intervals from the shipped table", shipped.CoverageOf(rs, analysis.QuantitySpeed, analysis.IntervalLevel))
	} else {
		add(analysis.QuantitySpeed, "these rows", analysis.NewUncertainty(rs).CoverageOf(rs, analysis.QuantitySpeed, analysis.IntervalLevel))
	}
	add(analysis.QuantityPeak, "shipped table", shipped.CoverageOf(shipped.Residuals(), analysis.QuantityPeak, analysis.IntervalLevel)[:1])
	return out
}

func writeCoverageText(w io.Writer, cov []coverageJSON) error {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Prediction intervals: how often the 80% interval holds the measured value (a shipped row's")
	fmt.Fprintln(w, "interval is built without the residuals of its own model, GPU and precision)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUANTITY\tSET\tHELD\tN\tCOVERAGE\tRESIDUALS")
	for _, c := range cov {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f%%\t%s\n", c.Quantity, c.Set, c.Held, c.N, 100*c.Coverage, c.Basis)
	}
	return tw.Flush()
}

// readMeasurements reads --data: none is the shipped sets embedded in the binary, a directory
// a testdata tree (every shipped set), a file one measurement set. A file that is not
// measurements exits 2.
func readMeasurements(data string) ([]validate.Measurement, error) {
	if data == "" {
		ms, err := validate.ReadShippedFS(gpusim.Testdata, "testdata")
		return ms, err // the embedded copy was read by the tests: a failure is not the user's
	}
	st, err := os.Stat(data)
	if err != nil {
		return nil, usagef("validate: --data %s: no such file or directory (leave --data out for the shipped sets, or pass a testdata directory or a measurement file)", data)
	}
	var ms []validate.Measurement
	if st.IsDir() {
		ms, err = validate.ReadShipped(data)
	} else {
		ms, err = validate.ReadSet(data)
	}
	return ms, asUsage(err)
}

// setNames lists the sets of ms, in order of first appearance.
func setNames(ms []validate.Measurement) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range ms {
		if !seen[m.Set] {
			seen[m.Set] = true
			out = append(out, m.Set)
		}
	}
	return out
}

func pct(x float64) string { return fmt.Sprintf("%+.1f%%", 100*x) }

func writeValidateText(w io.Writer, v *validate.Validation, rows bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SET\tBY\tGROUP\tN\tMAE\tBIAS\tMAX\tNOT RUN")
	for _, g := range v.Groups {
		if g.By != "all" && g.N+g.Failed < 2 && g.By != "gpu" {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1f%%\t%s\t%.1f%%\t%s\n", g.Set, g.By, g.Key, g.N, 100*g.MAE, pct(g.Bias), 100*g.Max, failed(g.Failed))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SET\tRATIO\tN\tMAE\tBIAS\tMAX")
	for _, g := range v.RatioSets {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f%%\t%s\t%.1f%%\n", g.Set, g.Key, g.N, 100*g.MAE, pct(g.Bias), 100*g.Max)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOLD-OUT\tHELD\tTRAIN ROWS\tHELD ROWS\tFIT MAE\tHELD MAE")
	for _, h := range v.HoldOuts {
		fmt.Fprintf(tw, "leave-one-%s-out\t%s\t%d\t%d\t%.1f%%\t%.1f%%\n", h.By, h.Held, h.Train, h.N, 100*h.FitMAE, 100*h.HeldMAE)
	}
	for _, g := range v.HoldOutSum {
		fmt.Fprintf(tw, "%s\tmean of %d folds\t\t\t\t%.1f%%\n", g.By, g.N, 100*g.MAE)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range v.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if rows {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SET\tCONFIG\tMETRIC\tMEASURED\tPREDICTED\tERROR\tSOURCE")
		for _, r := range v.Rows {
			metric, unit := "throughput", 1.0
			switch r.Metric {
			case validate.StepTime:
				metric, unit = "step ms", 1e3
			case validate.TimeToTrain:
				metric = "time to train s"
			case validate.RunMean:
				// The table gives the mean of a whole run of RunSteps updates.
				metric = "run mean"
			}
			pred, e := fmt.Sprintf("%.4g", unit*r.Predicted), pct(r.Err)
			switch {
			case r.OOM != "":
				pred, e = "OOM", "-"
			case r.Error != "":
				pred, e = "error", "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t%s\t%s\t%s\n", r.Set, r.Describe(), metric, unit*r.Value, pred, e, r.Ref)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SET\tRATIO\tNUMERATOR\tDENOMINATOR\tMEASURED\tPREDICTED\tERROR")
		for _, r := range v.Ratios {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.3f\t%.3f\t%s\n", r.Set, r.Kind, v.Rows[r.Num].Describe(), v.Rows[r.Den].Describe(), r.Measured, r.Predicted, pct(r.Err))
		}
		return tw.Flush()
	}
	return nil
}

func failed(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

// validateJSON is the -o json document.
type validateJSON struct {
	Groups   []groupJSON   `json:"groups"`
	Ratios   []groupJSON   `json:"ratios"`
	HoldOuts []holdOutJSON `json:"hold_outs"`
	HoldOut  []groupJSON   `json:"hold_out_summary"`
	Rows     []rowJSON     `json:"rows"`
	Notes    []string      `json:"notes"`
	// Coverage is the prediction intervals' coverage (intervalCoverage).
	Coverage []coverageJSON `json:"interval_coverage"`
}

type groupJSON struct {
	Set    string  `json:"set"`
	By     string  `json:"by"`
	Key    string  `json:"group"`
	N      int     `json:"n"`
	MAE    float64 `json:"mae"`
	Bias   float64 `json:"bias"`
	Max    float64 `json:"max_abs_error"`
	Failed int     `json:"not_run,omitempty"`
}

type holdOutJSON struct {
	By      string  `json:"by"`
	Held    string  `json:"held"`
	Train   int     `json:"train_rows"`
	N       int     `json:"held_rows"`
	FitMAE  float64 `json:"fit_mae"`
	HeldMAE float64 `json:"held_mae"`
}

type rowJSON struct {
	Set       string  `json:"set"`
	Source    string  `json:"source"`
	Ref       string  `json:"ref"`
	Framework string  `json:"framework"`
	Model     string  `json:"model"`
	GPU       string  `json:"gpu"`
	GPUs      int     `json:"gpus"`
	Batch     int     `json:"batch_per_gpu"`
	Accum     int     `json:"accumulation_steps,omitempty"`
	Precision string  `json:"precision"`
	TF32      bool    `json:"tf32"`
	XLA       bool    `json:"xla"`
	Optimizer string  `json:"optimizer"`
	Metric    string  `json:"metric"`
	Measured  float64 `json:"measured"`
	Predicted float64 `json:"predicted"`
	Error     float64 `json:"error"`
	OOM       string  `json:"oom,omitempty"`
	RunError  string  `json:"run_error,omitempty"`
	Note      string  `json:"note,omitempty"`
}

func toGroupJSON(gs []validate.GroupError) []groupJSON {
	out := []groupJSON{}
	for _, g := range gs {
		out = append(out, groupJSON{g.Set, g.By, g.Key, g.N, g.MAE, g.Bias, g.Max, g.Failed})
	}
	return out
}

func writeValidateJSON(w io.Writer, v *validate.Validation, cov []coverageJSON) error {
	doc := validateJSON{Groups: toGroupJSON(v.Groups), Ratios: toGroupJSON(v.RatioSets), HoldOut: toGroupJSON(v.HoldOutSum),
		HoldOuts: []holdOutJSON{}, Rows: []rowJSON{}, Notes: append([]string{}, v.Notes...), Coverage: append([]coverageJSON{}, cov...)}
	for _, h := range v.HoldOuts {
		doc.HoldOuts = append(doc.HoldOuts, holdOutJSON{h.By, h.Held, h.Train, h.N, h.FitMAE, h.HeldMAE})
	}
	for _, r := range v.Rows {
		metric := "throughput_samples_per_s"
		switch r.Metric {
		case validate.StepTime:
			metric = "step_time_s"
		case validate.TimeToTrain:
			metric = "time_to_train_s"
		}
		accum := r.Accumulation()
		if accum == 1 && !r.Table {
			accum = 0
		}
		doc.Rows = append(doc.Rows, rowJSON{Set: r.Set, Source: r.Source, Ref: r.Ref, Framework: r.Framework, Model: r.Model(),
			GPU: r.GPU(), GPUs: r.GPUs(), Batch: r.Batch(), Accum: accum, Precision: r.Label, TF32: r.Config.TF32, XLA: r.XLA(), Optimizer: r.Config.Optimizer,
			Metric: metric, Measured: r.Value, Predicted: r.Predicted, Error: r.Err, OOM: r.OOM, RunError: r.Error, Note: r.Note})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// validateProgress is the run each measurement goes through (train.Run), counting the runs
// on a progress bar when stderr is a terminal (compare's bar): the shipped sets are several
// hundred simulations. Piped or redirected, stderr stays quiet.
func validateProgress(stderr io.Writer, n int) analysis.RunFunc {
	tick := compareProgress(stderr, compareIsTerminal(stderr), n)
	return func(ctx context.Context, cfg train.Config) (*train.Result, error) {
		res, err := train.Run(ctx, cfg)
		tick()
		return res, err
	}
}
