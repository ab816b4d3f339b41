package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/gpusim/gpusim/calibrate"
	"github.com/gpusim/gpusim/calibrate/xprof"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/internal/units"
	"github.com/gpusim/gpusim/scenarios"
	"github.com/gpusim/gpusim/train"
)

func init() {
	register(command{name: "calibrate", summary: "read a real GPU (NVML), record a job, fit a profile", run: func(ctx context.Context, stdout, stderr io.Writer, args []string) error {
		return runCalibrate(ctx, stdout, stderr, args, openSystemNVML)
	}})
}

// nvmlLibraryEnv names another NVML library to load instead of libnvidia-ml.so.1 (a driver in a
// non-standard place).
const nvmlLibraryEnv = "GPUSIM_NVML_LIBRARY"

// openSystemNVML opens the machine's NVML.
func openSystemNVML() (calibrate.Reader, error) {
	return calibrate.OpenSystem(os.Getenv(nvmlLibraryEnv))
}

const calibrateUsage = `Usage:
  gpusim calibrate inventory [-o yaml|json|text] [--profile-out FILE] [--gpu N]
  gpusim calibrate record [--interval 100ms] [-o trace.json] -- CMD ARGS...
  gpusim calibrate fit TRACE[:key=value,...]... --scenario S.yaml [--hold-out TRACE[:...]]... [--profile-out FILE]
  gpusim calibrate fit PROFILE[:key=value,...]... --scenario S.yaml [--hold-out PROFILE|TRACE[:...]]... [--profile-out FILE]

inventory  lists every visible GPU through NVML (memory, SMs, clocks, PCIe, NVLink, processes)
           and writes a GPU profile that --set hardware.gpu=@FILE accepts.
record     runs CMD, samples NVML every interval and timestamps every output line; Ctrl-C is
           forwarded to CMD and the trace keeps what was recorded. Exits with CMD's status.
fit        reads step times (step_time= lines, Keras "120ms/step" or --regex), the CUDA context,
           the allocator mode, the memory plateau and the SM clock under load (the median of
           the busy samples, which replaces the spec sheet's clock rule) from each trace, and fits the profile's
           parameters that the traces identify (an efficiency per op kind and math path, the
           host's launch, step and dispatch costs, the context), each pulled toward the
           profile by a prior of stated width, so the simulation of the scenario matches: one
           direction per observed quantity at most, parameters it cannot tell apart tied, and
           only those that predict a trace left out better (leave-one-out) freed; it
           prints the parameters it could not identify, the residuals of the fitted traces and,
           apart, of the --hold-out ones, and writes the calibrated profile. A TRACE of the
           form step_time=VALUE (33.7ms) is a step time measured without a trace.
           A PROFILE is the TF/JAX profiler's trace of marked train steps: an XSpace
           (HOST.xplane.pb[.gz], what jax.profiler.trace and tf.profiler.experimental write)
           or its Chrome trace (HOST.trace.json[.gz]). Its kernels are mapped to op kinds
           (cuDNN convolutions, GEMMs, memory-bound XLA fusions and copies) and their device
           time per step (between the step_num markers) fitted by group beside the marked
           step, so one profile observes the efficiencies and the host's costs apart; fit
           prints per profile a table of measured against simulated time by group.

Examples:
  gpusim calibrate inventory --profile-out h200.yaml
  gpusim calibrate record --interval 50ms -o r50.json -- python3 tools/calibrate/train_torch.py resnet50 64 30
  gpusim calibrate fit calibrate/testdata/torch-resnet50-b64.json.gz calibrate/testdata/torch-resnet50-b128.json.gz:batch=128 --scenario calibrate/testdata/torch-h200.yaml --no-memory --profile-out h200-calibrated.yaml
  gpusim run calibrate/testdata/torch-h200.yaml --set model=mobilenetv2 --set hardware.gpu=@h200-calibrated.yaml
  gpusim calibrate fit testdata/h200/profiles/resnet50_float32_b128.xplane.pb.gz:batch=128,input_on_device=true testdata/h200/profiles/vgg16_float32_b128.trace.json.gz:model=vgg16,batch=128,input_on_device=true --hold-out step_time=21.544ms:model=mobilenetv2,batch=128,input_on_device=true --scenario calibrate/testdata/keras-h200.yaml --no-memory
  gpusim calibrate fit step_time=24.084ms:batch=64,input_on_device=true step_time=70.782ms:batch=256,input_on_device=true step_time=65.934ms:model=vgg16,batch=128,input_on_device=true --hold-out step_time=39.882ms:batch=128,input_on_device=true --scenario calibrate/testdata/keras-h200.yaml --no-memory
`

func runCalibrate(ctx context.Context, stdout, stderr io.Writer, args []string, open func() (calibrate.Reader, error)) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, calibrateUsage)
		if len(args) == 0 {
			return usagef("calibrate: no subcommand (inventory, record, fit)")
		}
		return nil
	}
	switch args[0] {
	case "inventory":
		return runInventory(stdout, args[1:], open)
	case "record":
		return runRecord(ctx, stdout, stderr, args[1:], open)
	case "fit":
		return runFit(ctx, stdout, args[1:])
	}
	return usagef("calibrate: unknown subcommand %q (inventory, record, fit)", args[0])
}

func newCalibrateFlags(name string, stdout io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("calibrate "+name, pflag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprint(stdout, calibrateUsage+"\nFlags:\n")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses, mapping --help to success and a bad flag to a usage error.
func parseFlags(fs *pflag.FlagSet, args []string) (help bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return true, nil
		}
		return false, asUsage(err)
	}
	return false, nil
}

func runInventory(stdout io.Writer, args []string, open func() (calibrate.Reader, error)) error {
	fs := newCalibrateFlags("inventory", stdout)
	format := fs.StringP("output", "o", "yaml", "output format: yaml, json or text")
	profileOut := fs.String("profile-out", "", "write the GPU profile of --gpu to `FILE` (for --set hardware.gpu=@FILE)")
	gpu := fs.Int("gpu", 0, "which GPU --profile-out describes (NVML index)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("calibrate inventory: unexpected arguments %s", strings.Join(fs.Args(), " "))
	}
	if err := checkFormat(*format, "yaml", "json", "text"); err != nil {
		return err
	}
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	inv, err := r.Inventory()
	if err != nil {
		return err
	}
	if err := writeAs(stdout, *format, inv, inv.WriteText); err != nil {
		return err
	}
	if *profileOut != "" {
		if *gpu < 0 || *gpu >= len(inv.GPUs) {
			return usagef("calibrate inventory: --gpu %d: %d GPU(s) visible", *gpu, len(inv.GPUs))
		}
		p, err := calibrate.ProfileFromInventory(inv, *gpu)
		if err != nil {
			return err
		}
		if err := calibrate.WriteFileAtomic(*profileOut, p.WriteProfile); err != nil {
			return err
		}
	}
	return nil
}

func runRecord(ctx context.Context, stdout, stderr io.Writer, args []string, open func() (calibrate.Reader, error)) error {
	fs := newCalibrateFlags("record", stdout)
	interval := fs.Duration("interval", 100*time.Millisecond, "NVML sampling interval")
	out := fs.StringP("output", "o", "trace.json", "trace `FILE` (written atomically, checkpointed while the job runs)")
	checkpoint := fs.Duration("checkpoint", 10*time.Second, "how often the trace file is rewritten while the job runs (0: only at the end)")
	grace := fs.Duration("grace", 10*time.Second, "after Ctrl-C, how long the job has to exit before it is killed")
	quiet := fs.BoolP("quiet", "q", false, "do not echo the job's output")
	fs.SetInterspersed(false)
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	cmdArgs := fs.Args()
	if len(cmdArgs) == 0 {
		return usagef("calibrate record: no command (usage: gpusim calibrate record [flags] -- CMD ARGS...)")
	}
	if *interval < time.Millisecond {
		return usagef("calibrate record: --interval %v: at least 1ms", *interval)
	}
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	// SIGTERM (a batch system stopping us) is handled like Ctrl-C: forward, then flush.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := calibrate.RecordConfig{Command: cmdArgs, Interval: *interval, Output: *out, Checkpoint: *checkpoint, Grace: *grace}
	if *checkpoint <= 0 {
		cfg.Checkpoint = -1
	}
	if !*quiet {
		cfg.Stdout, cfg.Stderr = stdout, stderr
	}
	t, err := calibrate.Record(ctx, r, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "gpusim: recorded %d samples and %d lines in %s to %s (exit status %d)\n",
		len(t.Samples), len(t.Lines), formatSeconds(time.Duration(t.EndNS).Seconds()), *out, t.ExitCode)
	if t.ExitCode != 0 {
		code := t.ExitCode
		if code < 0 {
			code = 1
		}
		return exitCodeError{code}
	}
	return nil
}

func checkFormat(f string, allowed ...string) error {
	for _, a := range allowed {
		if f == a {
			return nil
		}
	}
	return usagef("-o %q: want %s", f, strings.Join(allowed, ", "))
}

// writeAs writes v as YAML or JSON, or through text for "text".
func writeAs(w io.Writer, format string, v any, text func(io.Writer) error) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		if err := enc.Encode(v); err != nil {
			return err
		}
		return enc.Close()
	}
	return text(w)
}

func runFit(ctx context.Context, stdout io.Writer, args []string) error {
	fs := newCalibrateFlags("fit", stdout)
	scenario := fs.String("scenario", "", "scenario `FILE` (or built-in name) describing the recorded jobs")
	profileOut := fs.String("profile-out", "", "write the calibrated GPU profile to `FILE`")
	reStr := fs.String("regex", "", "regular expression with one group capturing a step time (optional second group: unit s|ms|us|ns)")
	warmup := fs.Int("warmup", -1, "leading step times to ignore (-1: automatic)")
	noMemory := fs.Bool("no-memory", false, "do not fit the memory plateau (when the recorded framework's allocator is not the scenario's: a PyTorch job against a TF scenario); the context is still fitted")
	format := fs.StringP("output", "o", "text", "output format: text or json")
	maxRuns := fs.Int("max-runs", 5000, "most simulator runs the search may make, its refits for the observation error included (the identifiability probes come on top: four per parameter)")
	widthScale := fs.Float64("prior-width-scale", 1, "multiplies every efficiency's prior width (the scatter of the H200's micro-benchmarks about its profile); give 3 or more for a GPU whose profile carries the H200's efficiencies or for another framework's kernels (PyTorch)")
	obsError := fs.Float64("obs-error", 0, "how far (relative, log) a recording may scatter about the simulator at the right parameters; 0: estimated from the fit's residuals, at least 1.3% (the repeat scatter of the H200 Keras recordings)")
	holdOut := fs.StringArray("hold-out", nil, "a `TRACE[:key=value,...]` predicted before and after but not fitted, reported apart (repeat the flag)")
	noProfileStep := fs.Bool("no-profile-step", false, "fit a profile's kernel times only, not its marked step (when the step is given apart, a step_time= measured without the profiler)")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("calibrate fit: no trace given")
	}
	if *maxRuns < 10 {
		return usagef("calibrate fit: --max-runs %d: at least 10", *maxRuns)
	}
	if !(*widthScale > 0) {
		return usagef("calibrate fit: --prior-width-scale %g: must be positive", *widthScale)
	}
	if *obsError < 0 || *obsError >= 1 {
		return usagef("calibrate fit: --obs-error %g: want 0 (the rule) or a fraction in (0, 1)", *obsError)
	}
	if err := checkFormat(*format, "text", "json"); err != nil {
		return err
	}
	var re *regexp.Regexp
	if *reStr != "" {
		var err error
		if re, err = regexp.Compile(*reStr); err != nil {
			return usagef("calibrate fit: --regex: %v", err)
		}
	}
	var inputs []fitInput
	for _, a := range fs.Args() {
		in, err := readFitInput(ctx, a, re, *warmup)
		if err != nil {
			return err
		}
		inputs = append(inputs, in)
	}
	for _, a := range *holdOut {
		in, err := readFitInput(ctx, a, re, *warmup)
		if err != nil {
			return err
		}
		in.holdOut = true
		inputs = append(inputs, in)
	}
	if *scenario == "" {
		return usagef("calibrate fit: --scenario is required (the scenario the traces were recorded from)")
	}
	sim, err := newFitSimulator(ctx, *scenario)
	if err != nil {
		return err
	}
	return fitAndReport(stdout, *format, inputs, sim, fitOptions{useMemory: !*noMemory, widthScale: *widthScale, obsError: *obsError, maxRuns: *maxRuns, profileOut: *profileOut, profileStep: !*noProfileStep})
}

// fitInput is one trace with what was read from it.
type fitInput struct {
	name      string
	overrides []string // key=value scenario overrides for this trace
	trace     *calibrate.Trace
	steps     calibrate.StepSeries
	memory    calibrate.MemoryAnalysis
	memErr    error
	holdOut   bool // --hold-out: predicted, not fitted
	// profile is the step summary of a profiler trace (nil for an NVML trace or a
	// step_time= value).
	profile *xprof.StepSummary
}

// isProfile reports whether path names a profiler trace by its name: the XSpace's
// HOST.xplane.pb or the Chrome trace HOST.trace.json, either gzipped.
func isProfile(path string) bool {
	p := strings.TrimSuffix(path, ".gz")
	return strings.HasSuffix(p, ".xplane.pb") || strings.HasSuffix(p, ".trace.json")
}

// readFitInput reads "TRACE[:key=value,...]"; TRACE may be step_time=VALUE (s, ms, us, ns), a
// step time measured without a trace.
func readFitInput(ctx context.Context, arg string, re *regexp.Regexp, warmup int) (fitInput, error) {
	var err error
	path, ov, _ := strings.Cut(arg, ":")
	// The observation is named by the whole argument: two step_time= observations differ only
	// in their overrides.
	in := fitInput{name: arg}
	if ov != "" {
		for _, kv := range strings.Split(ov, ",") {
			if !strings.Contains(kv, "=") {
				return in, usagef("calibrate fit: %s: override %q: want key=value", arg, kv)
			}
			in.overrides = append(in.overrides, kv)
		}
	}
	if v, ok := strings.CutPrefix(path, "step_time="); ok {
		// A step time measured without a trace (a Keras or JAX recording's table): an
		// observation of the step alone, no memory.
		if err := checkStepTime(v); err != nil {
			return in, usagef("calibrate fit: %s: %v", arg, err)
		}
		if in.steps, err = calibrate.StepTimes([]calibrate.Line{{Text: path}}, nil, 0); err != nil {
			return in, asUsage(fmt.Errorf("%s: %w", arg, err))
		}
		in.memErr = fmt.Errorf("no trace: step time only")
		return in, nil
	}
	if isProfile(path) {
		p, err := xprof.Load(path)
		if err != nil {
			return in, asUsage(err)
		}
		s, err := p.Summary()
		if err != nil {
			return in, asUsage(fmt.Errorf("%s: %w", path, err))
		}
		in.profile = &s
		in.memErr = errors.New("a profile: kernel times, no memory samples")
		return in, nil
	}
	t, err := calibrate.LoadTraceContext(ctx, path)
	if err != nil {
		return in, asUsage(err)
	}
	in.trace = t
	if in.steps, err = calibrate.StepTimes(t.Lines, re, warmup); err != nil {
		return in, asUsage(fmt.Errorf("%s: %w", path, err))
	}
	in.memory, in.memErr = calibrate.AnalyzeMemory(t)
	return in, nil
}

// stepTimeValue is the whole value of a step_time=VALUE argument: a number and a unit, as
// calibrate's step_time= lines write it.
var stepTimeValue = regexp.MustCompile(`^([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)(s|ms|us|µs|ns)?$`)

// maxStepTime bounds a measured step time: gpusim's bound of an hour per step, far above any
// step a training loop prints.
const maxStepTime = 3600.0

// checkStepTime checks v, the VALUE of step_time=VALUE: a positive, finite duration, so that
// a value the step_time= pattern does not match whole ("abc", "-3ms", "1e400ms") is named as
// the bad value rather than read as "no step times in the output", and "0ms" is refused, not
// taken as a step that takes no time.
func checkStepTime(v string) error {
	m := stepTimeValue.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return fmt.Errorf("want a step time such as 33.7ms (a number and s, ms, us or ns)")
	}
	x, err := strconv.ParseFloat(m[1], 64)
	scale := map[string]float64{"": 1, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}[m[2]]
	if err != nil || !(x*scale > 0 && x*scale <= maxStepTime) {
		return fmt.Errorf("step time %s: want more than 0 and at most %gs (gpusim's bound: an hour per step)", v, maxStepTime)
	}
	return nil
}

// fitSimulator is the simulator a fit runs: the scenario's GPU profile, and a predictor for the
// scenario with a trace's overrides applied.
type fitSimulator interface {
	// Base is the GPU profile the scenario names, before calibration.
	Base() hw.GPU
	// SetClock gives Base (and every prediction) a measured sustained SM clock in Hz.
	SetClock(hz float64)
	// Predictor returns the simulator of the scenario with the overrides (key=value) applied.
	Predictor(overrides []string) (calibrate.Predictor, error)
}

// fitAndReport fits sim to the inputs, prints what was read and the residuals, and writes the
// calibrated profile.
// fitOptions are the fit flags.
type fitOptions struct {
	useMemory  bool
	widthScale float64 // multiplies the efficiencies' prior widths
	obsError   float64 // 0: estimated from the residuals
	maxRuns    int
	profileOut string
	// profileStep fits a profile's marked step besides its kernel times.
	profileStep bool
}

// traceSummary is what a fit reports of one of its inputs: an NVML trace's step times and
// memory analysis, or a profile's step summary.
type traceSummary struct {
	Trace     string                   `json:"trace"`
	HoldOut   bool                     `json:"hold_out,omitempty"`
	Overrides []string                 `json:"overrides,omitempty"`
	Steps     calibrate.StepSeries     `json:"steps"`
	Memory    calibrate.MemoryAnalysis `json:"memory"`
	MemoryErr string                   `json:"memory_error,omitempty"`
	Profile   *xprof.StepSummary       `json:"profile,omitempty"`
}

// fitClock is the sustained SM clock a fit's NVML traces measured, with what the spec-sheet
// rule would have used instead.
type fitClock struct {
	calibrate.ClockReading
	RuleMHz float64 `json:"rule_mhz"`
}

// measureClock reads the sustained SM clock from the fitted NVML traces (not the held-out
// ones: a held-out trace is predicted from what the others measured), on the device their
// memory analysis followed; nil when no fitted input is an NVML trace with busy samples.
func measureClock(inputs []fitInput) *calibrate.ClockReading {
	var traces []*calibrate.Trace
	dev := -1
	for _, in := range inputs {
		if in.trace == nil || in.holdOut {
			continue
		}
		traces = append(traces, in.trace)
		if dev < 0 && in.memErr == nil {
			dev = in.memory.Device
		}
	}
	if len(traces) == 0 {
		return nil
	}
	if dev < 0 {
		dev = 0
	}
	r, err := calibrate.SustainedClock(traces, dev)
	if err != nil {
		return nil
	}
	return &r
}

// writeTraceSummaries prints the NVML traces' lines of a fit's text report (profiles have
// their own tables).
func writeTraceSummaries(w io.Writer, summaries []traceSummary) {
	for _, s := range summaries {
		if s.Profile != nil {
			continue
		}
		if s.HoldOut {
			fmt.Fprint(w, "held out: ")
		}
		fmt.Fprintf(w, "%s: %d step times (%s, %d warm-up), median %s\n", s.Trace, len(s.Steps.Times), s.Steps.Source, s.Steps.Warmup, formatSeconds(s.Steps.Median))
		if s.MemoryErr != "" {
			fmt.Fprintf(w, "  memory: %s\n", s.MemoryErr)
		} else {
			fmt.Fprintf(w, "  memory: GPU %d, %s: %s; context %.0f MiB, plateau %.0f MiB\n", s.Memory.Device, s.Memory.Mode, s.Memory.Reason,
				float64(s.Memory.ContextBytes)/(1<<20), float64(s.Memory.PlateauBytes)/(1<<20))
		}
	}
}

func fitAndReport(stdout io.Writer, format string, inputs []fitInput, sim fitSimulator, opt fitOptions) error {
	// The traces' own clock replaces the rule's estimate in every prediction and in the
	// profile written (hw.GPU.SustainedClockHz).
	var clock *fitClock
	if r := measureClock(inputs); r != nil {
		clock = &fitClock{ClockReading: *r, RuleMHz: sim.Base().SustainedClock() / 1e6}
		sim.SetClock(r.Hz())
	}
	var obs []calibrate.Observation
	var summaries []traceSummary
	var profiles []profileInput
	for _, in := range inputs {
		// The recording's allocator mode first (JAX's 75% pool, growth), the trace's own
		// overrides after it so that they win.
		var mode []string
		if in.memErr == nil {
			mode, _ = calibrate.AllocatorOverrides(in.memory)
		}
		in.overrides = append(mode, in.overrides...)
		pred, err := sim.Predictor(in.overrides)
		if err != nil {
			return asUsage(fmt.Errorf("%s: %w", in.name, err))
		}
		if in.profile != nil {
			pred = calibrate.MemoPredictor(pred)
			obs = append(obs, calibrate.ProfileObservations(in.name, *in.profile, sim.Base(), opt.profileStep, in.holdOut, pred)...)
			profiles = append(profiles, profileInput{in: in, pred: pred})
			summaries = append(summaries, traceSummary{Trace: in.name, HoldOut: in.holdOut, Overrides: in.overrides, Profile: in.profile})
			continue
		}
		o := calibrate.Observation{Name: in.name, StepTime: in.steps.Median, HoldOut: in.holdOut, Predict: pred}
		if in.memErr == nil {
			o.ContextBytes = float64(in.memory.ContextBytes)
			if opt.useMemory && in.memory.Mode != calibrate.ModeUnknown {
				o.MemoryBytes = float64(in.memory.PlateauBytes)
			}
		}
		obs = append(obs, o)
		s := traceSummary{Trace: in.name, HoldOut: in.holdOut, Overrides: in.overrides, Steps: in.steps, Memory: in.memory}
		if in.memErr != nil {
			s.MemoryErr = in.memErr.Error()
		}
		summaries = append(summaries, s)
	}
	base := sim.Base()
	params := calibrate.PriorParams(base, opt.widthScale)
	if clock != nil {
		params = calibrate.MeasuredClock(params, clock.ClockReading)
	}
	res, err := calibrate.Fit(obs, calibrate.FitConfig{Params: params, ObsError: opt.obsError, MaxEvaluations: opt.maxRuns})
	if err != nil {
		return err
	}
	if opt.profileOut != "" {
		if err := writeCalibratedProfile(opt.profileOut, base, res, inputs); err != nil {
			return err
		}
	}
	tables, err := profileTables(profiles, base, res, opt.profileStep)
	if err != nil {
		return err
	}
	if format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Traces   []traceSummary           `json:"traces"`
			Profiles []calibrate.ProfileTable `json:"profiles,omitempty"`
			Clock    *fitClock                `json:"sm_clock,omitempty"`
			Fit      *calibrate.FitResult     `json:"fit"`
		}{summaries, tables, clock, res})
	}
	writeTraceSummaries(stdout, summaries)
	if clock != nil {
		fmt.Fprintf(stdout, "SM clock: %.0f MHz, the median of %d busy samples of GPU %d (80%% within %.0f-%.0f MHz, %.0f W), in place of the spec sheet's rule (%.0f MHz)\n",
			clock.MedianMHz, clock.Busy, clock.Device, clock.P10MHz, clock.P90MHz, clock.MedianPowerW, clock.RuleMHz)
	}
	for _, t := range tables {
		if err := t.WriteText(stdout); err != nil {
			return err
		}
	}
	fmt.Fprintln(stdout)
	if err := res.WriteText(stdout); err != nil {
		return err
	}
	if n := strings.TrimSuffix(base.Name, "-calibrated"); n != measuredGPU && opt.widthScale == 1 {
		fmt.Fprintf(stdout, "note: the efficiencies' prior widths are the scatter of the %s's micro-benchmarks, whose efficiencies %s carries; --prior-width-scale 3 or more lets the traces move them further\n", measuredGPU, n)
	}
	return nil
}

// writeCalibratedProfile writes the fitted GPU profile, named for the GPU it calibrates and
// the number of traces fitted (held-out traces do not count), atomically to path.
func writeCalibratedProfile(path string, base hw.GPU, res *calibrate.FitResult, inputs []fitInput) error {
	nFit := 0
	for _, in := range inputs {
		if !in.holdOut {
			nFit++
		}
	}
	g := calibrate.ApplyParams(base, res.Params)
	g.Name = strings.TrimSuffix(base.Name, "-calibrated") + "-calibrated"
	g.Description = fmt.Sprintf("%s, calibrated by gpusim calibrate fit on %d trace(s)", base.Description, nFit)
	g.PredictionError = res.PredictionError
	return calibrate.WriteFileAtomic(path, g.WriteProfile)
}

// profileInput is a profile observed by a fit, with its simulator.
type profileInput struct {
	in   fitInput
	pred calibrate.Predictor
}

// profileTables simulates each profile at the prior and at the fitted parameters and lays the
// two beside what it measured, group by group.
func profileTables(profiles []profileInput, base hw.GPU, res *calibrate.FitResult, fittedStep bool) ([]calibrate.ProfileTable, error) {
	prior := calibrate.Params{}
	for _, p := range res.Table {
		prior[p.Name] = p.Prior
	}
	var out []calibrate.ProfileTable
	for _, p := range profiles {
		before, err := p.pred(prior)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.in.name, err)
		}
		after, err := p.pred(res.Params)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.in.name, err)
		}
		out = append(out, calibrate.NewProfileTable(p.in.name, *p.in.profile, base, fittedStep, p.in.holdOut, before, after))
	}
	return out, nil
}

// measuredGPU is the profile whose efficiencies were measured on its own GPU
// (hw.DefaultEfficiency, testdata/h200): every other built-in carries them, and the prior widths
// of calibrate.PriorParams are that GPU's scatter.
const measuredGPU = "h200"

// newFitSimulator loads the scenario the traces were recorded from; train.Run simulates it.
func newFitSimulator(ctx context.Context, scenario string) (fitSimulator, error) {
	sc, err := scenarios.Resolve(scenario)
	if err != nil {
		return nil, asUsage(err)
	}
	base, err := hw.LookupGPU(sc.Config.GPU)
	if err != nil {
		return nil, asUsage(fmt.Errorf("%s: hardware.gpu: %w", scenario, err))
	}
	return &trainSimulator{ctx: ctx, scenario: scenario, base: base}, nil
}

// trainSimulator runs train on the scenario with the fitted profile.
type trainSimulator struct {
	ctx      context.Context
	scenario string
	base     hw.GPU
}

func (s *trainSimulator) Base() hw.GPU { return s.base }

func (s *trainSimulator) SetClock(hz float64) { s.base.SustainedClockHz = hz }

// Predictor returns the simulator of the scenario with overrides applied. Each candidate
// profile is handed to train in memory (train.Config.GPUProfile); it is the same profile a
// user's --set hardware.gpu=@FILE loads once fit writes it.
func (s *trainSimulator) Predictor(overrides []string) (calibrate.Predictor, error) {
	sc, err := scenarios.Resolve(s.scenario)
	if err != nil {
		return nil, err
	}
	if err := sc.SetAll(overrides); err != nil {
		return nil, err
	}
	cfg := sc.Config
	return func(p calibrate.Params) (calibrate.Prediction, error) {
		g := calibrate.ApplyParams(s.base, p)
		c := cfg
		c.GPUProfile = &g
		res, err := train.Run(s.ctx, c)
		if err != nil {
			return calibrate.Prediction{}, err
		}
		if res.OOM != nil {
			return calibrate.Prediction{}, fmt.Errorf("the scenario runs out of memory in the simulator: %s", res.OOM.Message)
		}
		if len(res.Devices) == 0 || res.StepTime <= 0 {
			return calibrate.Prediction{}, errors.New("the simulation completed no step")
		}
		// What NVML charges to the job: its context plus the allocator's pool at its peak.
		// A fit over arrays with epoch ends reports its epochs' mean step (FitStepTime).
		kinds := map[string]float64{}
		for _, sh := range res.ByKind {
			kinds[sh.Category] += sh.Seconds
		}
		return calibrate.Prediction{StepTime: train.FitStepTime(c, res), MemoryBytes: float64(g.ContextBytes + res.Devices[0].PeakPoolBytes),
			Groups: calibrate.GroupTimes(kinds), Kinds: kinds}, nil
	}, nil
}

// formatSeconds prints a duration the way gpusim run does (583.9ms, 1.204s): units.FormatSeconds,
// named here because fitAndReport's parameter sim shadows the package.
func formatSeconds(v float64) string { return units.FormatSeconds(v) }
