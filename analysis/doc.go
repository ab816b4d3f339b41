// Package analysis is everything that runs several simulations or judges one. train.Run
// simulates one configuration and returns measurements; analysis adds:
//
//   - Baselines: a multi-replica run is compared with one replica training alone at its
//     per-replica batch (Scaling, OneGPUBaseline), a mixed-precision run with the same run
//     in float32 (PrecisionSaving, Float32Baseline).
//   - The diagnosis (Diagnose, DiagnoseResult): input-, communication-, compile- or
//     compute-bound, with the evidence.
//   - Remedies for an input-bound run (Candidates, Session.Remedies): changes to its
//     train.Config, re-simulated and ranked; their --set text is for display only.
//   - Capacity searches: the largest batch that fits (MaxBatch) and the fewest GPUs that
//     reach a throughput (GPUs).
//   - Sweeps: Sweep runs independent simulations on a worker pool, results in input order.
//   - Plan searches (Plan): the TF settings and GPUs that best meet a Goal, pruned by cheap
//     bounds (Bounds: memory, roofline, priced compute) before simulating (docs/plan.md).
//
// A Session remembers every configuration it simulated, so one baseline is simulated once
// for all the runs that need it (gpusim run mirrored-4xa100 costs three simulations: the run,
// one GPU, float32; every count of a weak-scaling GPUs search shares one one-GPU baseline).
// Run is a one-off Session.
//
// gpusim run, compare and capacity are its command lines; docs/capacity.md the user page of
// the searches.
//
// # Largest batch (MaxBatch)
//
// A batch "fits" when a run of MaxBatchOptions.Steps optimizer updates has no failed
// allocation (train.Result.OOM == nil): the same BFC allocator, memory mode (preallocate,
// growth, limit, fraction, cuda_malloc_async), other processes and replicas as the scenario,
// only the batch changes. The default is 3 steps: Keras creates the optimizer slots at the
// first applied update (optimizer.build in apply_gradients), so the first forward/backward pass
// with the slots resident is step 2's; a batch can fit step 1 and fail there (ResNet-50 with
// Adam on a T4: 171 fits one step, 168 OOMs in step 2, the answer is 167). Under
// mixed_float16 an update the loss scale skips creates no slots; a trial that fits with fewer
// than two applied updates is re-run with more steps (at most 4 times).
//
// The search tries the smallest multiple of Multiple at or above Min, doubles it until a batch
// OOMs or Max (rounded down) is reached, bisects between the last fit and the first OOM, and
// finally re-runs the Below batches just under the answer. BFC's fit is not monotone in the
// batch in general (a smaller batch can leave a pool layout, or with memory growth a region
// split, in which a later tensor has no contiguous room), so every checked batch that OOMs is
// listed in MaxBatchReport.NotMonotone rather than hidden; the bisection itself assumes
// monotony between the bracket's ends. Batches above the first OOM are not searched.
//
// Trials run Jobs at a time on independent engines. The doubling runs in waves of Jobs and
// drops the trials past the first OOM, the bisection is sequential and the check runs in
// parallel, so the report is the same for every Jobs.
//
// # Fewest GPUs (GPUs)
//
// GPUs sets hardware.count to n with MirroredStrategy and simulates n = 1, 2, 4, ... and
// MaxGPUs (in waves of Jobs, dropping the counts past the first that reaches the target),
// then bisects between the last count short of the target and the first that reaches it.
// Weak scaling (the default) keeps each GPU's batch (PerGPUBatch, or the scenario's batch per
// replica) and multiplies the global batch; strong scaling (GlobalBatch) keeps the global
// batch, which caps the count at the batch. Each GPUTrial carries the throughput, the step,
// Result.ScalingEfficiency (the throughput over n times one GPU running the same
// per-replica batch alone), the all-reduce time, the input stall, the diagnosis and the peak
// memory; an OOM count does not reach. When no count reaches the target, GPUsReport.Reason says
// why, from the trials: every count OOMs; the throughput peaks at a smaller count; the largest
// count is input-bound (tf.data cannot feed more, whatever the GPUs) or communication-bound
// (the all-reduce takes a large share of the step); or it is compute-bound and would need
// about target / (its throughput per GPU) GPUs. The throughput is train.Result.Throughput,
// the median step's: under mixed_float16 keep 20 or more steps, or a skipped update (no
// optimizer ops) can be the median of a short run.
//
// Counts above 8 are one host whose GPUs share one NVSwitch (or PCIe) domain, as train
// models a machine; there is no inter-node network.
//
// Example:
//
//	cfg := train.DefaultConfig()
//	cfg.GPU, cfg.Memory.Growth = "rtx3090", &yes
//	rep, err := analysis.MaxBatch(ctx, cfg, analysis.DefaultMaxBatchOptions())
//	if err != nil { ... }               // a configuration TF rejects (*train.FieldError inside)
//	fmt.Println(rep.Batch, rep.Fit.PeakBytes, rep.FirstOOM.OOM.Message, rep.NotMonotone)
//
//	g, err := analysis.GPUs(ctx, cfg, analysis.GPUsOptions{Throughput: 10000, MaxGPUs: 64, PerGPUBatch: 256})
//	fmt.Println(g.GPUs, g.Fit.Throughput, g.Reason)
package analysis
