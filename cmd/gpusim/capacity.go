package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/report"
	"github.com/gpusim/gpusim/scenarios"
	"github.com/gpusim/gpusim/train"
)

func init() {
	register(command{name: "capacity", summary: "capacity planning: the largest batch that fits, the GPUs for a throughput", run: runCapacity})
}

// capacityExamples are the usage examples of gpusim capacity; a test runs each of them.
var capacityExamples = []string{
	"gpusim capacity max-batch --set hardware.gpu=rtx3090 --set memory.growth=true",
	"gpusim capacity max-batch --set hardware.gpu=rtx3090 --set memory.growth=true --set precision=mixed_float16 -o json",
	"gpusim capacity max-batch --set model=mlp --max 4096 --multiple 64",
	"gpusim capacity max-batch --set hardware.gpu=h200 --set memory.growth=true --confidence 0.9",
	"gpusim capacity gpus resnet50-a100 --throughput 10000",
	"gpusim capacity gpus resnet50-a100 --throughput 10000 --global-batch 1024 --max-gpus 16",
	"gpusim capacity gpus resnet50-a100 --throughput 10000 --dataset-size 1281167 --epochs 90",
	"gpusim capacity gpus resnet50-a100 --throughput 10000 --confidence 0.9",
	"gpusim capacity gpus resnet50-8xa100 --set hardware.host.profile=dgx-a100 --set precision=mixed_float16 --set xla=true --throughput 60000 --per-gpu-batch 256",
	"gpusim capacity gpus resnet50-8xa100 --set hardware.host.profile=dgx-a100 --set precision=mixed_float16 --set xla=true --throughput 60000 --per-gpu-batch 256 --strategy horovod",
}

func capacityUsage() string {
	var b strings.Builder
	b.WriteString(`Usage:
  gpusim capacity max-batch [SCENARIO] [--set key=value]... [--min 1] [--max 65536] [--multiple 8] [--steps 3] [--confidence P] [-o text|json]
  gpusim capacity gpus [SCENARIO] --throughput N [--max-gpus 64] [--per-gpu-batch B | --global-batch B] [--dataset-size N [--epochs E]] [--confidence P] [-o text|json]

max-batch finds the largest global batch (a multiple of --multiple) for which the scenario does
not run out of memory: it doubles the batch from --min until one OOMs, bisects between the last
fit and that OOM, then re-checks the --below batches just under the answer. Each batch is a
real gpusim run of --steps updates. 3 steps by default because Keras creates the optimizer
slots (momentum, Adam's m and v) at the first update: a batch can fit step 1 and OOM in step 2,
the first forward and backward pass with the slots held; step 3 repeats the steady step. Under
mixed_float16 a batch whose loss scale skipped updates is re-run with more steps until two
updates were applied. Fitting is not monotone with TF's BFC allocator (fragmentation: a smaller
batch can leave a pool layout in which a later tensor has no room); when a batch below the
answer OOMs, the report says so and lists it. The fitting batch says the confidence it fits
at (its real peak within the limit, from the peak residuals of runs like it); --confidence 0.9
also finds the largest batch whose peak stays within the limit with 90% probability.

gpus finds the fewest GPUs (hardware.count, with strategy.name=mirrored, or horovod with
--strategy horovod) whose throughput
reaches --throughput samples/s: counts 1, 2, 4, ... up to --max-gpus, then bisection. By default
each GPU keeps its batch (weak scaling: --per-gpu-batch, default the scenario's batch per GPU);
--global-batch keeps the global batch and splits it (strong scaling). Every count tried is
listed with its throughput and scaling efficiency. When the target is out of reach the report
says why: input bound (tf.data cannot feed more), all-reduce bound, throughput falling with more
GPUs, OOM, or simply more GPUs needed than --max-gpus. With a host profile that holds a fixed
number of GPUs (hardware.host.profile=dgx-a100: 8), larger counts are whole hosts trained with
MultiWorkerMirroredStrategy (or Horovod) over the hosts' network (hardware.nodes); without one, every count
is one host on NVSwitch. The report states where the batches come from: a
scenario without an input section has synthetic input (batches already on the GPU), so its
throughput is an upper bound that no tf.data pipeline lowers. --dataset-size (samples per
epoch) and --epochs add each count's time to train: epochs x ceil(dataset / global batch)
steps at the median simulated step (no compile, evaluation or checkpoints). Every throughput and
time to train carries its 80% prediction interval (the validation residuals of runs like it:
gpusim validate prints how often it holds); --confidence 0.9 answers with the fewest GPUs whose
throughput reaches the target with 90% probability. Without it the answer is the simulated one
and says the confidence it holds at. Both read the empirical residuals of runs like it (their
quantiles at any level, not only 80%); a pool of n rows tells confidences up to n/(n+1), and
the report says when one asked for is past that.

SCENARIO is a YAML file or a built-in name (gpusim list scenarios); none means the built-in
"default". --set overrides a scenario key (gpusim run --help lists them); the searched keys
(batch; for gpus also hardware.count and strategy.name) cannot be set. An OOM is a result; bad
input exits 2.

Examples:
`)
	for _, e := range capacityExamples {
		b.WriteString("  " + e + "\n")
	}
	return b.String()
}

func runCapacity(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, capacityUsage())
		return usagef("capacity: want a subcommand: max-batch or gpus")
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, capacityUsage())
		return nil
	case "max-batch":
		return runMaxBatch(ctx, stdout, args[1:])
	case "gpus":
		return runCapacityGPUs(ctx, stdout, args[1:])
	}
	return usagef("capacity: unknown subcommand %q: want max-batch or gpus", args[0])
}

// capacityFlags are the flags both subcommands share.
type capacityFlags struct {
	sets   []string
	format string
	jobs   int
	steps  int
}

func (c *capacityFlags) add(fs *pflag.FlagSet, steps int, stepsHelp string) {
	fs.StringArrayVar(&c.sets, "set", nil, "override a scenario `key=value` (repeatable)")
	fs.StringVarP(&c.format, "output", "o", "text", "output format: text or json")
	fs.IntVarP(&c.jobs, "jobs", "j", runtime.GOMAXPROCS(0), "runs simulated at once (the answer does not depend on it)")
	fs.IntVar(&c.steps, "steps", steps, stepsHelp)
}

// parse parses args, prints the help on --help (done = true) and loads the scenario with the
// overrides, refusing overrides of the searched keys.
func (c *capacityFlags) parse(name string, fs *pflag.FlagSet, stdout io.Writer, args []string, searched ...string) (sc *scenarios.Scenario, done bool, err error) {
	fs.SetOutput(io.Discard)
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return nil, false, usagef("capacity %s: %v", name, err)
	}
	if *help {
		fmt.Fprint(stdout, capacityUsage()+"\nFlags of "+name+":\n"+fs.FlagUsages())
		return nil, true, nil
	}
	if fs.NArg() > 1 {
		return nil, false, usagef("capacity %s: want at most one scenario, got %d: %s", name, fs.NArg(), strings.Join(fs.Args(), " "))
	}
	if c.format != "text" && c.format != "json" {
		return nil, false, usagef("capacity %s: -o %q: want text or json", name, c.format)
	}
	if c.jobs < 1 {
		return nil, false, usagef("capacity %s: --jobs %d: want at least 1", name, c.jobs)
	}
	for _, kv := range c.sets {
		key, _, _ := strings.Cut(kv, "=")
		for _, s := range searched {
			if strings.TrimSpace(key) == s {
				return nil, false, usagef("capacity %s: --set %s: %s is what the search varies", name, kv, s)
			}
		}
	}
	sc, err = scenarios.Resolve(fs.Arg(0))
	if err != nil {
		return nil, false, asUsage(err)
	}
	if err := sc.SetAll(c.sets); err != nil {
		return nil, false, asUsage(err)
	}
	return sc, false, nil
}

// capacityError turns a train.Run error into bad input (exit 2) naming the scenario place.
func capacityError(name string, sc *scenarios.Scenario, err error) error {
	if se, ok := sc.RunError(err); ok {
		at := ""
		var te *analysis.TrialError
		if errors.As(err, &te) {
			at = fmt.Sprintf(" (at %s %d)", te.What, te.Value)
		}
		return usagef("capacity %s: %s: %s: %v%s", name, se.Place, se.Field, se.Err, at)
	}
	return fmt.Errorf("capacity %s %s: %w", name, sc.Name, err)
}

func runMaxBatch(ctx context.Context, stdout io.Writer, args []string) error {
	fs := pflag.NewFlagSet("max-batch", pflag.ContinueOnError)
	var c capacityFlags
	o := analysis.DefaultMaxBatchOptions()
	c.add(fs, o.Steps, "optimizer updates per batch tried (3: past the first update, where Keras creates the slots)")
	fs.IntVar(&o.Min, "min", o.Min, "smallest batch tried")
	fs.IntVar(&o.Max, "max", o.Max, "largest batch tried")
	fs.IntVar(&o.Multiple, "multiple", o.Multiple, "the answer is a multiple of this")
	fs.IntVar(&o.Below, "below", o.Below, "batches just below the answer re-checked (BFC fragmentation)")
	fs.Float64Var(&o.Confidence, "confidence", 0, "also answer at this `probability` (0.9): the largest batch whose peak in use stays within the limit with that confidence (0 = the simulated fit alone)")
	sc, done, err := c.parse("max-batch", fs, stdout, args, "batch")
	if done || err != nil {
		return err
	}
	switch {
	case o.Min < 1:
		return usagef("capacity max-batch: --min %d: want at least 1", o.Min)
	case o.Multiple < 1:
		return usagef("capacity max-batch: --multiple %d: want at least 1", o.Multiple)
	case o.Max < o.Min:
		return usagef("capacity max-batch: --max %d below --min %d", o.Max, o.Min)
	case c.steps < 1:
		return usagef("capacity max-batch: --steps %d: want at least 1", c.steps)
	case o.Below < 0:
		return usagef("capacity max-batch: --below %d: want at least 0", o.Below)
	case !(o.Confidence >= 0 && o.Confidence < 1):
		return usagef("capacity max-batch: --confidence %v: want a probability from 0 to below 1 (0.9 for 90%%)", o.Confidence)
	}
	for _, f := range []struct {
		flag string
		v    int
	}{{"min", o.Min}, {"max", o.Max}, {"multiple", o.Multiple}} {
		// Every batch tried is a scenario batch: the flags share its range.
		if err := scenarios.CheckInt("batch", int64(f.v)); err != nil {
			return usagef("capacity max-batch: --%s (a batch): %v", f.flag, err)
		}
	}
	if err := scenarios.CheckInt("steps", int64(c.steps)); err != nil {
		return usagef("capacity max-batch: --steps: %v", err)
	}
	if (o.Min+o.Multiple-1)/o.Multiple*o.Multiple > o.Max {
		return usagef("capacity max-batch: no multiple of %d between --min %d and --max %d", o.Multiple, o.Min, o.Max)
	}
	o.Steps, o.Jobs = c.steps, c.jobs
	rep, err := analysis.MaxBatch(ctx, sc.Config, o)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return capacityError("max-batch", sc, err)
	}
	if c.format == "json" {
		return writeCapacityJSON(stdout, struct {
			Scenario string `json:"scenario"`
			Setup    string `json:"setup"`
			*analysis.MaxBatchReport
		}{sc.Name, capacitySetup(sc.Config), rep})
	}
	return writeMaxBatchText(stdout, sc, o, rep)
}

func runCapacityGPUs(ctx context.Context, stdout io.Writer, args []string) error {
	fs := pflag.NewFlagSet("gpus", pflag.ContinueOnError)
	var c capacityFlags
	o := analysis.GPUsOptions{MaxGPUs: 64}
	c.add(fs, 0, "optimizer updates per count (0 = the scenario's steps; keep 20 or more under mixed_float16, whose skipped updates are shorter)")
	fs.Float64Var(&o.Throughput, "throughput", 0, "target `samples/s` (required)")
	fs.IntVar(&o.MaxGPUs, "max-gpus", o.MaxGPUs, "most GPUs tried")
	fs.IntVar(&o.PerGPUBatch, "per-gpu-batch", 0, "batch of each GPU, fixed (weak scaling; default the scenario's batch per GPU)")
	fs.IntVar(&o.GlobalBatch, "global-batch", 0, "global batch, fixed and split over the GPUs (strong scaling)")
	fs.IntVar(&o.Training.DatasetSize, "dataset-size", 0, "samples per epoch: report each count's time to train (ImageNet-1k: 1281167)")
	fs.IntVar(&o.Training.Epochs, "epochs", 1, "epochs of --dataset-size to train")
	fs.Float64Var(&o.Confidence, "confidence", 0, "answer at this `probability` (0.9): a count reaches the target when its throughput does with that confidence (0 = the simulated throughput)")
	strategy := fs.String("strategy", "mirrored", "`mirrored` (MirroredStrategy in a box, MultiWorkerMirroredStrategy across boxes) or horovod (one process per GPU, in a box and across)")
	sc, done, err := c.parse("gpus", fs, stdout, args, "batch", "hardware.count", "strategy.name", "hardware.nodes")
	if done || err != nil {
		return err
	}
	switch *strategy {
	case "mirrored":
		if sc.Config.Strategy == "horovod" {
			// The search runs MirroredStrategy unless told otherwise.
			sc.Config.Strategy = "mirrored"
		}
	case "horovod":
		sc.Config.Strategy = "horovod"
	default:
		return usagef("capacity gpus: --strategy %q: want mirrored or horovod", *strategy)
	}
	switch {
	case !fs.Changed("throughput"):
		return usagef("capacity gpus: --throughput is required (samples/s)")
	case !(o.Throughput > 0):
		return usagef("capacity gpus: --throughput %v: want a positive number of samples/s", o.Throughput)
	case o.MaxGPUs < 1:
		return usagef("capacity gpus: --max-gpus %d: want at least 1", o.MaxGPUs)
	case fs.Changed("per-gpu-batch") && fs.Changed("global-batch"):
		return usagef("capacity gpus: give --per-gpu-batch or --global-batch, not both")
	case fs.Changed("per-gpu-batch") && o.PerGPUBatch < 1:
		return usagef("capacity gpus: --per-gpu-batch %d: want at least 1", o.PerGPUBatch)
	case fs.Changed("global-batch") && o.GlobalBatch < 1:
		return usagef("capacity gpus: --global-batch %d: want at least 1", o.GlobalBatch)
	case c.steps < 0:
		return usagef("capacity gpus: --steps %d: want at least 0", c.steps)
	case !(o.Confidence >= 0 && o.Confidence < 1):
		return usagef("capacity gpus: --confidence %v: want a probability from 0 to below 1 (0.9 for 90%%)", o.Confidence)
	}
	switch {
	case fs.Changed("epochs") && !fs.Changed("dataset-size"):
		return usagef("capacity gpus: --epochs needs --dataset-size (the samples per epoch)")
	case fs.Changed("dataset-size") && o.Training.DatasetSize < 1:
		return usagef("capacity gpus: --dataset-size %d: too small (at least 1)", o.Training.DatasetSize)
	case o.Training.Epochs < 1 || o.Training.Epochs > maxEpochs:
		return usagef("capacity gpus: --epochs %d: want 1 to %d", o.Training.Epochs, maxEpochs)
	}
	if err := scenarios.CheckInt("input.records", int64(o.Training.DatasetSize)); fs.Changed("dataset-size") && err != nil {
		return usagef("capacity gpus: --dataset-size (an input.records): %v", err)
	}
	if !fs.Changed("dataset-size") {
		o.Training = analysis.Training{}
	}
	if err := scenarios.CheckInt("hardware.count", int64(o.MaxGPUs)); err != nil {
		return usagef("capacity gpus: --max-gpus (a hardware.count): %v", err)
	}
	for _, f := range []struct {
		flag string
		v    int
	}{{"per-gpu-batch", o.PerGPUBatch}, {"global-batch", o.GlobalBatch}} {
		if err := scenarios.CheckInt("batch", int64(f.v)); fs.Changed(f.flag) && err != nil {
			return usagef("capacity gpus: --%s (a batch): %v", f.flag, err)
		}
	}
	if c.steps > 0 {
		if err := scenarios.CheckInt("steps", int64(c.steps)); err != nil {
			return usagef("capacity gpus: --steps: %v", err)
		}
	}
	o.Steps, o.Jobs = c.steps, c.jobs
	rep, err := analysis.GPUs(ctx, sc.Config, o)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return capacityError("gpus", sc, err)
	}
	if c.format == "json" {
		return writeCapacityJSON(stdout, struct {
			Scenario string `json:"scenario"`
			Setup    string `json:"setup"`
			*analysis.GPUsReport
		}{sc.Name, capacitySetup(sc.Config), rep})
	}
	return writeGPUsText(stdout, sc, rep)
}

// confText is a confidence as a percentage, with its bound ("at least 93%").
func confText(p float64, bound string) string {
	if bound != "" {
		return fmt.Sprintf("%s %.0f%%", bound, 100*p)
	}
	return fmt.Sprintf("%.0f%%", 100*p)
}

// ivText is " (80%: LOW-HIGH)" with each end in format, "" without an interval.
func ivText(iv *analysis.Interval, format string) string {
	if iv == nil {
		return ""
	}
	return fmt.Sprintf(" (80%%: "+format+"-"+format+")", iv[0], iv[1])
}

// maxEpochs bounds --epochs: far past any real training (ImageNet schedules run 90 to a few
// hundred epochs).
const maxEpochs = 1_000_000

// fmtTrainTime prints a time to train in seconds and in hours or days.
func fmtTrainTime(s float64) string {
	switch {
	case s >= 2*86400:
		return fmt.Sprintf("%s (%.1f days)", fmtSeconds(s), s/86400)
	case s >= 3600:
		return fmt.Sprintf("%s (%.1f h)", fmtSeconds(s), s/3600)
	}
	return fmtSeconds(s)
}

func writeCapacityJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// capacitySetup names what the search keeps: model, GPU, precision and memory mode.
func capacitySetup(cfg train.Config) string {
	mem := "preallocate"
	switch {
	case cfg.Memory.Mode != "":
		mem = cfg.Memory.Mode
	case cfg.Memory.Growth != nil && *cfg.Memory.Growth:
		mem = "growth"
	case cfg.Memory.LimitMiB > 0:
		mem = fmt.Sprintf("limit %d MiB", cfg.Memory.LimitMiB)
	case cfg.Memory.Fraction > 0:
		mem = fmt.Sprintf("fraction %g", cfg.Memory.Fraction)
	}
	if cfg.Memory.Allocator != "" && cfg.Memory.Allocator != "bfc" {
		mem += ", " + cfg.Memory.Allocator
	}
	s := fmt.Sprintf("%s on %s, %s, optimizer %s, memory %s", cfg.Model, cfg.GPU, cfg.Precision, cfg.Optimizer, mem)
	if cfg.XLA {
		s += ", XLA"
	}
	if cfg.AccumulationSteps > 1 {
		s += fmt.Sprintf(", %d accumulation steps", cfg.AccumulationSteps)
	}
	return s
}

func fmtBytes(v int64) string { return report.FormatBytes(float64(v)) }

// fmtSeconds prints a duration as gpusim run's report does (report.FormatValue: 995.3ms, 682.0µs).
func fmtSeconds(v float64) string { return report.FormatValue(v, report.UnitSeconds) }

func writeMaxBatchText(w io.Writer, sc *scenarios.Scenario, o analysis.MaxBatchOptions, rep *analysis.MaxBatchReport) error {
	var b strings.Builder
	cfg := sc.Config
	fmt.Fprintf(&b, "gpusim capacity max-batch: %s\n", sc.Name)
	fmt.Fprintf(&b, "  %s", capacitySetup(cfg))
	if cfg.Strategy == "mirrored" {
		fmt.Fprintf(&b, ", %d x GPU mirrored", cfg.GPUCount)
	}
	fmt.Fprintf(&b, "\n  global batches %d..%d in multiples of %d, %d steps each\n\n", rep.Min, rep.Max, rep.Multiple, o.Steps)
	if rep.Fit == nil {
		fmt.Fprintf(&b, "no batch fits: the smallest, %d, runs out of memory\n", rep.Min)
	} else {
		f := rep.Fit
		fmt.Fprintf(&b, "max batch        %d", rep.Batch)
		if rep.AtMax {
			b.WriteString(" (the largest allowed: raise --max to search further)")
		}
		fmt.Fprintf(&b, "\n  peak in use    %s of a %s limit (pool %s)\n", fmtBytes(f.PeakBytes), fmtBytes(f.LimitBytes), fmtBytes(f.PoolBytes))
		if f.SteadyPeakBytes > 0 {
			fmt.Fprintf(&b, "                 step 1 %s, the steps after %s\n", fmtBytes(f.FirstStepPeakBytes), fmtBytes(f.SteadyPeakBytes))
		}
		if f.FitConfidence > 0 {
			fmt.Fprintf(&b, "  confidence     fits with %s confidence (the real peak within the limit)", confText(f.FitConfidence, f.FitConfidenceBound))
			if rep.Confidence == 0 {
				b.WriteString(" (--confidence P answers at P)")
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "  step time      %s (median of %d steps; gpusim run --set batch=%d for a full run)\n", fmtSeconds(f.StepTime), f.Steps, rep.Batch)
		fmt.Fprintf(&b, "  throughput     %.0f samples/s\n", f.Throughput)
	}
	if rep.Confidence > 0 {
		if c := rep.ConfidenceFit; c != nil {
			fmt.Fprintf(&b, "max batch        %d at %.0f%% confidence: peak %s, at most %s with %.0f%% confidence, of the %s limit\n",
				rep.ConfidenceBatch, 100*rep.Confidence, fmtBytes(c.PeakBytes), fmtBytes(c.PeakAtConfidence), 100*rep.Confidence, fmtBytes(c.LimitBytes))
		} else if rep.Fit != nil {
			fmt.Fprintf(&b, "max batch        none at %.0f%% confidence: even batch %d's peak may pass the limit\n", 100*rep.Confidence, rep.Min)
		}
		if rep.ConfidenceNote != "" {
			fmt.Fprintf(&b, "  note           %s\n", rep.ConfidenceNote)
		}
	}
	if t := rep.FirstOOM; t != nil && t.OOM != nil {
		fmt.Fprintf(&b, "first OOM        batch %d, step %d, op %s (%s requested, fragmentation %.1f%%)\n",
			t.Batch, t.OOM.Step, t.OOM.Op, fmtBytes(t.OOM.Requested), 100*t.OOM.Fragmentation)
		fmt.Fprintf(&b, "  %s\n", t.OOM.Message)
	}
	if rep.Fit != nil {
		b.WriteString("\n")
		var checked []int
		for _, t := range rep.Trials {
			if t.Batch < rep.Batch && t.Batch >= rep.Batch-o.Below*rep.Multiple {
				checked = append(checked, t.Batch)
			}
		}
		if len(rep.NotMonotone) == 0 {
			fmt.Fprintf(&b, "monotone check: every batch tried below %d fits (%d checked just below it)\n", rep.Batch, len(checked))
		} else {
			fmt.Fprintf(&b, "NOT MONOTONE: %d batch(es) below %d run out of memory although %d fits (BFC fragmentation):\n",
				len(rep.NotMonotone), rep.Batch, rep.Batch)
			for _, t := range rep.NotMonotone {
				fmt.Fprintf(&b, "  batch %d: step %d, op %s, fragmentation %.1f%%\n", t.Batch, t.OOM.Step, t.OOM.Op, 100*t.OOM.Fragmentation)
			}
			b.WriteString("  pick a batch that fits with margin, or TF_GPU_ALLOCATOR=cuda_malloc_async\n")
		}
	}
	b.WriteString("\ntrials (search order)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  batch\tphase\tsteps\tresult\tpeak in use\tstep time\tsamples/s")
	for _, t := range rep.Trials {
		res, st, tp := "fits", fmtSeconds(t.StepTime), fmt.Sprintf("%.0f", t.Throughput)
		if !t.Fits {
			res = fmt.Sprintf("OOM (step %d)", t.OOM.Step)
			if t.StepTime == 0 {
				st, tp = "-", "-"
			}
		}
		fmt.Fprintf(tw, "  %d\t%s\t%d\t%s\t%s\t%s\t%s\n", t.Batch, t.Phase, t.Steps, res, fmtBytes(t.PeakBytes), st, tp)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeGPUsText(w io.Writer, sc *scenarios.Scenario, rep *analysis.GPUsReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "gpusim capacity gpus: %s\n", sc.Name)
	strategy := "MirroredStrategy"
	if sc.Config.Strategy == "horovod" {
		strategy = "Horovod"
	}
	fmt.Fprintf(&b, "  %s, %s\n", capacitySetup(sc.Config), strategy)
	if rep.Scaling == "weak" {
		fmt.Fprintf(&b, "  weak scaling: batch %d per GPU; target %.0f samples/s; at most %d GPUs\n", rep.Batch, rep.Target, rep.MaxGPUs)
	} else {
		fmt.Fprintf(&b, "  strong scaling: global batch %d; target %.0f samples/s; at most %d GPUs\n", rep.Batch, rep.Target, rep.MaxGPUs)
	}
	fmt.Fprintf(&b, "  input: %s\n\n", rep.Input)
	if f := rep.Fit; f != nil {
		fmt.Fprintf(&b, "GPUs needed      %d", rep.GPUs)
		if rep.Confidence > 0 {
			fmt.Fprintf(&b, " at %.0f%% confidence", 100*rep.Confidence)
		}
		if f.Nodes > 1 {
			fmt.Fprintf(&b, " on %d nodes of %d (%s)", f.Nodes, f.GPUs/f.Nodes, f.Strategy)
		}
		b.WriteString("\n")
		if f.ReachConfidence > 0 {
			fmt.Fprintf(&b, "  confidence     reaches %.0f samples/s with %s confidence", rep.Target, confText(f.ReachConfidence, f.ReachConfidenceBound))
			if rep.Confidence == 0 {
				b.WriteString(" (--confidence P answers at P)")
			}
			b.WriteString("\n")
		}
		if rep.ConfidenceNote != "" {
			fmt.Fprintf(&b, "  note           %s\n", rep.ConfidenceNote)
		}
		fmt.Fprintf(&b, "  throughput     %.0f samples/s%s (global batch %d, step %s)\n", f.Throughput, ivText(f.ThroughputInterval, "%.0f"), f.GlobalBatch, fmtSeconds(f.StepTime))
		if rep.Confidence > 0 {
			fmt.Fprintf(&b, "                 at least %.0f samples/s with %.0f%% confidence\n", f.ThroughputAtConfidence, 100*rep.Confidence)
		}
		fmt.Fprintf(&b, "  scaling eff.   %.1f%% (all-reduce %s per step)\n", 100*f.Efficiency, fmtSeconds(f.AllReduceTime))
		if tr := rep.Training; tr != nil {
			fmt.Fprintf(&b, "  time to train  %s: %d epochs x %d steps of %d samples (%d per epoch) at the median step\n",
				fmtTrainTime(f.TrainSeconds), tr.Epochs, tr.StepsPerEpoch(f.GlobalBatch), f.GlobalBatch, tr.DatasetSize)
			if iv := f.TrainSecondsInterval; iv != nil {
				fmt.Fprintf(&b, "                 80%%: %s to %s\n", fmtTrainTime(iv[0]), fmtTrainTime(iv[1]))
			}
		}
	} else {
		fmt.Fprintf(&b, "unreachable      %s\n", rep.Reason)
	}
	b.WriteString("\ncounts tried\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	head := "  GPUs\tnodes\tphase\tglobal batch\tper GPU\tsamples/s\t80% interval\tefficiency\tall-reduce\tinput stall\tbound\tpeak in use"
	if rep.Training != nil {
		head += "\ttime to train"
	}
	fmt.Fprintln(tw, head)
	for _, t := range rep.Trials {
		tp, eff := fmt.Sprintf("%.0f", t.Throughput), fmt.Sprintf("%.1f%%", 100*t.Efficiency)
		if t.OOM != nil {
			tp, eff = fmt.Sprintf("OOM (step %d)", t.OOM.Step), "-"
		}
		mark := ""
		if t.Reaches {
			mark = " *"
		}
		iv := "-"
		if t.ThroughputInterval != nil {
			iv = fmt.Sprintf("%.0f-%.0f", t.ThroughputInterval[0], t.ThroughputInterval[1])
		}
		row := fmt.Sprintf("  %d\t%d\t%s\t%d\t%d\t%s%s\t%s\t%s\t%s\t%.1f%%\t%s\t%s", t.GPUs, t.Nodes, t.Phase, t.GlobalBatch, t.ReplicaBatch,
			tp, mark, iv, eff, fmtSeconds(t.AllReduceTime), 100*t.InputStall, t.Bound, fmtBytes(t.PeakBytes))
		if rep.Training != nil {
			tt := "-"
			if t.TrainSeconds > 0 {
				tt = fmtTrainTime(t.TrainSeconds)
			}
			row += "\t" + tt
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rep.Fit != nil {
		if rep.Confidence > 0 {
			fmt.Fprintf(&b, "  (* reaches the target with %.0f%% confidence)\n", 100*rep.Confidence)
		} else {
			b.WriteString("  (* reaches the target)\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
