// Package train simulates a TensorFlow 2.x training run on GPUs, step by step, on one
// sim.Engine.
//
// Run(cfg) builds the machine and the program from a Config: the GPUs (hw profiles) as
// allocator.Devices; the other processes of the scenario, started first, each with its
// allocators and the memory it uses; the training process with its memory options
// (allocator.StartProcess applies TF's rules: preallocation, growth, logical devices, fraction,
// TF_* variables) on the GPUs CUDA_VISIBLE_DEVICES leaves visible; one replica per logical GPU
// under MirroredStrategy (one under the default strategy), the global batch split as
// tf.distribute splits it and each replica's share split into accumulation micro-batches.
//
// Every micro-step executes the model's step plan (models.Plan) as events: the host issues
// each op (launch overhead from hw), the GPU runs it when it is free and issued (time from the
// hw cost model), its tensors are allocated through the replica's allocator when it starts and
// freed when it ends, so pool growth, fragmentation and OOM happen as in TF. Variables are
// created before step 1, optimizer slots at the first update (Keras builds them lazily),
// gradient accumulators before step 1 when accumulating. After the last backward pass every
// replica waits at a barrier, the gradients are all-reduced (collective: TF's packing
// buffers and NCCL's time), then the optimizer ops run, except on updates the loss-scale
// optimizer skips (mixed_float16, train/lossscale). A failed allocation ends the run as
// TF's ResourceExhaustedError does: Result.OOM holds the step, op, tensor, TF's message and the
// allocator's log. A cuDNN workspace that does not fit is not an error in TF (the autotuner
// falls back); it is counted in Result.WorkspaceFallbacks.
//
// Devices follow TF's setup (train/visibility, devices.go): CUDA_VISIBLE_DEVICES, then
// tf.config.set_visible_devices (Config.VisibleDevices), the logical-device split, and for the
// default strategy a tf.device scope (Config.Device, soft-placed as TF does); Result.DeviceTable
// maps nvidia-smi's numbering to TF's. With several replicas (strategy.go) Result.AllReduce
// gives the cross-device ops TF selected (or Config.CrossDeviceOps), the time and the pack
// buffers; the copy-based reductions also take memory on GPU:0; with accumulation the
// micro-step gradients are freed after they are added and the accumulators are all-reduced out
// of place. Result.ScalingEfficiency is the breakdown's estimate; analysis.Scaling compares the
// run with a simulated one-GPU run and replaces it.
//
// The input pipeline (input.go, feed.go) is package pipeline on the run's engine, its host
// taken from the hw host profile (Config.Host, hardware.host.profile) where the scenario keeps
// pipeline's defaults, one copy per replica with MirroredStrategy. Result.Input holds its
// statistics, Result.Epochs the step times per dataset epoch (cache() shows there),
// Result.GPUSeries each GPU's utilization as nvidia-smi samples it (every kernel and NCCL
// collective through pipeline.UtilizationMeter, fast-forwarded steps included), and
// Result.InputWaitPerStep the wait for input. Package analysis diagnoses the run from these
// measurements and re-simulates remedies; Run never runs another simulation.
//
// The Result holds per-step times (median, throughput), GPU busy and input-stall fractions,
// all-reduce time, skipped updates, per-device peaks, limits, pool growth history and a
// downsampled memory timeline (O(TimelinePoints) per device whatever the run's length), and
// the median step split by category (input, forward, backward, launch, sync, allreduce,
// optimizer, and compile when it compiled), which sums to its time; Result.ByKind splits the
// same step by op kind (conv, matmul, norm, cast, fusion, ...) plus launch, input, sync,
// all-reduce and compile, and sums to its time too (bykind.go).
//
// Speed and precision (xla.go, precision_check.go): with XLA the first step compiles the train step
// (models.XLACompileSeconds: a fit to compile times measured with JAX on the H200, per op and per
// distinct GEMM shape), and so does every step that sees a new input shape
// (Config.XLADistinctShapes, scenario key xla_distinct_shapes: shapes are drawn per step from
// the run's seed), so a short run with XLA can be slower than without (Result.XLACompiles,
// XLACompileTime, a note). Under XLA batch norms are priced as XLA fusions, not cuDNN kernels.
// analysis.PrecisionSaving compares a mixed-precision run with the same run in float32.
//
// Steps are fast-forwarded only when provably identical to the one before: nothing random
// feeds them (no input pipeline, no loss-scale skip) and every allocator ended the step in the
// state it ended the previous one in. For TF's BFC (allocator.BFC) that holds when the step
// added no persistent tensor, took or returned no region and had no failed request: all step
// tensors are freed at its end and BFC coalesces free neighbours, so the state is the
// persistent chunks plus one free chunk per gap, unchanged. Other allocators qualify through
// an optional AppendState method (exact state bytes). TestBFCFastForwardMatchesFullSimulation
// compares fast-forwarded and step-by-step runs of many configurations byte for byte.
//
// The run in parts. A run is a runner (run.go: the configuration, the engine, the replicas
// and the step being run; newRunner sets the parts up in order) whose state lives in parts,
// each the owner of its fields and found by its file names:
//
//   - machine (machine.go, devices.go, memory_order.go): the GPU and host profiles, the
//     physical GPUs with the other processes on them, TF's device setup and an allocator
//     per logical GPU; built once, read after.
//   - runPlans (plans.go, stepplan.go, memo.go, dispatch.go): the model's step plans priced
//     for the GPU, each replica's share of the batch, the priced-plan cache.
//   - feed (feed.go, input.go, arrays.go): the tf.data pipelines or Keras fit's array feed,
//     one per process that reads input, and the batches waiting for their replicas.
//   - gradSync (sync.go, strategy.go, replicas.go): the interconnect, the all-reduce planned
//     once (TF's packs, Horovod's buckets), the barriers, the multi-replica costs (jitter,
//     shared host threads, overlap).
//   - schedule (schedule.go, xla.go): the loss-scale skips and XLA compiles drawn per step
//     before the run.
//   - replay (replay.go, fastforward.go, jitter.go): what may be replayed instead of
//     simulated; replay.go holds every replay invariant (fast-forward, the jittered window,
//     an input-fed step's GPU part, symmetric replicas) and its proof, in one place.
//   - records (steprecord.go, bykind.go): what the steps measured, run-length encoded.
//
// Each replica (run.go) is its identity and plans plus four parts: replicaExec (exec.go:
// where it is in its step, its host and GPU clocks, the step's time by category and kind),
// replicaMemory and memStats (memory.go, timeline.go: the tensors and buffers it holds, how
// allocations and frees are made and recorded, its timeline and peaks) and stepProof
// (replay.go: what proves its steps repeat). assemble.go writes the Result from the parts.
// No struct of the package has more than 20 fields but the records Result, Device and System
// (TestStructFieldCount).
//
// Example:
//
//	cfg := train.DefaultConfig()
//	cfg.Model, cfg.Batch, cfg.GPU = "resnet50", 256, "a100-40gb"
//	res, err := train.Run(ctx, cfg)
//	if err != nil { ... }          // a configuration TF would reject, or ctx done
//	if res.OOM != nil { ... }      // a simulated out-of-memory: a result
//	fmt.Println(res.StepTime, res.Devices[0].PeakBytesInUse)
package train
