package analysis

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/train"
)

// Validation: every real measurement the project ships (ReadMeasurements) run through
// train.Run as a user would write it, predicted against measured.
//
// Errors are relative, predicted/measured - 1, in the measurement's own metric: throughput
// (samples/s over all GPUs) for the DLE tables, step time for the H200 recordings, so a
// positive error is a prediction too fast for a throughput and too slow for a step time. A
// predicted OOM of a run that really ran is listed and counted apart, never averaged in.
//
// Groups: single-GPU DLE throughput by GPU, model, precision and XLA (the accuracy figures);
// multi-GPU DLE rows in their own group (Horovod, one process per GPU, as NVIDIA ran them:
// dleRun); each H200 recording by model and precision. Ratios pair measurements of
// one README table version (or one recording run) that differ in one knob only: XLA on/off at
// the same precision and batch, AMP over TF32/FP32 at the same XLA setting (each at its own
// batch, as the tables ran them).
//
// Hold-outs: leave-one-GPU-out and leave-one-model-out over the single-GPU DLE rows. Refit,
// when set, refits the constants the cost model fits on the training part and predicts the
// held-out part with them; without it the held-out figure is the plain prediction, and the
// output says that no constant is fitted on these tables.

// ValidateOptions shapes Validate.
type ValidateOptions struct {
	// Steps is the optimizer updates each run simulates (0 = 20: under XLA the first step
	// compiles and the median is taken over the steady steps).
	Steps int
	// Jobs is how many runs go at once; the result does not depend on it.
	Jobs int
	// Run simulates one configuration (nil = train.Run).
	Run RunFunc
	// Refit, when not nil, refits the cost model on training measurements and returns the
	// RunFunc that predicts with the refitted constants, and a line naming what it fitted.
	Refit func(ctx context.Context, training []Measurement) (RunFunc, string, error)
}

// ValidationRow is one measurement and its prediction.
type ValidationRow struct {
	Measurement
	// Predicted is in the measurement's metric (0 when OOM or Error is set).
	Predicted float64 `json:"predicted"`
	// Err is Predicted/Value - 1.
	Err float64 `json:"error"`
	// OOM is the simulated OOM message of a run that really ran; Error a configuration the
	// simulator rejected.
	OOM   string `json:"oom,omitempty"`
	Error string `json:"run_error,omitempty"`
}

// ok reports whether the row has a prediction to compare.
func (r ValidationRow) ok() bool { return r.OOM == "" && r.Error == "" }

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
	// By is "gpu" or "model", Held the held-out value.
	By, Held string
	// Train and N are the training and held-out row counts; FitMAE the error on the training
	// rows and HeldMAE on the held-out ones, both with the constants of this fold.
	Train, N        int
	FitMAE, HeldMAE float64
}

// Validation is Validate's report.
type Validation struct {
	Rows       []ValidationRow
	Groups     []GroupError
	Ratios     []Ratio
	RatioSets  []GroupError // MAE of the ratios per (set, kind)
	HoldOuts   []HoldOut
	HoldOutSum []GroupError // mean of HeldMAE over folds, by "gpu" and "model"
	// Notes say what the figures rest on (which constants are fitted where).
	Notes []string
}

// Set names the family a row belongs to.
func (m Measurement) Set() string {
	if m.Source == SourceDLE {
		if m.GPUs > 1 {
			return "dle multi-GPU"
		}
		return "dle 1-GPU"
	}
	if m.Feed != "" {
		return m.Source + " " + m.Feed
	}
	return m.Source
}

// Config is the train.Config a user would write for the measurement.
func (m Measurement) Config(steps int) train.Config {
	c := train.DefaultConfig()
	c.Model, c.GPU, c.GPUCount = m.Model, m.GPU, m.GPUs
	c.Batch = m.Batch * m.GPUs
	if m.Accumulation > 1 {
		c.Batch *= m.Accumulation
		c.AccumulationSteps = m.Accumulation
	}
	c.Precision, c.TF32, c.XLA, c.Optimizer = m.Precision, m.TF32, m.XLA, m.Optimizer
	c.Host = m.Host
	if m.GPUs > 1 {
		c.Strategy = "mirrored"
	}
	if m.Source == SourceDLE {
		m.dleRun(&c) // Horovod on several GPUs, NVIDIA's input pipeline
	}
	// model.fit from host numpy arrays, as the Keras recordings' host-fed rows ran.
	c.FitFromArrays = m.Feed == "host-fed"
	c.TFVersion = m.TFVersion
	if len(m.Env) > 0 {
		env := map[string]string{}
		for k, v := range c.Env {
			env[k] = v
		}
		c.Env = env
		for k, v := range m.Env {
			c.Env[k] = v
		}
	}
	// The device-fed rows timed the step on a batch already in GPU memory: no input copy.
	c.InputOnDevice = m.Feed == "device-fed"
	if m.Source == SourceKeras {
		// Keras 3.16 on its JAX backend (testdata/h200/keras/README.md): JAX's gradients and
		// the train step's dispatch over every state array (train/dispatch.go).
		c.KerasVersion, c.Framework = 3, "jax"
		if c.FitFromArrays {
			c.FitArraysSamples = m.Samples
		}
	}
	// The recording's host as its probe measured it (0: the H200 machine's default).
	c.HostGatherRate = m.HostGatherRate
	c.Steps = steps
	c.Name = m.Ref
	return c
}

// dleRun makes c what NVIDIA's DeepLearningExamples scripts ran for a DLE row.
//
// Several GPUs are one Horovod process per GPU (resnet50v1.5/training/training_perf.sh:
// mpiexec -np N python3 main.py; BERT's scripts/run_squad.sh and run_pretraining.sh: mpirun
// with --horovod). BERT with --amp all-reduces float16 gradients: TF1's optimization.py passes
// hvd.DistributedOptimizer(compression=Compression.fp16 if use_fp16 ...), TF2's
// official/modeling/model_training_utils.py hvd.DistributedGradientTape(compression=
// Compression.fp16 if use_float16 ...); the ConvNets runtime wraps its optimizer with
// DistributedOptimizer(optimizer) and no compression (model/resnet.py). The TF1 BERT tables
// of ec9eaf73 and fb55bd24 predate fp16 compression: their optimization.py passes
// compression=Compression.none whatever the precision (dleBERTUncompressedCommits).
//
// ResNet-50 reads ImageNet's TFRecords through tf.data, not DALI (training_perf.sh passes no
// --use_dali): utils/data_utils.py get_tfrecords_input_fn shards the files per Horovod rank,
// map_and_batch(preproc_func, num_parallel_calls=num_threads, drop_remainder=True) with
// runtime/runner.py's num_preprocessing_threads = 10, prefetch(AUTOTUNE): one pipeline per
// process, each of 10 map calls, on the host's shared cores. Its elements are float32:
// utils/image_processing.py ends with tf.image.resize_images (resize in later versions),
// whose output is float32, and model/resnet.py casts to the compute dtype on the GPU. The
// batches reach the GPU a step ahead: model/resnet.py _stage puts each batch in a CPU
// StagingArea, then in a GPU StagingArea, the train op groups both puts with the update
// (tf.group(backprop_op, cpu_prefetch_op, gpu_prefetch_op, ...)) and PrefillStagingAreasHook
// fills them before the first step, so step k copies batch k+1 while it computes on batch k
// (tf.data's prefetch_to_device, pipeline.Config.PrefetchToDevice).
//
// The ConvNets loss carries the weight decay as an L2 penalty of the graph (model/resnet.py
// ResnetModel.__call__: tf.nn.l2_loss of every trainable variable but batch norm's, times
// weight_decay 1e-4, added to the cross entropy), not in MomentumOptimizer
// (train.Config.L2Decay). Under --amp, training_perf.sh passes --static_loss_scale 128 (from
// 5d36b4fd; --use_tf_amp --use_static_loss_scaling --loss_scale=128 there): main.py sets
// use_static_loss_scaling, the runner sets TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING=0 and
// wraps the optimizer in FixedLossScalerOptimizer (utils/optimizers.py), a fixed scale with
// no finiteness check (train.Config.StaticLossScale). e0f399de's tables ran its README's
// benchmark commands, --use_tf_amp alone: the graph rewrite's dynamic loss scaling.
func (m Measurement) dleRun(c *train.Config) {
	if m.GPUs > 1 {
		c.Strategy = "horovod"
		if strings.HasPrefix(m.Model, "bert") && m.Precision == "mixed_float16" && !dleBERTUncompressedCommits[m.Commit] {
			c.HorovodCompression = "fp16"
		}
	}
	if m.dleResourceVariables() {
		c.ResourceVariables = true
	}
	if strings.HasPrefix(m.Model, "resnet50") && m.Data == "real" {
		in := train.DefaultInput()
		in.Prefetch, in.ParallelCalls, in.Cache = train.Autotune, dleMapCalls, "none"
		in.Pipeline.DropRemainder = true
		in.Pipeline.Threads = m.dleInterOpThreads()
		in.Pipeline.ElementBytes = dleImageBytes
		in.Pipeline.PrefetchToDevice = true
		c.Input = &in
	}
	if strings.HasPrefix(m.Model, "resnet50") && strings.Contains(m.Ref, "(TensorFlow/Classification/ConvNets/") {
		c.L2Decay = true
		c.StaticLossScale = m.Commit != "e0f399de"
	}
}

// dleBERTUncompressedCommits are the TensorFlow/LanguageModeling/BERT README commits of
// dle_tf.csv whose optimization.py all-reduces uncompressed gradients under --amp too
// (create_optimizer: hvd.DistributedOptimizer(optimizer, sparse_as_dense=True,
// compression=Compression.none)); 8749cf39 and every later table's code passes
// Compression.fp16 when use_fp16.
var dleBERTUncompressedCommits = map[string]bool{"ec9eaf73": true, "fb55bd24": true}

// dleImageBytes is one ConvNets training element: a 224x224 RGB image in float32, as
// tf.image.resize_images returns it.
const dleImageBytes = 224 * 224 * 3 * 4

// dleResourceVariables reports whether the row's TF1 BERT script made its variables resource
// variables: run_squad.py and run_pretraining.py call tf.enable_resource_variables() when
// --use_xla and --amp are both set (`if FLAGS.use_xla: ... if FLAGS.amp:
// tf.enable_resource_variables()`) from 96138d50 ("[BERT/TF] Updating for Ampere", the commit
// that wrote the 20.06 tables) on; 5b24223f had added it for every XLA run a month before, and
// no table was written between the two. The earlier tables (TF 19.03-19.08 containers) ran
// reference variables, as do the FP32 and TF32 rows of the later ones.
func (m Measurement) dleResourceVariables() bool {
	if !strings.Contains(m.Ref, "(TensorFlow/LanguageModeling/BERT/README.md@") || !m.XLA || m.Precision != "mixed_float16" || !strings.HasPrefix(m.TFVersion, "1.") {
		return false
	}
	return dleBERTResourceVariableCommits[m.Commit]
}

// dleBERTResourceVariableCommits are the TensorFlow/LanguageModeling/BERT README commits of
// dle_tf.csv whose tables come after 96138d50 (dleResourceVariables).
var dleBERTResourceVariableCommits = map[string]bool{"96138d50": true, "1113674c": true, "9de48bc9": true}

// dleInterOpThreads is the inter-op pool of a ConvNets training session, on which TF 1.15
// runs the dataset's map calls (pipeline.Config.Threads): runtime/runner.py's
// _get_session_config sets intra_op_parallelism_threads = 1 and inter_op_parallelism_threads
// = max(2, cpu_count() // hvd.size() - 2) under Horovod (hvd.size() > 1) and 4 without, until
// b2e7f4a2 ("Performance fix") made it max(2, cpu_count() // max(hvd.size(), 8) - 2) for every
// run. That commit re-measured only the DGX A100 table; the DGX-1 and DGX-2 figures of
// 415a9aa3 date from 4eaa4434, with the earlier runner (git log -S on their throughputs shows
// no later change), as do e0f399de's and 5d36b4fd's. cpu_count() is the host's logical cores;
// 0 (no cap) when the row names no box.
func (m Measurement) dleInterOpThreads() int {
	h, err := hw.LookupHost(m.Host)
	if m.Host == "" || err != nil {
		return 0
	}
	if m.Commit == "415a9aa3" && m.Host == "dgx-a100" {
		return max(2, h.Cores/max(m.GPUs, 8)-2)
	}
	if m.GPUs > 1 {
		return max(2, h.Cores/m.GPUs-2)
	}
	return 4
}

// dleMapCalls is runtime/runner.py's num_preprocessing_threads without DALI (ConvNets at
// every ConvNets version the tables come from: e0f399de, 5d36b4fd, 415a9aa3).
const dleMapCalls = 10

// Validate runs every measurement and reports the errors.
func Validate(ctx context.Context, ms []Measurement, o ValidateOptions) (*Validation, error) {
	if o.Steps <= 0 {
		o.Steps = 20
	}
	rows, err := predict(ctx, ms, o, runFunc(o.Run))
	if err != nil {
		return nil, err
	}
	v := &Validation{Rows: rows}
	v.Groups = groupErrors(rows)
	v.Ratios = ratios(rows)
	v.RatioSets = ratioSets(v.Ratios)
	if err := v.holdOuts(ctx, ms, o); err != nil {
		return nil, err
	}
	return v, nil
}

// predict runs ms on o.Jobs goroutines; rows keep ms's order.
func predict(ctx context.Context, ms []Measurement, o ValidateOptions, run RunFunc) ([]ValidationRow, error) {
	rows := make([]ValidationRow, len(ms))
	jobs := max(o.Jobs, 1)
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, m := range ms {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := ValidationRow{Measurement: m}
			cfg := m.Config(o.Steps)
			res, err := run(ctx, cfg)
			switch {
			case err != nil:
				r.Error = err.Error()
			case res.OOM != nil:
				r.OOM = res.OOM.Message
			case m.StepTime:
				// A host-fed Keras row timed whole fit epochs (FitStepTime).
				r.Predicted = train.FitStepTime(cfg, res)
			case m.RunSteps > 0:
				// The table's figure is the whole run's mean (dle_runmean.go).
				r.Predicted = runMeanThroughput(res, m.RunSteps)
			default:
				r.Predicted = res.Throughput
			}
			if r.ok() {
				r.Err = r.Predicted/m.Value - 1
			}
			rows[i] = r
		}()
	}
	wg.Wait()
	return rows, ctx.Err()
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
func groupKeys(r ValidationRow) [][2]string {
	keys := [][2]string{{"all", ""}, {"model", modelGroup(r.Model)}, {"precision", r.Label}, {"xla", onOff(r.XLA)}}
	if r.Source == SourceDLE {
		keys = append(keys, [2]string{"gpu", r.GPU})
		if r.GPUs > 1 {
			keys = append(keys, [2]string{"gpus", fmt.Sprint(r.GPUs)})
		}
	} else {
		keys = append(keys, [2]string{"batch", fmt.Sprint(r.Batch)})
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

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// setOrder puts the accuracy figures first.
var setOrder = map[string]int{"dle 1-GPU": 0, "dle multi-GPU": 1, SourceKeras + " device-fed": 2, SourceKeras + " host-fed": 3, SourceJAX: 4, SourcePyTorch: 5}
var byOrder = map[string]int{"all": 0, "gpu": 1, "model": 2, "precision": 3, "xla": 4, "batch": 5, "gpus": 6}

func groupErrors(rows []ValidationRow) []GroupError {
	type acc struct {
		errs   []float64
		failed int
	}
	groups := map[[3]string]*acc{}
	for _, r := range rows {
		for _, k := range groupKeys(r) {
			id := [3]string{r.Set(), k[0], k[1]}
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
			return setOrder[a.Set] < setOrder[b.Set] || setOrder[a.Set] == setOrder[b.Set] && a.Set < b.Set
		}
		if a.By != b.By {
			return byOrder[a.By] < byOrder[b.By]
		}
		return a.Key < b.Key
	})
	return out
}

// precisionClass is the family a label belongs to for AMP ratios.
func precisionClass(r ValidationRow) string {
	switch r.Label {
	case "amp_fp16", "amp", "fp16":
		if r.Source == SourceDLE {
			return "amp"
		}
		return "fp16"
	}
	return r.Label
}

// ratios pairs rows of one version that differ in XLA only, or in precision only (the
// half-precision row over the float32 one).
func ratios(rows []ValidationRow) []Ratio {
	var out []Ratio
	add := func(kind string, num, den int) {
		a, b := rows[num], rows[den]
		if !a.ok() || !b.ok() {
			return
		}
		meas, pred := a.Value/b.Value, a.Predicted/b.Predicted
		if a.StepTime {
			// A speedup is the inverse ratio of step times.
			meas, pred = b.Value/a.Value, b.Predicted/a.Predicted
		}
		out = append(out, Ratio{Kind: kind, Set: a.Set(), Num: num, Den: den, Measured: meas, Predicted: pred, Err: pred/meas - 1})
	}
	same := func(a, b ValidationRow) bool {
		return a.Version == b.Version && a.Source == b.Source && a.Feed == b.Feed && a.Model == b.Model && a.GPU == b.GPU && a.GPUs == b.GPUs
	}
	for i, a := range rows {
		for j, b := range rows {
			if i == j || !same(a, b) {
				continue
			}
			if a.XLA && !b.XLA && a.Label == b.Label && a.Batch == b.Batch {
				add("xla on/off", i, j)
			}
			if a.XLA != b.XLA || a.Precision == "float32" || b.Precision != "float32" {
				continue
			}
			if a.Source != SourceDLE && a.Batch != b.Batch {
				continue
			}
			add(precisionClass(a)+"/"+b.Label, i, j)
		}
	}
	return out
}

func ratioSets(rs []Ratio) []GroupError {
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
			return setOrder[out[i].Set] < setOrder[out[j].Set]
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// holdOuts fills the leave-one-GPU-out and leave-one-model-out folds over the single-GPU DLE
// rows.
func (v *Validation) holdOuts(ctx context.Context, ms []Measurement, o ValidateOptions) error {
	var idx []int
	for i, m := range ms {
		if m.Set() == "dle 1-GPU" {
			idx = append(idx, i)
		}
	}
	if o.Refit == nil {
		v.Notes = append(v.Notes, "hold-outs: no cost-model constant is fitted on the DLE tables "+
			"(hw.DefaultEfficiency's factors are read from H200 micro-benchmarks and kernel times, "+
			"testdata/h200), so every DLE figure is already out of sample and each held-out figure "+
			"is the plain prediction: the spread over folds is how far an unseen GPU or model may be off")
	}
	for _, by := range []string{"gpu", "model"} {
		key := func(m Measurement) string {
			if by == "gpu" {
				return m.GPU
			}
			return modelGroup(m.Model)
		}
		vals := map[string]bool{}
		for _, i := range idx {
			vals[key(ms[i])] = true
		}
		var held []float64
		for _, val := range sortedKeys(vals) {
			var trainIdx, heldIdx []int
			for _, i := range idx {
				if key(ms[i]) == val {
					heldIdx = append(heldIdx, i)
				} else {
					trainIdx = append(trainIdx, i)
				}
			}
			if len(trainIdx) == 0 {
				continue
			}
			trainRows, heldRows := pick(v.Rows, trainIdx), pick(v.Rows, heldIdx)
			if o.Refit != nil {
				run, note, err := o.Refit(ctx, pickM(ms, trainIdx))
				if err != nil {
					return fmt.Errorf("refit without %s %s: %w", by, val, err)
				}
				v.Notes = append(v.Notes, fmt.Sprintf("hold-out %s %s: %s", by, val, note))
				if trainRows, err = predict(ctx, pickM(ms, trainIdx), o, run); err != nil {
					return err
				}
				if heldRows, err = predict(ctx, pickM(ms, heldIdx), o, run); err != nil {
					return err
				}
			}
			f := HoldOut{By: by, Held: val, Train: len(trainIdx), N: len(heldIdx),
				FitMAE: mae(trainRows), HeldMAE: mae(heldRows)}
			v.HoldOuts = append(v.HoldOuts, f)
			held = append(held, f.HeldMAE)
		}
		g := errStats("dle 1-GPU", "leave-one-"+by+"-out", "mean of folds", nil, 0)
		g.N = len(held)
		for _, h := range held {
			g.MAE += h / float64(len(held))
			g.Max = max(g.Max, h)
		}
		v.HoldOutSum = append(v.HoldOutSum, g)
	}
	return nil
}

func pick(rows []ValidationRow, idx []int) []ValidationRow {
	out := make([]ValidationRow, len(idx))
	for k, i := range idx {
		out[k] = rows[i]
	}
	return out
}

func pickM(ms []Measurement, idx []int) []Measurement {
	out := make([]Measurement, len(idx))
	for k, i := range idx {
		out[k] = ms[i]
	}
	return out
}

// mae is the mean absolute error of the rows with a prediction.
func mae(rows []ValidationRow) float64 {
	var s float64
	n := 0
	for _, r := range rows {
		if r.ok() {
			s += math.Abs(r.Err)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// Group returns the group (set, by, key), or false.
func (v *Validation) Group(set, by, key string) (GroupError, bool) {
	for _, g := range append(append([]GroupError{}, v.Groups...), append(v.RatioSets, v.HoldOutSum...)...) {
		if g.Set == set && g.By == by && g.Key == key {
			return g, true
		}
	}
	return GroupError{}, false
}

// Describe is a one-line name of a row's configuration.
func (r ValidationRow) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.GPU, r.Model)
	if r.GPUs > 1 {
		fmt.Fprintf(&b, " x%d", r.GPUs)
	}
	fmt.Fprintf(&b, " b%d", r.Batch)
	if r.Accumulation > 1 {
		fmt.Fprintf(&b, "x%d", r.Accumulation)
	}
	fmt.Fprintf(&b, " %s xla=%s", r.Label, onOff(r.XLA))
	return b.String()
}
