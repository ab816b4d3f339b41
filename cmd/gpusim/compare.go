package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpusim/gpusim/analysis"

	"github.com/gpusim/gpusim/report"
	"github.com/gpusim/gpusim/scenarios"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

func init() {
	register(command{name: "compare", summary: "simulate several configurations and compare them side by side", run: runCompare})
}

const compareUsage = `Usage:
  gpusim compare [SCENARIO] --vary KEY=V1,V2,... [--vary ...] [flags]
  gpusim compare SCENARIO.yaml SCENARIO.yaml ... [--vary ...] [flags]
  gpusim compare ... --shard K/N > PART.json; gpusim compare merge PART.json... [flags]

Simulates every configuration (the cartesian product of the --vary lists, for each scenario)
in parallel and prints one column per configuration, one row per metric, with the change
against the first column. A run that runs out of memory shows OOM. SCENARIO is a YAML file or
a built-in name; none means the embedded default. Values are split at commas outside [...].

Examples:
  gpusim compare memory-modes --vary memory.mode=preallocate,growth,limit --plot plots
  gpusim compare --vary precision=float32,mixed_float16 --vary batch=64,128 -o csv
  gpusim compare --vary hardware.count=1,2,4,8 --set strategy.name=mirrored --plot plots --html report.html
  gpusim compare --vary batch=32,64,128 --shard 0/2 > part-0.json   # on one machine
  gpusim compare --vary batch=32,64,128 --shard 1/2 > part-1.json   # on another
  gpusim compare merge part-0.json part-1.json -o csv               # the unsharded table

Flags:
`

// compareConfig is one configuration of a comparison.
type compareConfig struct {
	Label    string
	Scenario string            // the SCENARIO argument ("" = the embedded default)
	Params   []report.RunParam // the varied keys, in --vary order
	Sets     []string          // key=value overrides: the --set flags, then the varied values
}

// comparePrepare loads and checks one configuration and returns the function that simulates
// it in sess (shared by the comparison's configurations, so a baseline two of them need is
// simulated once). A bad configuration is reported before anything runs.
type comparePrepare func(c compareConfig, sess *analysis.Session) (func(context.Context) (report.Run, error), error)

// compareGCPercent is the garbage collector's target a sweep runs with (see compareMain).
const compareGCPercent = 400

// compareMemoryLimit is the soft memory limit of a sweep that keeps no series (see
// compareMain): about three times what such a sweep keeps live, under issue 32's 200 MB budget
// for 1,000 configurations.
const compareMemoryLimit = 150 << 20

func runCompare(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	return compareMain(ctx, stdout, stderr, args, prepareScenario, compareIsTerminal(stderr))
}

// prepareScenario resolves the scenario, applies the overrides and returns an analysis run
// of it (the run, its baselines and its diagnosis).
func prepareScenario(c compareConfig, sess *analysis.Session) (func(context.Context) (report.Run, error), error) {
	s, err := scenarios.Resolve(c.Scenario)
	if err != nil {
		return nil, asUsage(err)
	}
	for _, kv := range c.Sets {
		if err := s.Set(kv); err != nil {
			return nil, asUsage(err)
		}
	}
	cfg := s.Config
	// A comparison writes no trace (its table, figures and report read no op spans), so its
	// runs record none: simulator.trace_steps would only cost time and memory here.
	cfg.TraceSteps = 0
	return func(ctx context.Context) (report.Run, error) {
		res, err := sess.Run(ctx, cfg)
		if err != nil {
			// train.Run fails only on a configuration TF itself rejects: bad input.
			return report.Run{}, asUsage(err)
		}
		return report.FromAnalysis(c.Label, c.Params, res), nil
	}, nil
}

func compareMain(ctx context.Context, stdout, stderr io.Writer, args []string, prepare comparePrepare, terminal bool) error {
	if len(args) > 0 && args[0] == "merge" {
		return compareMerge(stdout, stderr, args[1:])
	}
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		varies     []string
		sets       []string
		format     string
		plotDir    string
		htmlFile   string
		jobs       int
		progress   string
		shardArg   string
		maxConfigs int
		width      int
	)
	fs.StringArrayVar(&varies, "vary", nil, "`KEY=V1,V2,...`: a scenario key and its values (repeatable; cartesian product)")
	fs.StringArrayVar(&sets, "set", nil, "`KEY=VALUE` override applied to every configuration (repeatable)")
	fs.StringVarP(&format, "output", "o", "text", "table format: text, json or csv")
	fs.StringVar(&plotDir, "plot", "", "write PNG and SVG figures into `DIR`")
	fs.StringVar(&htmlFile, "html", "", "write a self-contained HTML report to `FILE`")
	fs.IntVarP(&jobs, "jobs", "j", runtime.GOMAXPROCS(0), "configurations simulated at once")
	fs.IntVar(&width, "width", -1, widthUsage)
	fs.StringVar(&progress, "progress", "auto", "progress bar on stderr: auto (when a terminal), always or never")
	fs.IntVar(&maxConfigs, "max-configs", defaultMaxConfigs, "refuse a comparison that would simulate more than `N` configurations (with --plot, --html or --shard a sweep keeps every run's series: about 400 MB resident per 1,000, 160 MB without)")
	fs.StringVar(&shardArg, "shard", "", "simulate only shard `K/N` of the configurations (0-based; N alone or auto: from the Slurm or Kubernetes environment) and write it as a part for 'gpusim compare merge'")
	help := fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return usagef("compare: %v", err)
	}
	if *help {
		fmt.Fprint(stdout, compareUsage)
		fmt.Fprint(stdout, fs.FlagUsages())
		return nil
	}
	terminal, err := compareCheckFlags(format, jobs, progress, terminal)
	if err != nil {
		return err
	}
	if width, err = tableWidth(width, stdout); err != nil {
		return err
	}
	prod, err := newCompareProduct(fs.Args(), sets, varies)
	if err != nil {
		return asUsage(fmt.Errorf("compare: %w", err))
	}
	if prod.count.Cmp(big.NewInt(2)) < 0 {
		return usagef("compare: one configuration: give --vary KEY=V1,V2 or several scenarios (gpusim run simulates one)")
	}
	shard, err := compareShardFlag(fs, shardArg)
	if err != nil {
		return err
	}
	idx, err := compareIndices(prod, shard, maxConfigs)
	if err != nil {
		return err
	}
	// The table reads each run's label, parameters, OOM and metrics; only the figures, the
	// HTML report and a shard's part (merged into either) read its series.
	series := shard != nil || plotDir != "" || htmlFile != ""
	defer compareGC(series)()
	// Load and check every configuration to simulate first: a typo in the last fails at once.
	configs := make([]compareConfig, len(idx))
	runs := make([]func(context.Context) (report.Run, error), len(idx))
	sess := analysis.NewSession(nil)
	for i, j := range idx {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
		configs[i] = prod.config(j)
		if runs[i], err = prepare(configs[i], sess); err != nil {
			return fmt.Errorf("compare: %s: %w", configs[i].Label, err)
		}
	}
	results, err := analysis.Sweep(ctx, len(idx), jobs, func(ctx context.Context, i int) (report.Run, error) {
		r, err := runs[i](ctx)
		if !series {
			r = tableRun(r)
		}
		return r, err
	}, compareProgress(stderr, terminal, len(idx)))
	var se *analysis.SweepError
	if errors.As(err, &se) {
		return fmt.Errorf("compare: %s: %w", configs[se.Index].Label, se.Err)
	}
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if shard != nil {
		return writeComparePart(ctx, stdout, *shard, compareWithoutShard(args), prod, idx, results)
	}
	return compareRender(stdout, stderr, results, format, width, plotDir, htmlFile, "gpusim compare "+strings.Join(args, " "))
}

// compareGC sets the collector for a sweep that keeps every run's series (series) or only
// their table cells, and returns what restores the settings.
func compareGC(series bool) (restore func()) {
	if os.Getenv("GOGC") == "" {
		// Each run allocates its own state and drops it: Go's default collector (GOGC=100)
		// marks the live heap each time the heap doubles, about a quarter of the sweep's CPU;
		// 400 marks it a quarter as often. What stays live is bounded when the sweep keeps no
		// series (the plan caches, 32 + 16 MB, and a few hundred bytes of metrics per run:
		// about 40-65 MB for the 1,000 configurations of docs/compare.md), so there a soft
		// limit of compareMemoryLimit keeps the heap 400 would grow to (about 300 MB) near it;
		// a sweep that keeps every run's series grows with its runs and gets no limit, so the
		// collector never works against it. A GOGC or GOMEMLIMIT the user sets wins.
		gc := debug.SetGCPercent(compareGCPercent)
		restore := func() { debug.SetGCPercent(gc) }
		if !series && os.Getenv("GOMEMLIMIT") == "" {
			limit := debug.SetMemoryLimit(compareMemoryLimit)
			return func() { debug.SetMemoryLimit(limit); restore() }
		}
		return restore
	}
	return func() {}
}

// tableRun is r without its series (memory, utilization, input buffer, breakdown, trace):
// what report.Compare's table reads, and what a sweep of a thousand runs need not hold.
func tableRun(r report.Run) report.Run {
	return report.Run{Label: r.Label, Params: r.Params, OOM: r.OOM, OOMMessage: r.OOMMessage, Metrics: r.Metrics}
}

// compareCheckFlags checks -o, --jobs and --progress, and returns whether to draw a
// progress bar (terminal: stderr is one).
func compareCheckFlags(format string, jobs int, progress string, terminal bool) (bool, error) {
	switch format {
	case "text", "json", "csv":
	default:
		return false, usagef("compare: -o %q: want text, json or csv", format)
	}
	if jobs < 1 {
		return false, usagef("compare: --jobs %d: want at least 1", jobs)
	}
	switch progress {
	case "auto":
		return terminal, nil
	case "always":
		return true, nil
	case "never":
		return false, nil
	}
	return false, usagef("compare: --progress %q: want auto, always or never", progress)
}

// compareShardFlag parses --shard (nil when not given); a shard writes a part, so the
// rendering flags belong to merge.
func compareShardFlag(fs *pflag.FlagSet, arg string) (*analysis.Shard, error) {
	if !fs.Changed("shard") {
		return nil, nil
	}
	s, err := analysis.ParseShard(arg, os.Getenv)
	if err != nil {
		return nil, usagef("compare: --shard: %v", err)
	}
	for _, f := range []string{"output", "plot", "html"} {
		if fs.Changed(f) {
			return nil, usagef("compare: --shard writes a part; give --%s to 'gpusim compare merge'", f)
		}
	}
	return &s, nil
}

// defaultMaxConfigs is --max-configs' default: ten times docs/compare.md's 1,000-config
// sweep, whose runs' series (kept for --plot, --html and --shard) take gigabytes at that
// count; a product past it is a typo far more often than a plan.
const defaultMaxConfigs = 10000

// compareIndices returns the configurations this process simulates: all of them, or the
// shard's share. More than max is refused with the count, before any configuration is built.
func compareIndices(p *compareProduct, shard *analysis.Shard, max int) ([]int, error) {
	n := new(big.Int).Set(p.count)
	what := fmt.Sprintf("%s configurations (%s)", p.count, p.describe())
	if shard != nil {
		// Shard k of c owns configurations k, k+c, k+2c, ...: ceil((count-k)/c) of them.
		n.Sub(n, big.NewInt(int64(shard.Index)))
		n.Add(n, big.NewInt(int64(shard.Count-1)))
		n.Div(n, big.NewInt(int64(shard.Count)))
		if n.Sign() < 0 {
			n.SetInt64(0)
		}
		what = fmt.Sprintf("shard %s has %s of the %s", shard, n, what)
	}
	if n.Cmp(big.NewInt(int64(max))) > 0 || !p.count.IsInt64() {
		return nil, usagef("compare: %s, more than --max-configs %d: narrow the --vary lists, split the sweep with --shard K/N or raise --max-configs", what, max)
	}
	count := int(p.count.Int64())
	if shard != nil {
		return shard.Indices(count), nil
	}
	idx := make([]int, count)
	for i := range idx {
		idx[i] = i
	}
	return idx, nil
}

// compareRender writes the comparison of results: the table in format on stdout, the plots
// into plotDir and the HTML report (showing command) into htmlFile when given.
func compareRender(stdout, stderr io.Writer, results []report.Run, format string, width int, plotDir, htmlFile, command string) error {
	var err error
	tab := report.Compare(results)
	var out bytes.Buffer
	switch format {
	case "text":
		err = tab.WriteTextWidth(&out, width)
	case "json":
		err = tab.WriteJSON(&out)
	case "csv":
		err = tab.WriteCSV(&out)
	}
	if err != nil {
		return err
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if plotDir != "" {
		paths, err := report.WritePlots(plotDir, results)
		if err != nil {
			return fmt.Errorf("compare: %w", err)
		}
		fmt.Fprintf(stderr, "gpusim: wrote %d plot files to %s\n", len(paths), plotDir)
	}
	if htmlFile != "" {
		var page bytes.Buffer
		opts := report.HTMLOptions{Title: "gpusim comparison", Command: command}
		if err := report.WriteHTML(&page, results, opts); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(htmlFile), 0o755); err != nil {
			return fmt.Errorf("compare: html report: %w", err)
		}
		if err := report.WriteFileAtomic(htmlFile, page.Bytes()); err != nil {
			return fmt.Errorf("compare: write html report %s: %w", htmlFile, err)
		}
		fmt.Fprintf(stderr, "gpusim: wrote %s\n", htmlFile)
	}
	return nil
}

// compareAxis is one --vary key and its values.
type compareAxis struct {
	key    string
	values []string
}

// compareProduct is the configurations of a comparison: for each scenario (in argument
// order), the cartesian product of the --vary lists with the first --vary changing slowest,
// so configuration 0 (the base of the deltas) takes every first value. A configuration is
// computed from its index when needed: the product is never built whole, so its size is
// known, and refused, before it costs memory.
type compareProduct struct {
	scenarios []string
	sets      []string
	axes      []compareAxis
	count     *big.Int // the number of configurations, however large
}

// newCompareProduct parses the --vary lists. Labels are unique by construction once no axis
// repeats a value and no two scenarios share a name.
func newCompareProduct(scenarioArgs, sets, varies []string) (*compareProduct, error) {
	p := &compareProduct{scenarios: scenarioArgs, sets: sets}
	if len(p.scenarios) == 0 {
		p.scenarios = []string{""}
	}
	seen := map[string]bool{}
	for _, v := range varies {
		key, list, ok := strings.Cut(v, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, fmt.Errorf("--vary %q: want KEY=V1,V2,...", v)
		}
		if seen[key] {
			return nil, fmt.Errorf("--vary %q: %s is varied twice", v, key)
		}
		seen[key] = true
		vals, err := compareSplit(list)
		if err != nil {
			return nil, fmt.Errorf("--vary %q: %w", v, err)
		}
		given := map[string]bool{}
		for _, val := range vals {
			if given[val] {
				return nil, fmt.Errorf("--vary %q: %s=%s is given twice", v, key, val)
			}
			given[val] = true
		}
		p.axes = append(p.axes, compareAxis{key, vals})
	}
	if len(p.scenarios) > 1 {
		named := map[string]string{}
		for _, sc := range p.scenarios {
			name := compareScenarioName(sc)
			if first, dup := named[name]; dup {
				return nil, fmt.Errorf("scenarios %s and %s are both named %s in the comparison", first, sc, name)
			}
			named[name] = sc
		}
	}
	p.count = big.NewInt(int64(len(p.scenarios)))
	for _, a := range p.axes {
		p.count.Mul(p.count, big.NewInt(int64(len(a.values))))
	}
	return p, nil
}

// describe says how the count comes about: "2 scenarios x 10 x 1000 values".
func (p *compareProduct) describe() string {
	parts := make([]string, 0, len(p.axes)+1)
	if len(p.scenarios) > 1 {
		parts = append(parts, fmt.Sprintf("%d scenarios", len(p.scenarios)))
	}
	for _, a := range p.axes {
		parts = append(parts, strconv.Itoa(len(a.values)))
	}
	return strings.Join(parts, " x ") + " values"
}

// config returns configuration i (0 <= i < count).
func (p *compareProduct) config(i int) compareConfig {
	// i's digits, the last axis changing fastest, like an odometer.
	idx := make([]int, len(p.axes))
	for k := len(p.axes) - 1; k >= 0; k-- {
		n := len(p.axes[k].values)
		idx[k], i = i%n, i/n
	}
	sc := p.scenarios[i]
	c := compareConfig{Scenario: sc, Sets: append([]string(nil), p.sets...)}
	var parts []string
	if len(p.scenarios) > 1 {
		name := compareScenarioName(sc)
		c.Params = append(c.Params, report.RunParam{Key: "scenario", Value: name})
		parts = append(parts, name)
	}
	for k, a := range p.axes {
		val := a.values[idx[k]]
		c.Params = append(c.Params, report.RunParam{Key: a.key, Value: val})
		c.Sets = append(c.Sets, a.key+"="+val)
		parts = append(parts, a.key+"="+val)
	}
	c.Label = strings.Join(parts, ",")
	if c.Label == "" {
		c.Label = compareScenarioName(sc)
	}
	return c
}

// compareConfigs returns every configuration of the product (tests; compareMain builds only
// those it simulates).
func compareConfigs(scenarioArgs, sets, varies []string) ([]compareConfig, error) {
	p, err := newCompareProduct(scenarioArgs, sets, varies)
	if err != nil {
		return nil, err
	}
	out := make([]compareConfig, p.count.Int64())
	for i := range out {
		out[i] = p.config(i)
	}
	return out, nil
}

// compareScenarioName is the name a scenario argument gets in labels: the file's base name
// without extension, the built-in's name, or "default".
func compareScenarioName(arg string) string {
	if arg == "" {
		return "default"
	}
	base := filepath.Base(arg)
	return strings.TrimSuffix(strings.TrimSuffix(base, ".yaml"), ".yml")
}

// compareSplit splits a --vary list at commas outside brackets, so that a list value such as
// cuda_visible_devices=[0,1],[2,3] stays whole.
func compareSplit(list string) ([]string, error) {
	var vals []string
	depth, start := 0, 0
	for i, r := range list {
		switch r {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced %q at offset %d", r, i)
			}
		case ',':
			if depth == 0 {
				vals = append(vals, strings.TrimSpace(list[start:i]))
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, errors.New("unbalanced brackets")
	}
	vals = append(vals, strings.TrimSpace(list[start:]))
	for _, v := range vals {
		if v == "" {
			return nil, errors.New("empty value")
		}
	}
	return vals, nil
}

// compareProgress returns the function called after each simulation: a progress bar on a
// terminal, nothing otherwise.
func compareProgress(stderr io.Writer, terminal bool, n int) func() {
	if !terminal {
		return func() {}
	}
	bar := progressbar.NewOptions(n,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription("simulating"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	var mu sync.Mutex
	return func() {
		mu.Lock()
		defer mu.Unlock()
		_ = bar.Add(1) // a progress bar that cannot draw is not worth failing the run
	}
}

// compareIsTerminal reports whether w is a terminal (progress bars only go there).
func compareIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
