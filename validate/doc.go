// Package validate owns measurement sets and how gpusim scores against them.
//
// A measurement is a scenario plus what was observed: provenance (where the figure comes
// from), scenario overrides (any scenario key, as --set text) and the observed figure in its
// metric (throughput, step time, a whole run's mean throughput, time to train). A user's own
// file of measurements (ReadSet) and the sets the project ships (ReadShipped: NVIDIA's
// DeepLearningExamples tables in the same file format, the H200 recordings in their tools'
// formats) become the same Measurement values, each run through train.Run as the scenario its
// overrides describe, and Score reports the errors: MAE, bias and the largest error per group
// (GPU, model, precision, XLA, ...), the ratios of rows that differ in one knob, and
// leave-one-GPU-out / leave-one-model-out folds. Plot draws predicted against measured.
//
// What a published figure ran is data here, never a Go branch: the DLE rows' per-commit
// script settings are per-row overrides written by tools/dle/select.py with the reason beside
// each (testdata/dle/dle_tf.csv).
package validate
