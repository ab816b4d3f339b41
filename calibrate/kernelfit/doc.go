// Package kernelfit fits the cost model's efficiency factors (hw.Efficiency) to kernel-level
// measurements: op lists, profiled kernel times, step times and micro-benchmarks recorded on
// the H200 with PyTorch (testdata/h200 at the repository root, written by tools/h200).
//
// ReadTFLayout (or ReadMeasured) reads a measurement directory into a Measured set; Evaluate
// compares any hw.GPU profile with it; Fit fits a profile's factors, then the measuring
// program's own host time per op (HarnessHost, a property of PyTorch eager, not of the GPU),
// minimising squared log errors with Nelder-Mead (gonum/optimize). The Level chooses the
// data of the efficiency stage:
//
//   - Groups: each config's kernel time summed per kind group (conv, matmul, norm, rest),
//     what hw.DefaultEfficiency holds;
//   - Ops: every profiled aten op of a config (kernels.csv self device time, no annotation
//     ranges) matched by name and call count with the logged ops that ran it, 507 groups on
//     the H200 (Report.OpMAE, Report.KernelMAE), with a memory efficiency per kind and a
//     convolution ramp;
//   - OpsBase: Ops's data with Groups's parameters. OpsBaseEfficiency is its fit: ComputeRamp
//     on matrix kernels only (hw.Efficiency.MatrixRampOnly), 10% kernel-time and 33% per-op
//     error against the default's 40% and 138%; it is not the default because its cheaper
//     kernels widen the H200 step-time errors through train (docs/speed.md, "Refit on
//     per-kernel times").
//
// go run ./tools/h200/fit prints a fit; paste its factors into hw.DefaultEfficiency. To run
// train with the kernel-level fit:
//
//	g, _ := hw.LookupGPU("h200")
//	g.Efficiency = kernelfit.OpsBaseEfficiency() // or matrix_ramp_only: true in a profile YAML
//	cfg.GPUProfile = &g                          // train
package kernelfit
