// Package pipeline simulates a tf.data input pipeline feeding a GPU, on the sim event kernel.
//
// The pipeline is the one the TF guide recommends, each stage optional:
//
//	source -> map(f, num_parallel_calls) -> cache() -> shuffle(n) -> batch(b) -> prefetch(k) -> GPU
//
// and every stage behaves as its TF kernel does:
//
//   - source: Records of RecordBytes read one after another at StorageBandwidth (+ ReadLatency).
//   - map: each element costs MapCost seconds of one core, drawn from a seeded distribution
//     (Dist). With ParallelCalls = n, n calls are in flight and at most n results wait
//     (ParallelMapDataset's buffer); results come out in order. With 0 the map runs on the
//     thread that pulls. Calls run on the host's cores (Host.Cores - Host.BusyCores), first
//     come, first served.
//   - cache: "memory" or "file". The first epoch fills it; once complete, later epochs take
//     elements from it and skip the read and the map (or only the read, CacheBeforeMap). A
//     memory cache larger than the host's RAM sets Stats.HostOOM.
//   - shuffle: fills its buffer (host RAM) before the first element of every epoch.
//   - batch: Batch elements; the last batch of an epoch is partial unless DropRemainder.
//   - prefetch: a background thread keeps Prefetch batches ready; 0 means none, so the
//     consumer's own thread builds each batch when it asks.
//   - copy: each batch goes to the GPU over PCIe (pinned or pageable memory), when the
//     consumer takes it or, with PrefetchToDevice, as it enters the buffer.
//
// Epochs: with Repeat false (Keras fit), each epoch is a new iterator, started by the first
// Get after the previous epoch's last batch, so its buffers start empty; with Repeat the
// pipeline flows on across epochs.
//
// AUTOTUNE (Autotune in ParallelCalls or Prefetch) does what TF does: map parallelism starts
// at min(16, cores) and is re-optimised after 10 ms, 20 ms, 40 ms... (up to every 60 s) by
// TF's hill climb, bounded by the cores (the CPU budget) and half the host's RAM; the prefetch
// buffer starts at 1 and doubles when the consumer finds it empty after it had been full
// (PrefetchAutotuner).
//
// Use: create one Pipeline per run on the run's engine and call Get for every step; the
// callback runs when the batch is on the GPU:
//
//	p := pipeline.New(e, cfg, sim.Stream(seed, "input"))
//	p.Get(func(ready sim.Time) { /* run the step's kernels from ready */ })
//
// Stats reports batches, consumer wait, how often the buffer was found empty, worker and core
// busy fractions, each epoch's times, autotune decisions, host memory and the buffer level over
// time (downsampled to Options.LevelPoints).
//
// To compare with nvidia-smi, UtilizationSeries turns a GPU's kernel intervals into
// utilization.gpu samples (the busy share of each NVMLSamplePeriod window); UtilizationMeter
// computes the same samples as kernels come, in memory that grows with the run's length, not
// its kernel count (train feeds it every kernel and NCCL collective). In train a run's Result
// carries this package's Stats (Result.Input), the step times per epoch and the nvidia-smi
// samples; package analysis weighs them into a diagnosis of the whole run and re-simulates its
// remedies.
//
// Simulate runs a pipeline against a simple training loop (Consumer) without train; the
// package's tests use it to reproduce a PyTorch DataLoader measured on an H200
// (testdata/h200) and the built-in scenario input-bound. docs/input.md is the user's page.
package pipeline
