package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
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
		return report.FromResult(c.Label, c.Params, res.Result), nil
	}, nil
}

func compareMain(ctx context.Context, stdout, stderr io.Writer, args []string, prepare comparePrepare, terminal bool) error {
	if len(args) > 0 && args[0] == "merge" {
		return compareMerge(stdout, stderr, args[1:])
	}
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		varies   []string
		sets     []string
		format   string
		plotDir  string
		htmlFile string
		jobs     int
		progress string
		shardArg string
	)
	fs.StringArrayVar(&varies, "vary", nil, "`KEY=V1,V2,...`: a scenario key and its values (repeatable; cartesian product)")
	fs.StringArrayVar(&sets, "set", nil, "`KEY=VALUE` override applied to every configuration (repeatable)")
	fs.StringVarP(&format, "output", "o", "text", "table format: text, json or csv")
	fs.StringVar(&plotDir, "plot", "", "write PNG and SVG figures into `DIR`")
	fs.StringVar(&htmlFile, "html", "", "write a self-contained HTML report to `FILE`")
	fs.IntVarP(&jobs, "jobs", "j", runtime.GOMAXPROCS(0), "configurations simulated at once")
	fs.StringVar(&progress, "progress", "auto", "progress bar on stderr: auto (when a terminal), always or never")
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
	switch format {
	case "text", "json", "csv":
	default:
		return usagef("compare: -o %q: want text, json or csv", format)
	}
	if jobs < 1 {
		return usagef("compare: --jobs %d: want at least 1", jobs)
	}
	switch progress {
	case "auto":
	case "always":
		terminal = true
	case "never":
		terminal = false
	default:
		return usagef("compare: --progress %q: want auto, always or never", progress)
	}
	configs, err := compareConfigs(fs.Args(), sets, varies)
	if err != nil {
		return asUsage(fmt.Errorf("compare: %w", err))
	}
	if len(configs) < 2 {
		return usagef("compare: one configuration: give --vary KEY=V1,V2 or several scenarios (gpusim run simulates one)")
	}
	var shard *analysis.Shard
	if fs.Changed("shard") {
		s, err := analysis.ParseShard(shardArg, os.Getenv)
		if err != nil {
			return usagef("compare: --shard: %v", err)
		}
		for _, f := range []string{"output", "plot", "html"} {
			if fs.Changed(f) {
				return usagef("compare: --shard writes a part; give --%s to 'gpusim compare merge'", f)
			}
		}
		shard = &s
	}
	if os.Getenv("GOGC") == "" {
		// A sweep keeps every plan it priced and every result until it renders (about 250 MB
		// for the 1,000 configurations of docs/compare.md) while each run allocates its own
		// state; Go's default collector (GOGC=100) marks the whole live heap each time the
		// heap doubles, about a quarter of the sweep's CPU. 400 marks it a quarter as often
		// for about 20% more memory. A GOGC the user sets wins.
		defer debug.SetGCPercent(debug.SetGCPercent(compareGCPercent))
	}
	// Load and check everything first: a typo in the last configuration fails at once.
	runs := make([]func(context.Context) (report.Run, error), len(configs))
	sess := analysis.NewSession(nil)
	for i, c := range configs {
		if runs[i], err = prepare(c, sess); err != nil {
			return fmt.Errorf("compare: %s: %w", c.Label, err)
		}
	}
	idx := make([]int, len(runs))
	for i := range idx {
		idx[i] = i
	}
	if shard != nil {
		idx = shard.Indices(len(runs))
	}
	results, err := analysis.Sweep(ctx, len(idx), jobs, func(ctx context.Context, i int) (report.Run, error) { return runs[idx[i]](ctx) },
		compareProgress(stderr, terminal, len(idx)))
	var se *analysis.SweepError
	if errors.As(err, &se) {
		return fmt.Errorf("compare: %s: %w", configs[idx[se.Index]].Label, se.Err)
	}
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if shard != nil {
		return writeComparePart(stdout, *shard, compareWithoutShard(args), configs, idx, results)
	}
	return compareRender(stdout, stderr, results, format, plotDir, htmlFile, "gpusim compare "+strings.Join(args, " "))
}

// compareRender writes the comparison of results: the table in format on stdout, the plots
// into plotDir and the HTML report (showing command) into htmlFile when given.
func compareRender(stdout, stderr io.Writer, results []report.Run, format, plotDir, htmlFile, command string) error {
	var err error
	tab := report.Compare(results)
	var out bytes.Buffer
	switch format {
	case "text":
		err = tab.WriteText(&out)
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

// compareConfigs expands the scenarios and --vary lists into configurations: for each scenario
// (in argument order), the cartesian product of the lists with the first --vary changing
// slowest, so the first configuration (the base of the deltas) takes every first value.
func compareConfigs(scenarioArgs, sets, varies []string) ([]compareConfig, error) {
	type axis struct {
		key    string
		values []string
	}
	var axes []axis
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
		axes = append(axes, axis{key, vals})
	}
	if len(scenarioArgs) == 0 {
		scenarioArgs = []string{""}
	}
	var out []compareConfig
	for _, sc := range scenarioArgs {
		// combos are the value indices of each axis, counted like an odometer.
		idx := make([]int, len(axes))
		for {
			c := compareConfig{Scenario: sc, Sets: append([]string(nil), sets...)}
			var parts []string
			if len(scenarioArgs) > 1 {
				name := compareScenarioName(sc)
				c.Params = append(c.Params, report.RunParam{Key: "scenario", Value: name})
				parts = append(parts, name)
			}
			for i, a := range axes {
				val := a.values[idx[i]]
				c.Params = append(c.Params, report.RunParam{Key: a.key, Value: val})
				c.Sets = append(c.Sets, a.key+"="+val)
				parts = append(parts, a.key+"="+val)
			}
			c.Label = strings.Join(parts, ",")
			if c.Label == "" {
				c.Label = compareScenarioName(sc)
			}
			out = append(out, c)
			i := len(axes) - 1
			for ; i >= 0; i-- {
				idx[i]++
				if idx[i] < len(axes[i].values) {
					break
				}
				idx[i] = 0
			}
			if i < 0 {
				break
			}
		}
	}
	labels := map[string]bool{}
	for _, c := range out {
		if labels[c.Label] {
			return nil, fmt.Errorf("configuration %s appears twice", c.Label)
		}
		labels[c.Label] = true
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
