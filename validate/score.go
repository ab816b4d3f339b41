package validate

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/internal/pool"
	"github.com/gpusim/gpusim/train"
)

// Scoring: every measurement run through train.Run as its scenario, predicted against
// measured.
//
// Errors are relative, predicted/measured - 1, in the measurement's own metric: throughput
// (samples/s over all GPUs) for the DLE tables, step time for the H200 recordings, so a
// positive error is a prediction too fast for a throughput and too slow for a step time. A
// predicted OOM of a run that really ran is listed and counted apart, never averaged in.
//
// Groups: a measurement-set file's rows by GPU, model, precision and XLA, its single-GPU rows
// apart from its multi-GPU ones ("dle 1-GPU": the accuracy figures; "dle multi-GPU": Horovod,
// one process per GPU, as NVIDIA ran them); each H200 recording by model, precision and
// batch. Ratios pair measurements of one version (one README table, one recording run) that
// differ in one knob only: XLA on/off at the same precision and batch, AMP over TF32/FP32 at
// the same XLA setting (a table's rows each at its own batch, as the tables ran them).
//
// Hold-outs: leave-one-GPU-out and leave-one-model-out over each set file's single-GPU rows.
// No cost-model constant is fitted on these measurements, so each held-out figure is the
// plain prediction: the spread over folds is how far an unseen GPU or model may be off.

// defaultSteps is the optimizer updates a run simulates when Options.Steps is 0.
const defaultSteps = 20

// Options shapes Score.
type Options struct {
	// Steps is the optimizer updates each run simulates (0 = 20: under XLA the first step
	// compiles and the median is taken over the steady steps).
	Steps int
	// Jobs is how many runs go at once; the result does not depend on it.
	Jobs int
	// Run simulates one configuration (nil = train.Run).
	Run analysis.RunFunc
}

// Row is one measurement and its prediction.
type Row struct {
	Measurement
	// Predicted is in the measurement's metric (0 when OOM or Error is set).
	Predicted float64
	// Err is Predicted/Value - 1.
	Err float64
	// OOM is the simulated OOM message of a run that really ran; Error a configuration the
	// simulator rejected.
	OOM, Error string
}

// ok reports whether the row has a prediction to compare.
func (r Row) ok() bool { return r.OOM == "" && r.Error == "" }

// GroupError is the error over one group of rows.
type GroupError struct {
	// Set is the family of rows ("dle 1-GPU", "h200-pytorch", ...), By what the group is keyed
	// by ("all", "gpu", "model", "precision", "xla") and Key its value.
	Set, By, Key string
	N            int
	// MAE is the mean absolute relative error, Bias the mean signed one, Max the largest
	// absolute one.
	MAE, Bias, Max float64
	// Failed counts the rows of the group with a predicted OOM or a rejected configuration.
	Failed int
}

// Ratio is a measured ratio of two rows and its prediction.
type Ratio struct {
	// Kind is "xla on/off", "amp/tf32", "amp/fp32", "bf16/tf32" or "fp16/tf32".
	Kind, Set string
	// Num and Den are the two rows (indices into Validation.Rows).
	Num, Den            int
	Measured, Predicted float64
	Err                 float64
}

// HoldOut is one leave-one-out fold.
type HoldOut struct {
	// Set is the rows' set, By "gpu" or "model", Held the held-out value.
	Set, By, Held string
	// Train and N are the training and held-out row counts; FitMAE the error on the training
	// rows and HeldMAE on the held-out ones.
	Train, N        int
	FitMAE, HeldMAE float64
}

// Validation is Score's report.
type Validation struct {
	Rows       []Row
	Groups     []GroupError
	Ratios     []Ratio
	RatioSets  []GroupError // MAE of the ratios per (set, kind)
	HoldOuts   []HoldOut
	HoldOutSum []GroupError // mean of HeldMAE over folds, by "gpu" and "model"
	// Notes say what the figures rest on.
	Notes []string
	// order ranks the sets for the report.
	order map[string]int
}

// Score runs every measurement and reports the errors.
func Score(ctx context.Context, ms []Measurement, o Options) (*Validation, error) {
	if o.Steps <= 0 {
		o.Steps = defaultSteps
	}
	run := o.Run
	if run == nil {
		run = train.Run
	}
	rows, err := predict(ctx, ms, o, run)
	if err != nil {
		return nil, err
	}
	v := &Validation{Rows: rows, order: setRanks(ms)}
	v.Groups = v.groupErrors(rows)
	v.Ratios = ratios(rows)
	v.RatioSets = v.ratioSets(v.Ratios)
	v.holdOuts()
	return v, nil
}

// predict runs ms on o.Jobs goroutines (internal/pool); rows keep ms's order.
func predict(ctx context.Context, ms []Measurement, o Options, run analysis.RunFunc) ([]Row, error) {
	rows := make([]Row, len(ms))
	run = sharedRuns(run)
	err := pool.Run(ctx, len(ms), o.Jobs, func(i int) error {
		rows[i] = predictOne(ctx, ms[i], o.Steps, run)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, ctx.Err()
}

// sharedRuns runs each distinct configuration once: rows that are one scenario read from two
// places (the tf_cnn_benchmarks logs' trt and trt2 folders, README versions) share one
// deterministic simulation. A configuration holding pointers (a profile, an input pipeline)
// is keyed by their addresses, so it is shared only with itself.
func sharedRuns(run analysis.RunFunc) analysis.RunFunc {
	type entry struct {
		once sync.Once
		res  *train.Result
		err  error
	}
	var mu sync.Mutex
	seen := map[string]*entry{}
	return func(ctx context.Context, c train.Config) (*train.Result, error) {
		key := configKey(c)
		mu.Lock()
		e := seen[key]
		if e == nil {
			e = &entry{}
			seen[key] = e
		}
		mu.Unlock()
		e.once.Do(func() { e.res, e.err = run(ctx, c) })
		return e.res, e.err
	}
}

// configKey identifies a configuration for sharedRuns: every field but its name.
func configKey(c train.Config) string {
	c.Name = ""
	return fmt.Sprintf("%+v", c)
}

func predictOne(ctx context.Context, m Measurement, steps int, run analysis.RunFunc) Row {
	r := Row{Measurement: m}
	cfg := m.run(steps)
	res, err := run(ctx, cfg)
	switch {
	case err != nil:
		r.Error = err.Error()
	case res.OOM != nil:
		r.OOM = res.OOM.Message
	default:
		r.Predicted = predicted(m, cfg, res)
	}
	if r.ok() {
		r.Err = r.Predicted/m.Value - 1
	}
	return r
}

// predicted is res in m's metric.
func predicted(m Measurement, cfg train.Config, res *train.Result) float64 {
	switch m.Metric {
	case StepTime:
		// A host-fed Keras row timed whole fit epochs (FitStepTime).
		return train.FitStepTime(cfg, res)
	case RunMean:
		return runMeanThroughput(res, m.RunSteps)
	case TimeToTrain:
		return float64(m.RunSteps)*res.StepTime + res.XLACompileTime
	}
	return res.Throughput
}

// runMeanThroughput is the throughput a run of steps updates averages: its samples over its
// steps at the simulated step time plus what the simulation pays once per run (the XLA
// compile). Of the run-level costs only that one is simulated; graph construction, grappler,
// the checkpoint restore and saves are not, so a prediction stays above such a figure
// (testdata/dle/README.md, "The 2019 SQuAD tables give the mean of the whole run").
func runMeanThroughput(res *train.Result, steps int) float64 {
	if steps <= 0 || res.StepTime <= 0 {
		return res.Throughput
	}
	steady := float64(steps) * res.StepTime
	return res.Throughput * steady / (steady + res.XLACompileTime)
}

// errStats folds relative errors into a GroupError.
func errStats(set, by, key string, errs []float64, failed int) GroupError {
	g := GroupError{Set: set, By: by, Key: key, N: len(errs), Failed: failed}
	for _, e := range errs {
		g.MAE += math.Abs(e)
		g.Bias += e
		g.Max = max(g.Max, math.Abs(e))
	}
	if len(errs) > 0 {
		g.MAE /= float64(len(errs))
		g.Bias /= float64(len(errs))
	}
	return g
}

// groupKeys returns the (by, key) pairs a row is grouped under.
func groupKeys(r Row) [][2]string {
	keys := [][2]string{{"all", ""}, {"model", modelGroup(r.Model())}, {"precision", r.Label}, {"xla", onOff(r.XLA())}}
	if r.Table {
		keys = append(keys, [2]string{"gpu", r.GPU()})
		if r.GPUs() > 1 {
			keys = append(keys, [2]string{"gpus", fmt.Sprint(r.GPUs())})
		}
	} else {
		keys = append(keys, [2]string{"batch", fmt.Sprint(r.Batch())})
	}
	return keys
}

// modelGroup is the model a row counts under in the per-model figures and the
// leave-one-model-out folds: its spec without the impl option, since two implementations of
// one network (keras_hub's and the TF Model Garden's BERT) are the same model to a user.
func modelGroup(spec string) string {
	name, opts, ok := strings.Cut(spec, ":")
	if !ok {
		return spec
	}
	var keep []string
	for _, kv := range strings.Split(opts, ",") {
		if !strings.HasPrefix(strings.TrimSpace(kv), "impl=") {
			keep = append(keep, kv)
		}
	}
	if len(keep) == 0 {
		return name
	}
	return name + ":" + strings.Join(keep, ",")
}

// recordingOrder puts the recordings after the measurement-set files, in this order.
var recordingOrder = []string{SourceKeras + " device-fed", SourceKeras + " host-fed", SourceJAX, SourcePyTorch}

// setRanks ranks the sets of ms: a set file's sets first, in the order they appear (a
// table's single-GPU rows before its multi-GPU ones), then the recordings.
func setRanks(ms []Measurement) map[string]int {
	rank := map[string]int{}
	for i, s := range recordingOrder {
		rank[s] = 1<<20 + i
	}
	for _, m := range ms {
		if _, ok := rank[m.Set]; !ok && m.Table {
			base := 2 * len(rank)
			rank[m.Source+" 1-GPU"], rank[m.Source+" multi-GPU"] = base, base+1
		}
	}
	return rank
}

// less orders sets by rank, then by name.
func (v *Validation) less(a, b string) bool {
	ra, rb := v.order[a], v.order[b]
	return ra < rb || ra == rb && a < b
}

var byOrder = map[string]int{"all": 0, "gpu": 1, "model": 2, "precision": 3, "xla": 4, "batch": 5, "gpus": 6}

func (v *Validation) groupErrors(rows []Row) []GroupError {
	type acc struct {
		errs   []float64
		failed int
	}
	groups := map[[3]string]*acc{}
	for _, r := range rows {
		for _, k := range groupKeys(r) {
			id := [3]string{r.Set, k[0], k[1]}
			a := groups[id]
			if a == nil {
				a = &acc{}
				groups[id] = a
			}
			if r.ok() {
				a.errs = append(a.errs, r.Err)
			} else {
				a.failed++
			}
		}
	}
	var out []GroupError
	for id, a := range groups {
		out = append(out, errStats(id[0], id[1], id[2], a.errs, a.failed))
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Set != b.Set {
			return v.less(a.Set, b.Set)
		}
		if a.By != b.By {
			return byOrder[a.By] < byOrder[b.By]
		}
		return a.Key < b.Key
	})
	return out
}

// precisionClass is the family a label belongs to for AMP ratios.
func precisionClass(r Row) string {
	switch r.Label {
	case "amp_fp16", "amp", "fp16":
		if r.Table {
			return "amp"
		}
		return "fp16"
	}
	return r.Label
}

// ratios pairs rows of one version that differ in XLA only, or in precision only (the
// half-precision row over the float32 one).
func ratios(rows []Row) []Ratio {
	var out []Ratio
	add := func(kind string, num, den int) {
		a, b := rows[num], rows[den]
		if !a.ok() || !b.ok() {
			return
		}
		meas, pred := a.Value/b.Value, a.Predicted/b.Predicted
		if a.Metric.lowerIsFaster() {
			// A speedup is the inverse ratio of step times.
			meas, pred = b.Value/a.Value, b.Predicted/a.Predicted
		}
		out = append(out, Ratio{Kind: kind, Set: a.Set, Num: num, Den: den, Measured: meas, Predicted: pred, Err: pred/meas - 1})
	}
	same := func(a, b Row) bool {
		return a.Version == b.Version && a.Set == b.Set && a.Metric == b.Metric && a.Model() == b.Model() && a.GPU() == b.GPU() && a.GPUs() == b.GPUs()
	}
	// Scaling: an n-GPU row's throughput over n times its 1-GPU twin's, of one version (a
	// README table, a log folder), model, GPU, precision, XLA setting and batch per GPU.
	for i, a := range rows {
		for j, b := range rows {
			if i == j || a.GPUs() <= 1 || b.GPUs() != 1 || a.Metric != Throughput || b.Metric != Throughput ||
				a.Version != b.Version || a.Source != b.Source || a.Model() != b.Model() || a.GPU() != b.GPU() ||
				a.Label != b.Label || a.XLA() != b.XLA() || a.Batch() != b.Batch() || !a.ok() || !b.ok() {
				continue
			}
			n := float64(a.GPUs())
			meas, pred := a.Value/(n*b.Value), a.Predicted/(n*b.Predicted)
			out = append(out, Ratio{Kind: "scaling", Set: a.Set, Num: i, Den: j, Measured: meas, Predicted: pred, Err: pred/meas - 1})
		}
	}
	for i, a := range rows {
		for j, b := range rows {
			if i == j || !same(a, b) {
				continue
			}
			if a.XLA() && !b.XLA() && a.Label == b.Label && a.Batch() == b.Batch() {
				add("xla on/off", i, j)
			}
			if a.XLA() != b.XLA() || a.Precision() == "float32" || b.Precision() != "float32" {
				continue
			}
			if !a.Table && a.Batch() != b.Batch() {
				continue
			}
			add(precisionClass(a)+"/"+b.Label, i, j)
		}
	}
	return out
}

func (v *Validation) ratioSets(rs []Ratio) []GroupError {
	m := map[[2]string][]float64{}
	for _, r := range rs {
		m[[2]string{r.Set, r.Kind}] = append(m[[2]string{r.Set, r.Kind}], r.Err)
	}
	var out []GroupError
	for k, errs := range m {
		out = append(out, errStats(k[0], "ratio", k[1], errs, 0))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Set != out[j].Set {
			return v.less(out[i].Set, out[j].Set)
		}
		return out[i].Key < out[j].Key
	})
	return out
}
