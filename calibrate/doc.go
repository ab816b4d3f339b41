// Package calibrate reads a real NVIDIA GPU through NVML, records what a real training job does
// on it, and fits gpusim's GPU profile so that the simulator's step time and memory match the
// recording.
//
// # Reading the GPU
//
// NVML sits behind the small [Reader] interface. [OpenNVML] implements it with
// github.com/NVIDIA/go-nvml, which dlopens libnvidia-ml.so.1 at Init: the package builds and
// runs on machines without a GPU, and OpenNVML returns an error wrapping [ErrNoDriver] there.
// Tests pass go-nvml's pkg/nvml/mock types to OpenNVML instead of the real library.
// [OpenSystem] opens the machine's library; go-nvml needs cgo, and a build without cgo
// (CGO_ENABLED=0) still compiles, with an OpenSystem that reports ErrNoDriver.
//
//	r, err := calibrate.OpenSystem("") // calibrate.OpenNVML(nvml.New()) with the default library
//	if errors.Is(err, calibrate.ErrNoDriver) { ... }
//	defer r.Close()
//	inv, err := r.Inventory() // every visible GPU: memory (v2 struct), SMs, clocks, PCIe, NVLink, processes
//
// [ProfileFromInventory] turns one GPU of an inventory into an hw.GPU profile: the built-in
// profile of the same name with what NVML measures (memory, compute capability, SM count, PCIe
// and NVLink links) put in, or, for a GPU gpusim does not know, peaks derived from the SM count
// and clocks. [ApplyParams] puts fitted [Params] into a profile; hw.GPU.WriteProfile writes it in
// the format `--set hardware.gpu=@FILE` reads.
//
// # Recording a job
//
// [Record] runs a command, samples the Reader every interval (device memory used/free/reserved,
// memory per process, utilization, SM clock, power, PCIe throughput), timestamps every line the
// command writes to stdout and stderr (a carriage return ends a line, as Keras progress bars
// use it), and returns a [Trace]. The trace is checkpointed while the job runs and written
// atomically (temp file and rename) at the end; a cancelled context (Ctrl-C) is forwarded to the
// command's process group as SIGINT, and what was sampled is kept.
//
// # Reading a recording
//
// [StepTimes] extracts per-step times from the output lines: `step_time=0.120` (seconds, or
// with a unit: `step_time=120ms`), Keras progress lines (`... 120ms/step`), or a caller's
// regular expression. [AnalyzeMemory] reads the memory curve: the CUDA context (the first level
// the job holds), the plateau, and the allocator mode (one jump close to the framework's
// default pool = preallocate; several rising steps = growth; one jump to a lower flat cap = limit).
//
// # Fitting
//
// [Fit] adjusts [Params], named values of the profile: one efficiency per math path and memory
// kind as hw prices them (conv_tf32, memory, memory_by_kind.xla_batchnorm, ...), the launch and
// step overheads, Keras on JAX's host dispatch scale and the context size ([PriorParams] lists
// them for a profile), with gonum/optimize (Nelder-Mead) so that a [Predictor] (the simulator,
// as a function from parameters to step time and memory) matches the [Observation]s taken from
// one or more traces. It is a maximum a posteriori estimate: each parameter has a prior in log
// space around the profile's value, of a width with a stated source (the scatter of the H200's
// micro-benchmarks of its kind), against an observation error estimated from the fit's residuals (at least [ObsErrorFloor]). A parameter
// the fitted observations do not identify (a half-precision efficiency from float32 steps) is
// not fitted and is reported so. Of the others, the fit frees one direction at a time, the
// most informative first, no more than the observed quantities, ties parameters it cannot tell
// apart (parallel columns of the Jacobian) and keeps a direction only if leave-one-out
// cross-validation over the fitted observations says it predicts better (fitselect.go); a
// parameter that fails stays at its prior, with the reason in [ParamResult] Note. Observations marked HoldOut are predicted and reported apart
// ([FitResult] HoldOut), as a test of the fit on jobs it did not see.
// cmd/gpusim's predictor runs train with the candidate profile in memory
// (train.Config.GPUProfile = &candidate):
//
//	obs := []calibrate.Observation{{Name: "r50", StepTime: steps.Median, Predict: func(p calibrate.Params) (calibrate.Prediction, error) {
//		g := calibrate.ApplyParams(base, p)
//		cfg.GPUProfile = &g
//		res, err := train.Run(ctx, cfg)
//		...
//		return calibrate.Prediction{StepTime: res.StepTime}, nil
//	}}}
//	fit, err := calibrate.Fit(obs, calibrate.FitConfig{Params: calibrate.PriorParams(base, 1)})
package calibrate
