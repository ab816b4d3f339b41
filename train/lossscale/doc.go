// Package lossscale reproduces Keras' dynamic loss scaling for mixed_float16 training and the
// gradient magnitudes that drive it, so a simulated run shows skipped steps and NaN risk.
//
// # Loss scaling (Scaler)
//
// Scaler follows keras/mixed_precision/loss_scale_optimizer.py, _DynamicLossScaleState.update
// (TF 2.x): the scale starts at 2^15; after 2000 consecutive steps with finite gradients it is
// multiplied by 2 (if the product is finite) and the counter restarts; a step with any inf or
// NaN gradient is skipped (the optimizer does not apply it), the scale is divided by 2 but not
// below 1, and the counter restarts. Under a distribution strategy the finiteness check is
// all-reduced first, so every replica sees the same verdict and all skip together
// (Update takes the verdict of all replicas).
//
// # Gradient model (GradientModel)
//
// A seeded model of per-step gradient magnitudes: the largest |gradient| a replica computes in
// float16 at step t is log-normal (Log10Max, Sigma) drifting by Drift decades per 1000 steps,
// with occasional spikes (SpikeProb, SpikeDecades), and a small chance of a genuinely non-finite
// step (NaNProb: a NaN that no scale can fix). A replica overflows when max|g| * scale exceeds
// the float16 maximum, 65504. Individual gradient values are log-normal around Log10Median
// with ElementSigma; the fraction that scaled falls below the smallest float16 subnormal
// (2^-24) is reported as the underflow fraction, the risk loss scaling exists to avoid.
//
// Simulate runs a Scaler against the model for a number of steps and replicas and returns
// every step's scale and verdict, the skipped-step count (JSON skipped_steps) and warnings.
//
//	res := lossscale.Simulate(lossscale.DefaultConfig(), lossscale.DefaultGradientModel(), 10000, 8, seed)
//	fmt.Println(res.Skipped, res.FinalScale)
package lossscale
