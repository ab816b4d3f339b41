// Package framework is the framework profile of a run: which framework differentiates the
// step (TensorFlow or JAX) and which TensorFlow, Keras, XLA, cuDNN and CUDA releases it runs.
// A run's settings are resolved into one Profile, once, where the run is set up (Resolve);
// every rule of the simulator that depends on the framework or a release reads that Profile,
// never a version string.
//
// Two tables are the data behind it:
//
//   - TFReleases: what each TensorFlow release was built with (cuDNN, CUDA) and whether its
//     float32 math may run as TF32: tensorflow.org's tested build configurations.
//   - Gates: the first TensorFlow (and JAX) release that brings each behaviour (Feature): XLA's
//     fusions and layouts, Keras 3, TF 2's resource variables and jit_compile, each with the
//     source file that shows it.
//
// Adding a release (TF 2.19) is a row of TFReleases; adding what a release changes (a fusion
// XLA learned in TF 2.16, or in JAX 0.12) is a Feature, its row of Gates and the rule that reads
// Profile.Has(feature), and nothing else: no rule compares versions.
//
// # Where XLA lives
//
// XLA touches three layers, and each keeps its part so that imports go down the rows: this
// package says which XLA a run has (Gates); models owns what XLA does to the step's graph
// (fusions, the values backward keeps, buffer assignment and rematerialization, compile time:
// models/xla*.go); hw prices the kernels XLA emits (hw/xla.go); train schedules compiles over
// the run and lowers compiled ops onto hw's kinds (train/xla.go). The BFC allocator's XLA
// variants are the allocator's (allocator/bfc.go). One package for all of it would have to sit
// above models and hw and below train, a row the table does not have, or pull the planner's
// internals out of models.
//
// The package imports nothing of the module: a run's GPU enters as its compute capability.
package framework
