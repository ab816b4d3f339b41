// Package report renders what gpusim simulated: one run (gpusim run) as text, JSON or CSV, and
// several runs (gpusim compare) as a benchstat-style table, figures, a Chrome trace and a
// self-contained HTML page. It reads train's Result and nothing else of the simulator.
//
// # One run
//
// WriteResultText, WriteResultJSON and WriteResultCSV write a *train.Result:
//
//	report.WriteResultText(os.Stdout, res) // gpusim run
//	report.WriteResultJSON(os.Stdout, res) // gpusim run -o json
//
// The text report has a summary (result, steps, median step time, throughput, GPU utilization,
// input stall, all-reduce and scaling with several replicas, skipped steps), memory per GPU with
// sparklines of memory over the run and within one step, the pool's growth, the median step by
// category, the multi-GPU sections (result_multigpu.go: device mapping, all-reduce, scaling,
// warnings), the speed sections (result_speed.go) and the input pipeline's sections
// (result_input.go):
//
//   - Input pipeline (tf.data): the map's parallelism and how busy it kept the host's cores,
//     the prefetch buffer and how often the step found it empty, the cache, the pipeline's notes.
//   - Epochs: step times per dataset epoch, marking the epochs read from a complete cache.
//   - the GPU's utilization as nvidia-smi samples it (200 ms windows), as a sparkline.
//   - Diagnosis: input-, compute-, communication- or compile-bound with its evidence (the
//     utilization there is "nvidia-smi utilization", not the summary's) and, for an
//     input-bound run, the remedies gpusim run re-simulated (analysis.Session.Remedies), best first, and
//     the one that helps most as --set overrides.
//
// then nvidia-smi's memory at the end, other processes, notes, and an OOM with TF's message and
// the head of the allocator's log. The JSON object (ResultJSON) starts with docs/design.md's
// contract keys (scenario, oom, oom_message, step_time_s, throughput_samples_per_s,
// gpu_utilization, input_stall_fraction, allreduce_time_s, skipped_steps, devices) and adds,
// among others, input (pipeline statistics), epochs, gpu_utilization_samples and diagnosis
// ({bound, evidence, utilization_label ("nvidia-smi utilization"), utilization_mean/stddev/
// min/max, input_share, communication_share, compile_share,
// low_utilization, swinging, remedies, best_change, best_change_set}). Keys are only added.
// gpu_utilization is the fraction of the run's time the GPUs executed kernels, averaged over
// the replicas; a run that completed no step (steps_completed 0) did not train and carries 0
// there, in input_stall_fraction and in every busy_fraction, where the text shows "-"
// (result_utilization.go). WriteResultCSV writes one row per GPU: the run's metrics with steps
// and steps_completed, then the device with idle, physical_gpu and busy_fraction.
//
// # Comparisons
//
// A comparison works on report's own Run: a label, the varied parameters, metrics with units,
// memory series per GPU, the step breakdown, utilization and input-buffer series and an optional
// timeline. FromResult builds one from a *train.Result (compare_adapt.go, the only place that
// reads train's types for comparisons); tests and other tools can build Runs by hand.
//
//	runs := []report.Run{
//		report.FromResult("memory.mode=growth", []report.RunParam{{Key: "memory.mode", Value: "growth"}}, res),
//		// ...
//	}
//	t := report.Compare(runs)
//	t.WriteText(os.Stdout) // or WriteJSON, WriteCSV
//
// The table has one column per run and one row per metric (the union, in first-seen order),
// each value with its change against the first column ("~" when unchanged). A run that ran out
// of memory says OOM in the result row and every speed metric (TF raised; there is no
// throughput), keeps its memory rows, and its message follows the table. Values print in their
// unit (FormatValue, FormatBytes); JSON and CSV carry plain numbers in the unit named.
//
// # Figures
//
// Figures(runs) draws, with gonum/plot, for each run: memory over time per GPU (in use, pool,
// limit, a cross at an OOM; MemoryFigure) and, when the run has the series, GPU utilization as
// nvidia-smi samples it with the tf.data prefetch buffer (UtilizationFigure); across runs: the
// median step stacked by category (BreakdownFigure) and throughput and peak memory against each
// varied key (SweepFigure). WritePlots writes them as PNG (150 dpi) and SVG with titles, axis
// units and legends, in the Okabe–Ito palette with dash patterns so that grey-scale prints read.
// Figure.Series lists each figure's legend entries, which tests check. WriteResultPlots is the
// one-run form (gpusim run --plot).
//
// # Trace
//
// WriteTrace writes one Run's timeline as Chrome trace event JSON (Perfetto, chrome://tracing):
// one process per GPU and one for the host, a row per track (TrackStep, TrackCompute,
// TrackAllReduce, TrackInput, TrackAllocator) and counters for memory in use, pool and limit,
// utilization and the input buffer. From a train.Result (a SpanSource and a SeriesSource) come
// every op of the first traced steps, each step's all-reduce and wait for a batch, each growth
// of an allocator's pool, and an OOM as the allocator's 10 s retry wait ("OOM retry wait", BFC's
// kMaxMillisToWait) ending in the OOM instant with TF's message. TraceOptions bounds the file:
// DetailSteps steps in full (default 5, plus the last and any step with an allocator event),
// MaxEvents spans (default 200,000) and MaxCounterPoints points per counter (default 2,000,
// bucket maxima so that peaks survive). WriteResultTrace is the one-run form
// (gpusim run --trace).
//
// # HTML
//
// WriteHTML writes one self-contained page (no scripts, style sheets, fonts or images loaded
// from anywhere): the table with ▲/▼ deltas and OOM marked, the OOM messages, and every figure
// as inline SVG. TestBrowser (testdata/browser-check.sh) opens reports of constructed and of
// real runs in headless Chromium, checks the screenshots are not blank and that the browser
// parses the traces; it runs when Debian's chromium is installed.
//
// # Determinism
//
// The same runs give the same bytes: table, JSON, CSV, PNG, SVG, trace and HTML. Golden files
// under testdata/ are rewritten with go test ./report -update.
package report
