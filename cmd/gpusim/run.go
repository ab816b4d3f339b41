package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gpusim/gpusim/analysis"

	"github.com/spf13/pflag"

	"github.com/gpusim/gpusim/report"
	"github.com/gpusim/gpusim/scenarios"
	"github.com/gpusim/gpusim/train"
)

func init() {
	register(command{name: "run", summary: "simulate a training run and report memory, speed and OOMs", run: runRun})
}

// runExamples are the usage examples of gpusim run; a test runs each of them.
var runExamples = []string{
	"gpusim run",
	"gpusim run resnet50-a100 -o json",
	"gpusim run --set model=resnet50 --set batch=4096 --set hardware.gpu=t4",
	"gpusim run --set model=resnet50 --set batch=4096 --set hardware.gpu=t4 --set memory.growth=true -o json",
	"gpusim run growth-fragmentation -o csv",
	"gpusim run mirrored-4xa100 --plot plots --trace trace.json",
	"gpusim run resnet50-8xa100 --set strategy.cross_device_ops=reduction_to_one_device",
	"gpusim run accumulation-v100 --set accumulation_steps=1",
	"gpusim run hardcoded-gpu --set tf.device=/GPU:0",
}

func runUsage() string {
	var b strings.Builder
	b.WriteString(`Usage:
  gpusim run [SCENARIO] [--set key=value]... [-o text|json|csv] [--plot DIR] [--trace FILE]

Simulates a TensorFlow training run: every step's ops on the GPU, every tensor through TF's
allocator (so growth, fragmentation and OOM happen as in TF), all-reduce between replicas, the
input pipeline. SCENARIO is a YAML file or a built-in name (gpusim list scenarios); none means
the built-in "default". --set overrides one scenario key, with YAML values; it may repeat.

The report ends with a diagnosis: input-bound, compute-bound or communication-bound, with the
evidence. An input-bound run also re-simulates each tf.data change that may help (parallel
map, prefetch, both, cache, a larger batch) and names the one that helps most; other runs
re-simulate nothing.

An OOM the scenario predicts is a result (exit 0): -o json says "oom": true and gives TF's
message. Bad scenarios and bad --set values exit 2 naming the file:line (or the --set) and key.

GPU utilization (gpu_utilization in -o json and csv) is the fraction of the simulated run's
time the GPUs executed kernels, averaged over the replicas (busy_fraction per GPU). A run that
completed no step (steps_completed 0, e.g. an OOM in step 1) did not train: the text shows "-",
JSON and CSV say 0. -o csv has one row per GPU, with steps, steps_completed, idle (a visible
GPU that runs no replica), physical_gpu and busy_fraction.

Examples:
`)
	for _, e := range runExamples {
		b.WriteString("  " + e + "\n")
	}
	b.WriteString("\nScenario keys:\n")
	for _, k := range scenarios.Keys() {
		fmt.Fprintf(&b, "  %-26s %-13s %s\n", k[0], k[1], k[2])
	}
	return b.String()
}

func runRun(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	return runWith(ctx, stdout, stderr, args, train.Run)
}

// runWith is gpusim run simulating with simulate (train.Run; a test counts the simulations).
func runWith(ctx context.Context, stdout, stderr io.Writer, args []string, simulate analysis.RunFunc) error {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stdout, runUsage()+"\nFlags:\n")
		fs.SetOutput(stdout)
		fs.PrintDefaults()
	}
	sets := fs.StringArray("set", nil, "override a scenario `key=value` (repeatable), e.g. --set batch=128")
	format := fs.StringP("output", "o", "text", "output format: text, json or csv")
	plotDir := fs.String("plot", "", "also write the run's figures (memory, utilization, step breakdown) as PNG and SVG into `DIR`")
	tracePath := fs.String("trace", "", "also write a Chrome trace (chrome://tracing, Perfetto) of the run to `FILE`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return asUsage(fmt.Errorf("run: %w", err))
	}
	if fs.NArg() > 1 {
		return usagef("run: want at most one scenario, got %d: %s", fs.NArg(), strings.Join(fs.Args(), " "))
	}
	switch *format {
	case "text", "json", "csv":
	default:
		return usagef("run: -o %q: want text, json or csv", *format)
	}
	sc, err := scenarios.Resolve(fs.Arg(0))
	if err != nil {
		return asUsage(err)
	}
	if err := sc.SetAll(*sets); err != nil {
		return asUsage(err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	sess := analysis.NewSession(simulate)
	res, err := sess.Run(ctx, sc.Config)
	if err != nil {
		if se, ok := sc.RunError(err); ok {
			// TF rejects the configuration: bad input, named like a scenario error.
			return usageError{se}
		}
		return fmt.Errorf("run %s: %w", sc.Name, err)
	}
	// An input-bound run re-simulates each tf.data change that may help; other runs cost
	// nothing more.
	if err := sc.Remedies(ctx, sess, res); err != nil {
		return fmt.Errorf("run %s: diagnosis: %w", sc.Name, err)
	}
	if *plotDir != "" {
		paths, err := report.WriteResultPlots(*plotDir, res.Result)
		if err != nil {
			return fmt.Errorf("run: plots: %w", err)
		}
		fmt.Fprintf(stderr, "wrote %d figure files to %s\n", len(paths), *plotDir)
	}
	if *tracePath != "" {
		if err := writeOutput(ctx, stdout, *tracePath, func(w io.Writer) error { return report.WriteResultTrace(w, res.Result) }); err != nil {
			return fmt.Errorf("run: trace: %w", err)
		}
		fmt.Fprintf(stderr, "wrote trace %s\n", *tracePath)
	}
	switch *format {
	case "json":
		return report.WriteResultJSON(stdout, res)
	case "csv":
		return report.WriteResultCSV(stdout, res)
	}
	return report.WriteResultText(stdout, res)
}
