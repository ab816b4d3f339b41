package lossscale

import (
	"fmt"
	"math"

	"github.com/gpusim/gpusim/sim"
)

// Float16Max is the largest finite float16 value (IEEE 754 binary16).
const Float16Max = 65504

// Float16MinSubnormal is the smallest positive float16 value, 2^-24.
const Float16MinSubnormal = 1.0 / (1 << 24)

// Config is LossScaleOptimizer's configuration.
type Config struct {
	// Dynamic selects dynamic loss scaling (Keras' default); false keeps InitialScale fixed.
	Dynamic bool
	// InitialScale is the first loss scale (Keras: initial_scale=2**15, _DEFAULT_INITIAL_SCALE).
	InitialScale float64
	// GrowthSteps is how many consecutive finite steps double the scale (Keras:
	// dynamic_growth_steps=2000, _DEFAULT_GROWTH_STEPS).
	GrowthSteps int
	// Multiplier is the growth and back-off factor (2 in _DynamicLossScaleState).
	Multiplier float64
}

// DefaultConfig returns Keras' defaults.
func DefaultConfig() Config {
	return Config{Dynamic: true, InitialScale: 1 << 15, GrowthSteps: 2000, Multiplier: 2}
}

// Validate reports a configuration Keras would reject.
func (c Config) Validate() error {
	switch {
	case !(c.InitialScale >= 1) || math.IsInf(c.InitialScale, 0):
		return fmt.Errorf("loss scale: initial scale %g must be finite and at least 1", c.InitialScale)
	case c.Dynamic && c.GrowthSteps < 1:
		return fmt.Errorf("loss scale: growth steps %d must be at least 1", c.GrowthSteps)
	case c.Dynamic && !(c.Multiplier > 1):
		return fmt.Errorf("loss scale: multiplier %g must be above 1", c.Multiplier)
	}
	return nil
}

// Scaler is the loss-scale state of one training run (shared by all replicas).
type Scaler struct {
	cfg     Config
	scale   float64
	counter int
}

// New returns a Scaler at the initial scale. It panics on an invalid Config (check Validate).
func New(cfg Config) *Scaler {
	if err := cfg.Validate(); err != nil {
		panic("lossscale: " + err.Error())
	}
	return &Scaler{cfg: cfg, scale: cfg.InitialScale}
}

// Scale returns the current loss scale.
func (s *Scaler) Scale() float64 { return s.scale }

// GoodSteps returns the consecutive finite steps counted toward the next growth.
func (s *Scaler) GoodSteps() int { return s.counter }

// Update records one step's verdict (finite: every gradient of every replica was finite) and
// reports whether the optimizer applies the gradients. It mirrors
// _DynamicLossScaleState.update: finite steps count toward growth, a non-finite step is skipped
// and halves the scale, floored at 1.
func (s *Scaler) Update(finite bool) (applied bool) {
	if !s.cfg.Dynamic {
		return finite
	}
	if finite {
		if s.counter+1 >= s.cfg.GrowthSteps {
			// _assign_if_finite: the scale grows only if the product is finite.
			if next := s.scale * s.cfg.Multiplier; !math.IsInf(next, 0) {
				s.scale = next
			}
			s.counter = 0
		} else {
			s.counter++
		}
		return true
	}
	s.scale = math.Max(s.scale/s.cfg.Multiplier, 1)
	s.counter = 0
	return false
}

// GradientModel describes the gradient magnitudes of a training run in float16.
type GradientModel struct {
	// Log10Max is the mean of log10(max |gradient|) over a replica's gradients (including the
	// intermediate activation gradients) at step 0; Sigma its standard deviation per step.
	Log10Max, Sigma float64
	// Drift is the change of Log10Max per 1000 steps (negative: gradients shrink as training
	// converges).
	Drift float64
	// SpikeProb is the chance per replica per step of a gradient spike of SpikeDecades orders of
	// magnitude (a bad batch).
	SpikeProb, SpikeDecades float64
	// NaNProb is the chance per replica per step of a non-finite gradient at any scale (a NaN in
	// the loss itself).
	NaNProb float64
	// Log10Median and ElementSigma describe individual gradient values: log10|g| is normal
	// around Log10Median with ElementSigma.
	Log10Median, ElementSigma float64
}

// DefaultGradientModel returns a model shaped like a convolutional network early in training:
// max |g| around 3 (so 2^15 overflows at first and the scale settles near 2^13), gradients
// shrinking by a tenth of a decade per 1000 steps, one spike in 10,000 replica-steps, and
// typical values near 1e-4 spread over two decades. These are illustrative defaults, not
// measurements: set the fields to match a real run's tf.summary of gradient norms.
func DefaultGradientModel() GradientModel {
	return GradientModel{Log10Max: 0.5, Sigma: 0.25, Drift: -0.1, SpikeProb: 1e-4, SpikeDecades: 3,
		NaNProb: 0, Log10Median: -4, ElementSigma: 1}
}

// Validate reports a model that cannot be sampled.
func (m GradientModel) Validate() error {
	switch {
	case m.Sigma < 0 || m.ElementSigma < 0:
		return fmt.Errorf("gradient model: sigma %g and element sigma %g must not be negative", m.Sigma, m.ElementSigma)
	case m.SpikeProb < 0 || m.SpikeProb > 1 || m.NaNProb < 0 || m.NaNProb > 1:
		return fmt.Errorf("gradient model: probabilities (spike %g, nan %g) must be in [0, 1]", m.SpikeProb, m.NaNProb)
	}
	return nil
}

// StepRecord is one simulated step.
type StepRecord struct {
	Step int
	// Scale is the loss scale the step ran with.
	Scale float64
	// MaxGrad is the largest unscaled |gradient| over all replicas (+Inf for a NaN step).
	MaxGrad float64
	// Applied is false for a skipped step.
	Applied bool
	// Underflow is the fraction of gradient values that the scaled float16 flushes to zero.
	Underflow float64
}

// Result is a simulated run.
type Result struct {
	Steps []StepRecord
	// Skipped counts the steps whose gradients were not applied (JSON skipped_steps).
	Skipped int
	// FinalScale is the scale after the last step; MinScale the smallest scale used.
	FinalScale, MinScale float64
	// MeanUnderflow is the mean underflow fraction over the steps.
	MeanUnderflow float64
	// Warnings are plain-language notes: a scale stuck at 1 (NaN risk: the loss itself is
	// non-finite), many skipped steps, heavy underflow.
	Warnings []string
}

// Simulate runs steps training steps with replicas replicas under cfg and the gradient model,
// drawing from sim.Stream(seed, "lossscale"). The same arguments always give the same Result.
func Simulate(cfg Config, m GradientModel, steps, replicas int, seed uint64) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	if err := m.Validate(); err != nil {
		return Result{}, err
	}
	if steps < 0 || replicas < 1 {
		return Result{}, fmt.Errorf("loss scale: steps %d and replicas %d must be >= 0 and >= 1", steps, replicas)
	}
	rng := sim.Stream(seed, "lossscale")
	s := New(cfg)
	res := Result{Steps: make([]StepRecord, 0, steps), MinScale: s.Scale()}
	var under float64
	for t := 0; t < steps; t++ {
		scale := s.Scale()
		maxg := 0.0
		for r := 0; r < replicas; r++ {
			if m.NaNProb > 0 && rng.Float64() < m.NaNProb {
				maxg = math.Inf(1)
				continue
			}
			l := m.Log10Max + m.Drift*float64(t)/1000 + m.Sigma*rng.NormFloat64()
			if m.SpikeProb > 0 && rng.Float64() < m.SpikeProb {
				l += m.SpikeDecades
			}
			maxg = math.Max(maxg, math.Pow(10, l))
		}
		// Overflow: some scaled gradient exceeds the float16 range (all replicas agree after
		// the all-reduced finiteness check).
		finite := !math.IsInf(maxg, 0) && maxg*scale <= Float16Max
		rec := StepRecord{Step: t, Scale: scale, MaxGrad: maxg, Applied: s.Update(finite),
			Underflow: m.underflow(scale)}
		under += rec.Underflow
		if !rec.Applied {
			res.Skipped++
		}
		res.MinScale = math.Min(res.MinScale, scale)
		res.Steps = append(res.Steps, rec)
	}
	res.FinalScale = s.Scale()
	if steps > 0 {
		res.MeanUnderflow = under / float64(steps)
	}
	res.Warnings = warnings(res, steps)
	return res, nil
}

// underflow returns P(|g| * scale < 2^-24) for log10|g| ~ N(Log10Median, ElementSigma).
func (m GradientModel) underflow(scale float64) float64 {
	x := math.Log10(Float16MinSubnormal/scale) - m.Log10Median
	if m.ElementSigma == 0 {
		if x > 0 {
			return 1
		}
		return 0
	}
	return 0.5 * math.Erfc(-x/(m.ElementSigma*math.Sqrt2))
}

func warnings(r Result, steps int) []string {
	var w []string
	if steps == 0 {
		return nil
	}
	if r.MinScale <= 1 && r.Skipped > 0 {
		w = append(w, fmt.Sprintf("loss scale fell to 1 with %d skipped steps: the loss itself is non-finite (NaN risk), loss scaling cannot help", r.Skipped))
	}
	if frac := float64(r.Skipped) / float64(steps); frac > 0.01 {
		w = append(w, fmt.Sprintf("%.1f%% of steps skipped by loss scaling", 100*frac))
	}
	if r.MeanUnderflow > 0.01 {
		w = append(w, fmt.Sprintf("%.1f%% of gradient values underflow float16 at the scales used", 100*r.MeanUnderflow))
	}
	return w
}
