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
// The package imports nothing of the module: a run's GPU enters as its compute capability.
package framework
