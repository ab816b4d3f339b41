package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/report"
	"github.com/gpusim/gpusim/scenarios"
)

func init() {
	register(command{name: "plan", summary: "search the TF settings (and GPUs) that best meet a goal", run: runPlan})
}

// planExamples are the usage examples of gpusim plan; a test runs each of them.
var planExamples = []string{
	"gpusim plan resnet50-a100 --goal throughput",
	"gpusim plan resnet50-a100 --goal max-batch --top 3",
	"gpusim plan --goal cost --gpus a100-40gb,h100-80gb,l4,t4 --prices examples/prices.yaml",
	"gpusim plan resnet50-a100 --goal time-to-train --dataset-size 1281167 --epochs 90 --max-gpus 2 --budget 3d",
}

func planUsage() string {
	var b strings.Builder
	b.WriteString(`Usage:
  gpusim plan [SCENARIO] [--goal throughput|time-to-train|cost|max-batch] [--budget 12h|$500]
              [--gpus a100-40gb,l4,...] [--prices FILE] [--max-gpus N] [--max-nodes N]
              [--margin 0.1] [--min-batch B] [--max-batch B] [--dataset-size N --epochs E]
              [--top 5] [--show 1] [--steps 20] [--set key=value]... [-o text|json]
              [--space full|small] [--shard K/N|N|auto]
  gpusim plan ... --shard K/N > PART.json; gpusim plan merge PART.json... [-o text|json] [--show 1]

plan searches the settings a TF user controls around the scenario: the batch per replica and
gradient accumulation, the precision policy and loss scaling, XLA, TF32, the memory mode
(preallocate or growth), the tf.data pipeline (parallel map, prefetch, cache: when the
scenario has an input section), the GPU count and strategy (MirroredStrategy, or
MultiWorkerMirroredStrategy across hosts, and Horovod), and with --gpus the GPU itself. A plan
fits when it does not run out of memory and its peak in use leaves --margin of the
allocator's limit free.

Before simulating, each plan gets cheap bounds from its step plan: the variables, slots and
saved activations against the GPU's memory (too large: pruned), then a roofline lower bound of
the step from FLOPs and bytes against the GPU's peaks, and the priced compute of the step; the
plans are simulated best bound first, and those whose bound cannot beat the --top plans found
are pruned. The report counts each.

Goals: throughput (samples/s), time-to-train (--dataset-size samples x --epochs at the median
step), cost (GPU-hours x $/GPU-hour from --prices: a YAML file, examples/prices.yaml, whose
figures are illustrative), max-batch (the largest global batch that fits; ties: throughput).
--budget drops plans that train for longer (a duration: 12h, 3d) or cost more ($500).
Counts run 1, 2, 4, ... up to --max-gpus (the scenario's GPUs by default, 8 with --gpus);
above 8 they are whole hosts of 8, up to --max-nodes. A scenario that names its devices
(cuda_visible_devices, visible_devices, device, strategy.devices) keeps its count.
--space small searches a tenth of that, as the workshop page's plan panel does: the scenario's
GPU, count, strategy and memory mode, replica batches of 1/2, 1, 2 and 4 times the scenario's
(up to 32 times for max-batch), accumulation 1 and 2, precision, loss scaling, XLA, TF32 and
the tf.data parallel calls and prefetch.

The predicted figures are the simulator's, with their 80% prediction intervals from the
validation residuals of runs like each plan (the calibration work); where no residual pool
answers, the report says "no interval yet".

--shard K/N searches only the points of the space shard K of N owns (point i is shard i mod N's)
and writes what it found as a part, for a Slurm job array or a Kubernetes Indexed Job (N alone
or auto read K from their environment, as gpusim compare --shard does); gpusim plan merge joins
the parts into the unsharded ranking (docs/plan.md: "On a cluster").

Examples:
`)
	for _, e := range planExamples {
		b.WriteString("  " + e + "\n")
	}
	return b.String()
}

// planFlags are gpusim plan's flags as given.
type planFlags struct {
	goal, budget, gpus, prices string
	maxGPUs, maxNodes          int
	minBatch, maxBatch         int
	margin                     float64
	dataset, epochs            int
	top, show, steps           int
	space                      string
	c                          capacityFlags
}

func runPlan(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	fs := pflag.NewFlagSet("plan", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f planFlags
	fs.StringVar(&f.goal, "goal", "throughput", "`goal`: throughput, time-to-train, cost or max-batch")
	fs.StringVar(&f.budget, "budget", "", "drop plans that train longer (12h, 3d) or cost more ($500)")
	fs.StringVar(&f.gpus, "gpus", "", "comma-separated GPU profiles to choose among (default: the scenario's)")
	fs.StringVar(&f.prices, "prices", "", "YAML `file` of $/GPU-hour by GPU (examples/prices.yaml)")
	fs.IntVar(&f.maxGPUs, "max-gpus", 0, "most GPUs (default: the scenario's, 8 with --gpus)")
	fs.IntVar(&f.maxNodes, "max-nodes", 1, "most hosts of 8 GPUs")
	fs.IntVar(&f.minBatch, "min-batch", 0, "smallest global batch (0: none)")
	fs.IntVar(&f.maxBatch, "max-batch", 0, "largest global batch (0: none)")
	fs.Float64Var(&f.margin, "margin", 0.1, "share of the allocator's limit a plan must leave free")
	fs.IntVar(&f.dataset, "dataset-size", 1_000_000, "samples per epoch, for time-to-train and cost")
	fs.IntVar(&f.epochs, "epochs", 1, "epochs, for time-to-train and cost")
	fs.IntVar(&f.top, "top", 5, "plans ranked")
	fs.IntVar(&f.show, "show", 1, "top plans shown with their --set lines and TF code")
	fs.StringArrayVar(&f.c.sets, "set", nil, "override a scenario `key=value` (repeatable)")
	fs.StringVarP(&f.c.format, "output", "o", "text", "output format: text or json")
	fs.IntVarP(&f.c.jobs, "jobs", "j", runtime.GOMAXPROCS(0), "simulations at once (the answer does not depend on it)")
	fs.IntVar(&f.steps, "steps", 20, "optimizer updates each plan simulates")
	fs.StringVar(&f.space, "space", "full", "the space searched: full, or small (the workshop page's)")
	shardArg := fs.String("shard", "", "search only shard `K/N` of the space (0-based; N alone or auto: from the Slurm or Kubernetes environment) and write it as a part for 'gpusim plan merge'")
	help := fs.BoolP("help", "h", false, "show this help")
	if len(args) > 0 && args[0] == "merge" {
		return planMerge(stdout, args[1:])
	}
	if err := fs.Parse(args); err != nil {
		return usagef("plan: %v", err)
	}
	if *help {
		fmt.Fprint(stdout, planUsage()+"\nFlags:\n"+fs.FlagUsages())
		return nil
	}
	shard, err := planShardFlag(fs, *shardArg)
	if err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("plan: want at most one scenario, got %d: %s", fs.NArg(), strings.Join(fs.Args(), " "))
	}
	sc, err := scenarios.Resolve(fs.Arg(0))
	if err != nil {
		return asUsage(err)
	}
	if err := sc.SetAll(f.c.sets); err != nil {
		return asUsage(err)
	}
	o, err := f.options(sc, fs)
	if err != nil {
		return err
	}
	if shard != nil {
		o.Shard = *shard
	}
	rep, err := analysis.Plan(ctx, sc.Config, o)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var te *analysis.TrialError
		if se, ok := sc.RunError(err); ok && errors.As(err, &te) {
			return usagef("plan: %s: %s: %v", se.Place, se.Field, se.Err)
		}
		return fmt.Errorf("plan %s: %w", sc.Name, err)
	}
	v := newPlanView(sc, rep, o)
	switch {
	case shard != nil:
		return writePlanPart(stdout, *shard, compareWithoutShard(args), f.top, v)
	case f.c.format == "json":
		return writeCapacityJSON(stdout, planJSON(v))
	}
	return writePlanText(stdout, v, f.show)
}

// options checks the flags and turns them into analysis.PlanOptions.
func (f *planFlags) options(sc *scenarios.Scenario, fs *pflag.FlagSet) (analysis.PlanOptions, error) {
	o := analysis.PlanOptions{Goal: analysis.Goal(f.goal), Margin: f.margin, MinBatch: f.minBatch, MaxBatch: f.maxBatch,
		MaxNodes: f.maxNodes, Top: f.top, Steps: f.steps, Jobs: f.c.jobs,
		Training: analysis.Training{DatasetSize: f.dataset, Epochs: f.epochs}}
	switch {
	case f.c.format != "text" && f.c.format != "json":
		return o, usagef("plan: -o %q: want text or json", f.c.format)
	case !isGoal(o.Goal):
		return o, usagef("plan: --goal %q: want throughput, time-to-train, cost or max-batch", f.goal)
	case f.c.jobs < 1:
		return o, usagef("plan: --jobs %d: want at least 1", f.c.jobs)
	case !(f.margin >= 0 && f.margin < 1):
		return o, usagef("plan: --margin %v: want 0 <= margin < 1", f.margin)
	case f.top < 1 || f.show < 0:
		return o, usagef("plan: --top %d --show %d: want --top >= 1 and --show >= 0", f.top, f.show)
	case f.maxNodes < 1:
		return o, usagef("plan: --max-nodes %d: want at least 1", f.maxNodes)
	case f.minBatch < 0 || f.maxBatch < 0 || (f.maxBatch > 0 && f.maxBatch < f.minBatch):
		return o, usagef("plan: --min-batch %d --max-batch %d: want 0 <= min <= max", f.minBatch, f.maxBatch)
	case f.dataset < 1 || f.epochs < 1 || f.epochs > maxEpochs:
		return o, usagef("plan: --dataset-size %d --epochs %d: want both at least 1 (epochs at most %d)", f.dataset, f.epochs, maxEpochs)
	}
	if err := scenarios.CheckInt("steps", int64(f.steps)); err != nil || f.steps < 1 {
		return o, usagef("plan: --steps %d: want a scenario steps value of at least 1", f.steps)
	}
	var gpus []string
	if f.gpus != "" {
		for _, g := range strings.Split(f.gpus, ",") {
			gpus = append(gpus, strings.TrimSpace(g))
		}
	}
	maxGPUs := f.maxGPUs
	switch {
	case fs.Changed("max-gpus") && maxGPUs < 1:
		return o, usagef("plan: --max-gpus %d: want at least 1", maxGPUs)
	case !fs.Changed("max-gpus") && len(gpus) > 0:
		maxGPUs = 8
	case !fs.Changed("max-gpus"):
		maxGPUs = max(sc.Config.GPUCount, 1) * sc.Config.NodeCount()
	}
	if err := scenarios.CheckInt("hardware.count", int64(maxGPUs)); err != nil {
		return o, usagef("plan: --max-gpus (a hardware.count): %v", err)
	}
	switch f.space {
	case "full":
		o.Space = analysis.DefaultPlanSpace(sc.Config, gpus, maxGPUs)
		if o.Goal == analysis.GoalMaxBatch {
			// The largest batch is the question: replica batches past the default ladder,
			// which the memory bound prunes cheaply where they cannot fit.
			o.Space.ReplicaBatches = append(o.Space.ReplicaBatches, 2048, 4096, 8192, 16384)
			o.Space.Accumulation = append(o.Space.Accumulation, 8, 16)
		}
	case "small":
		if len(gpus) > 0 || fs.Changed("max-gpus") || fs.Changed("max-nodes") {
			return o, usagef("plan: --space small keeps the scenario's GPU and count: give --gpus, --max-gpus and --max-nodes to --space full")
		}
		o.Space, o.MaxNodes = analysis.SmallPlanSpace(sc.Config, o.Goal), sc.Config.NodeCount()
	default:
		return o, usagef("plan: --space %q: want full or small", f.space)
	}
	if f.prices != "" {
		p, err := loadPrices(f.prices)
		if err != nil {
			return o, err
		}
		o.Prices = p
	}
	if o.Goal == analysis.GoalCost && f.prices == "" {
		return o, usagef("plan: --goal cost needs --prices FILE ($/GPU-hour by GPU; examples/prices.yaml)")
	}
	for _, g := range o.Space.GPUs {
		if _, ok := o.Prices[g]; f.prices != "" && !ok {
			return o, usagef("plan: %s: no price for %s (add \"%s: DOLLARS_PER_HOUR\" under prices:)", f.prices, g, g)
		}
	}
	if f.budget != "" {
		if err := parseBudget(f.budget, &o); err != nil {
			return o, err
		}
		if o.BudgetDollars > 0 && f.prices == "" {
			return o, usagef("plan: --budget %s needs --prices FILE", f.budget)
		}
	}
	return o, nil
}

func isGoal(g analysis.Goal) bool {
	for _, x := range analysis.Goals {
		if g == x {
			return true
		}
	}
	return false
}

// parseBudget reads "$500" as dollars and "12h", "90m", "3d" as a time to train.
func parseBudget(s string, o *analysis.PlanOptions) error {
	if v, ok := strings.CutPrefix(s, "$"); ok {
		d, err := strconv.ParseFloat(v, 64)
		if err != nil || !(d > 0) || math.IsInf(d, 0) {
			return usagef("plan: --budget %q: want dollars as $N (N > 0)", s)
		}
		o.BudgetDollars = d
		return nil
	}
	days := 0.0
	if v, ok := strings.CutSuffix(s, "d"); ok {
		d, err := strconv.ParseFloat(v, 64)
		if err != nil || !(d > 0) || math.IsInf(d, 0) {
			return usagef("plan: --budget %q: want a duration (12h, 90m, 3d) or dollars ($500)", s)
		}
		days = d
	} else {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return usagef("plan: --budget %q: want a duration (12h, 90m, 3d) or dollars ($500)", s)
		}
		o.BudgetSeconds = d.Seconds()
		return nil
	}
	o.BudgetSeconds = days * 86400
	return nil
}

// loadPrices reads a price file: a YAML mapping with a prices: section of GPU profile name to
// US dollars per GPU-hour (date:, currency: and comments are for the reader).
func loadPrices(file string) (map[string]float64, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, usagef("plan: --prices: %v", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, usagef("plan: %s: %v", file, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, usagef("plan: %s: want a mapping with a prices: section", file)
	}
	top := doc.Content[0]
	var prices *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		switch k := top.Content[i]; k.Value {
		case "prices":
			prices = top.Content[i+1]
		case "date", "currency", "note":
		default:
			return nil, usagef("plan: %s:%d: %s: unknown key (want prices, date, currency, note)", file, k.Line, k.Value)
		}
	}
	if prices == nil || prices.Kind != yaml.MappingNode {
		return nil, usagef("plan: %s: prices: want a mapping of GPU name to $/GPU-hour", file)
	}
	out := map[string]float64{}
	for i := 0; i+1 < len(prices.Content); i += 2 {
		k, v := prices.Content[i], prices.Content[i+1]
		p, err := strconv.ParseFloat(v.Value, 64)
		if v.Kind != yaml.ScalarNode || err != nil || !(p > 0) || math.IsInf(p, 0) {
			return nil, usagef("plan: %s:%d: prices.%s: %q: want a positive number of $/GPU-hour", file, v.Line, k.Value, v.Value)
		}
		if _, dup := out[k.Value]; dup {
			return nil, usagef("plan: %s:%d: prices.%s: given twice", file, k.Line, k.Value)
		}
		out[k.Value] = p
	}
	return out, nil
}

// planSetLines are a plan's changes as --set arguments (scenario keys).
func planSetLines(p analysis.PlanResult) []string {
	out := scenarios.SetLines(p.Changes)
	for i, s := range out {
		out[i] = "--set " + s
	}
	return out
}

// noInterval is what a figure without a calibrated interval says.
const noInterval = "no interval yet"

// intervalNote says where the intervals come from.
const intervalNote = "80% prediction intervals from the validation residuals of runs like each plan (gpusim validate); \"no interval yet\" where none answers"

// planView is what gpusim plan prints, whatever the format: the report, the scenario's name
// and setup, the options the text shows, and each plan's TF code. A shard's part carries it,
// so that plan merge prints what one process prints.
type planView struct {
	Scenario      string               `json:"scenario"`
	Setup         string               `json:"setup"`
	Margin        float64              `json:"margin"`
	Steps         int                  `json:"steps"`
	BudgetDollars float64              `json:"budget_dollars,omitempty"`
	BudgetSeconds float64              `json:"budget_seconds,omitempty"`
	Priced        bool                 `json:"priced,omitempty"`
	Report        *analysis.PlanReport `json:"report"`
	// TFCode is the TF/Keras code of each plan by point (the scenario as it is at -1).
	TFCode map[int]string `json:"tf_code"`
	// Shards is how many shards searched the space (0: one process).
	Shards int `json:"shards,omitempty"`
}

func newPlanView(sc *scenarios.Scenario, rep *analysis.PlanReport, o analysis.PlanOptions) planView {
	v := planView{Scenario: sc.Name, Setup: capacitySetup(sc.Config), Margin: o.Margin, Steps: o.Steps,
		BudgetDollars: o.BudgetDollars, BudgetSeconds: o.BudgetSeconds, Priced: o.Prices != nil, Report: rep,
		TFCode: map[int]string{}}
	for _, p := range append([]analysis.PlanResult{*rep.Current}, rep.Plans...) {
		v.TFCode[p.Point] = report.TFCode(&p.Config)
	}
	return v
}

// costColumns says whether the table shows the time to train and GPU-hours.
func (v planView) costColumns() bool {
	g := v.Report.Goal
	return g == analysis.GoalCost || g == analysis.GoalTimeToTrain || v.BudgetDollars > 0 || v.BudgetSeconds > 0
}

func planJSON(v planView) any {
	type plan struct {
		analysis.PlanResult
		Set    []string `json:"set"`
		TFCode string   `json:"tf_code"`
	}
	wrap := func(p analysis.PlanResult) plan {
		return plan{PlanResult: p, Set: planSetLines(p), TFCode: v.TFCode[p.Point]}
	}
	rep := v.Report
	out := struct {
		Scenario string `json:"scenario"`
		Setup    string `json:"setup"`
		Shards   int    `json:"shards,omitempty"`
		*analysis.PlanReport
		Current  plan   `json:"current"`
		Plans    []plan `json:"plans"`
		Interval string `json:"interval_note"`
	}{Scenario: v.Scenario, Setup: v.Setup, Shards: v.Shards, PlanReport: rep, Current: wrap(*rep.Current), Interval: intervalNote}
	for _, p := range rep.Plans {
		out.Plans = append(out.Plans, wrap(p))
	}
	return out
}

func writePlanText(w io.Writer, v planView, show int) error {
	var b strings.Builder
	rep := v.Report
	fmt.Fprintf(&b, "gpusim plan: %s, goal %s\n", v.Scenario, rep.Goal)
	fmt.Fprintf(&b, "  now: %s, %d x GPU, %s\n", v.Setup, rep.Current.Knobs.GPUs, rep.Current.Knobs.Strategy)
	fmt.Fprintf(&b, "  fits: no OOM and peak in use <= %.0f%% of the allocator's limit; %d steps per plan\n", 100*(1-v.Margin), v.Steps)
	if rep.Goal == analysis.GoalTimeToTrain || rep.Goal == analysis.GoalCost {
		fmt.Fprintf(&b, "  training: %d epoch(s) of %d samples at the median step\n", rep.Training.Epochs, rep.Training.DatasetSize)
	}
	in := ""
	if v.Shards > 1 {
		// Each shard prunes against its own top plans: the roofline, compute and simulated
		// counts are the shards' work summed, more simulated than one search needs.
		in = fmt.Sprintf(" in %d shards", v.Shards)
	}
	fmt.Fprintf(&b, "  searched %d plans%s: %d outside the batch range, %d pruned by the memory bound, %d by budget,\n",
		rep.Space, in, rep.OutOfRange, rep.PrunedMemory, rep.PrunedBudget)
	fmt.Fprintf(&b, "  %d by the roofline bound, %d by the compute bound; %d simulated (%d do not fit or break the budget)\n",
		rep.PrunedRoofline, rep.PrunedCompute, rep.Simulated, rep.Infeasible)
	fmt.Fprintf(&b, "  intervals: %s\n\n", intervalNote)
	if len(rep.Plans) == 0 {
		b.WriteString("no plan fits within the constraints\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	writePlanTable(&b, v)
	b.WriteString("\nwhy\n")
	for _, p := range append([]analysis.PlanResult{*rep.Current}, rep.Plans...) {
		name := "now"
		if p.Rank > 0 {
			name = strconv.Itoa(p.Rank)
		}
		fmt.Fprintf(&b, "  %-4s %s: %s\n", name, p.Bound, p.Why)
	}
	if rep.Goal == analysis.GoalCost || v.BudgetDollars > 0 {
		b.WriteString("\ncost (GPU-hours x $/GPU-hour = $)\n")
		for _, p := range rep.Plans {
			fmt.Fprintf(&b, "  %d  %d x %s x %s = %.2f GPU-hours x $%.2f/h = $%.2f%s\n", p.Rank, p.Knobs.GPUs, p.Knobs.GPU,
				fmtTrainTime(p.TrainSeconds), p.GPUHours, p.PricePerGPUHour, p.Dollars, ivText(p.DollarsInterval, "$%.2f"))
		}
	}
	for _, p := range rep.Plans[:min(show, len(rep.Plans))] {
		fmt.Fprintf(&b, "\nplan %d as a scenario diff:\n", p.Rank)
		lines := planSetLines(p)
		if len(lines) == 0 {
			b.WriteString("  (the scenario as it is)\n")
		}
		for _, l := range lines {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		fmt.Fprintf(&b, "  check: gpusim run %s %s\n", v.Scenario, strings.Join(lines, " "))
		fmt.Fprintf(&b, "plan %d as TF/Keras code:\n", p.Rank)
		for _, l := range strings.Split(strings.TrimRight(v.TFCode[p.Point], "\n"), "\n") {
			fmt.Fprintln(&b, strings.TrimRight("  "+l, " "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writePlanTable writes the ranked plans under the scenario as it is ("now").
func writePlanTable(b *strings.Builder, v planView) {
	rep := v.Report
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	head := "  rank\tGPU\tGPUs\tstrategy\tbatch\taccum\tprecision\tXLA\tTF32\tmemory\tsamples/s\t80% interval\tstep\tpeak / limit\tthroughput vs now"
	cost := v.costColumns()
	if cost {
		head += "\ttime to train\tGPU-hours"
		if v.Priced {
			head += "\t$"
		}
	}
	fmt.Fprintln(tw, head)
	cur := rep.Current.Throughput
	for _, p := range append([]analysis.PlanResult{*rep.Current}, rep.Plans...) {
		k := p.Knobs
		name, vs := "now", "-"
		if p.Rank > 0 {
			name = strconv.Itoa(p.Rank)
			if cur > 0 {
				vs = fmt.Sprintf("%+.1f%%", 100*(p.Throughput/cur-1))
			}
		}
		prec := k.Precision
		if k.StaticLossScale && k.Precision == "mixed_float16" {
			prec += " (static)"
		}
		tp, st := fmt.Sprintf("%.0f", p.Throughput), fmtSeconds(p.StepTime)
		if p.OOM != nil {
			tp, st = "OOM", "-"
		}
		iv := noInterval
		if p.ThroughputInterval != nil {
			iv = fmt.Sprintf("%.0f-%.0f", p.ThroughputInterval[0], p.ThroughputInterval[1])
		}
		row := fmt.Sprintf("  %s\t%s\t%d\t%s\t%d\t%d\t%s\t%t\t%t\t%s\t%s\t%s\t%s\t%s / %s\t%s", name, k.GPU, k.GPUs, k.Strategy, k.GlobalBatch,
			k.Accumulation, prec, k.XLA, k.TF32, k.Memory, tp, iv, st, fmtBytes(p.PeakBytes), fmtBytes(p.LimitBytes), vs)
		if cost {
			row += fmt.Sprintf("\t%s\t%.2f", fmtTrainTime(p.TrainSeconds), p.GPUHours)
			if v.Priced {
				row += fmt.Sprintf("\t%.2f", p.Dollars)
			}
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
}
