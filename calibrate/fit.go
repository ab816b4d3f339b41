package calibrate

import (
	"errors"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/optimize"
)

// Params are the profile parameters a fit adjusts.
type Params struct {
	// ComputeScale multiplies the profile's compute efficiencies (the share of each peak FLOP
	// rate that real kernels reach); 1 = the profile as it is.
	ComputeScale float64 `json:"compute_scale"`
	// MemoryScale multiplies the profile's memory-bandwidth efficiencies.
	MemoryScale float64 `json:"memory_scale"`
	// LaunchOverhead is the host time per kernel, in seconds.
	LaunchOverhead float64 `json:"launch_overhead_s"`
	// ContextBytes is one process's CUDA context.
	ContextBytes float64 `json:"context_bytes"`
	// ConvScale, when positive, multiplies the convolution efficiencies (conv_fp32, conv_tf32,
	// conv_half) instead of ComputeScale, so that a fit can tell cuDNN convolutions from GEMMs
	// and element-wise math; 0 = tied to ComputeScale (and not fitted).
	ConvScale float64 `json:"conv_scale,omitempty"`
	// StepOverhead is the host time per training step outside the ops (hw.GPU.StepOverhead:
	// Keras fit's loop, callbacks, iterator and step dispatch), in seconds. It gives a
	// host-bound recording a host cost to land on, which the per-kernel launch overhead is
	// not; 0 in the prior = not fitted.
	StepOverhead float64 `json:"step_overhead_s,omitempty"`
	// HostDispatchScale multiplies Keras 3 on JAX's host costs per train-step call and per
	// state array (hw.GPU.HostDispatchScale), JAX's counterpart of StepOverhead, which JAX
	// scenarios do not pay. One scale, not the per-call base and the per-array cost apart: a
	// fit's recordings show few distinct array counts (two models: 538 and 68), and in a
	// device-fed step the exposed dispatch is a few percent of the step, so only the host-fed
	// steps, bound by the host, pin it. 0 in the prior = not fitted.
	HostDispatchScale float64 `json:"host_dispatch_scale,omitempty"`
}

func (p Params) vec() []float64 {
	return []float64{p.ComputeScale, p.MemoryScale, p.LaunchOverhead, p.ContextBytes, p.ConvScale, p.StepOverhead, p.HostDispatchScale}
}

func paramsOf(v []float64) Params {
	return Params{ComputeScale: v[0], MemoryScale: v[1], LaunchOverhead: v[2], ContextBytes: v[3], ConvScale: v[4], StepOverhead: v[5], HostDispatchScale: v[6]}
}

var paramNames = [...]string{"compute_scale", "memory_scale", "launch_overhead_s", "context_bytes", "conv_scale", "step_overhead_s", "host_dispatch_scale"}

// convIndex is ConvScale's place in vec; a zero there is "tied", not a parameter to fit.
// stepIndex is StepOverhead's and hostIndex HostDispatchScale's; a zero prior there is not
// fitted either.
const (
	convIndex = 4
	stepIndex = 5
	hostIndex = 6
)

// optional reports whether parameter i is left out of a fit when its prior is 0.
func optional(i int) bool { return i == convIndex || i == stepIndex || i == hostIndex }

// Prediction is what the simulator says a configuration does.
type Prediction struct {
	StepTime    float64 // seconds, median step
	MemoryBytes float64 // the job's device memory at its plateau (context plus pool)
}

// Predictor runs the simulator with the given parameters.
type Predictor func(Params) (Prediction, error)

// Observation is one recorded job and the simulator configured like it.
type Observation struct {
	Name        string
	StepTime    float64 // seconds; 0 = not observed
	MemoryBytes float64 // the memory plateau; 0 = not observed
	// ContextBytes is the CUDA context the recording shows (its first memory level); it is
	// compared with the context_bytes parameter itself. 0 = not observed.
	ContextBytes float64
	Predict      Predictor
}

// FitConfig tunes [Fit].
type FitConfig struct {
	// Prior is the uncalibrated parameters; the fit starts there and is pulled back toward them.
	Prior Params
	// PriorWeight is the weight of the pull, per parameter, on log(p/prior)^2, against 1 per
	// observed quantity on log(predicted/observed)^2. Default 1e-4: a factor e away from the prior
	// costs as much as a 1% miss, enough to pin parameters the observations cannot move.
	PriorWeight float64
	// Bounds limit each parameter (zero values: the defaults of [DefaultBounds]).
	Min, Max Params
	// MaxEvaluations bounds the simulator runs (default 2000).
	MaxEvaluations int
}

// DefaultBounds are wide physical limits: efficiencies scaled by 0.05 to 10 (ApplyParams caps
// each efficiency at 1), a launch overhead between 0.1 µs and 1 ms, a context between 16 MiB and 8 GiB,
// a step overhead between 1 µs and 1 s, a host dispatch scale between 0.05 and 10.
func DefaultBounds() (lo, hi Params) {
	return Params{ComputeScale: 0.05, MemoryScale: 0.05, LaunchOverhead: 1e-7, ContextBytes: 16 << 20, ConvScale: 0.05, StepOverhead: 1e-6, HostDispatchScale: 0.05},
		Params{ComputeScale: 10, MemoryScale: 10, LaunchOverhead: 1e-3, ContextBytes: 8 << 30, ConvScale: 10, StepOverhead: 1, HostDispatchScale: 10}
}

// Residual compares one observed quantity with the simulator before and after the fit.
type Residual struct {
	Observation string  `json:"observation"`
	Quantity    string  `json:"quantity"` // step_time_s, memory_bytes or context_bytes
	Observed    float64 `json:"observed"`
	Before      float64 `json:"before"`
	After       float64 `json:"after"`
}

// RelErrBefore and RelErrAfter are (predicted - observed) / observed.
func (r Residual) RelErrBefore() float64 { return (r.Before - r.Observed) / r.Observed }

// RelErrAfter is the relative error after the fit.
func (r Residual) RelErrAfter() float64 { return (r.After - r.Observed) / r.Observed }

// FitResult is a finished fit.
type FitResult struct {
	Prior       Params     `json:"prior"`
	Params      Params     `json:"params"`
	Residuals   []Residual `json:"residuals"`
	Evaluations int        `json:"evaluations"`
	Status      string     `json:"status"`
	Loss        float64    `json:"loss"`
}

// Fit finds the parameters that make every observation's prediction match, in log space (so
// step time and memory weigh by relative error), with a weak pull toward the prior, by
// Nelder-Mead (the simulator is piecewise and has no gradient). It is deterministic.
//
// With a positive Prior.ConvScale the fit runs first with the convolutions tied to
// ComputeScale, then twice with ConvScale free, from that answer and from the prior, and keeps
// the lower loss (so the extra parameter never strands the search in a worse basin than the
// tied fit's).
func Fit(obs []Observation, cfg FitConfig) (*FitResult, error) {
	if len(obs) == 0 {
		return nil, errors.New("fit: no observations")
	}
	if cfg.Prior.ConvScale > 0 {
		// A third of the budget each: the tied fit, the free fit from its answer, the free fit
		// from the prior.
		budget := cfg.maxEvaluations()
		tied := cfg
		tied.Prior.ConvScale = 0
		tied.MaxEvaluations = max(budget/3, 10)
		first, err := fit(obs, tied, nil)
		if err != nil {
			return nil, err
		}
		// Two searches with conv_scale free, one from the tied answer and one from the prior,
		// sharing what is left of the budget: the simulator's loss has several basins, and
		// either start may find the lower one.
		start := first.Params
		start.ConvScale = start.ComputeScale
		left := max(budget-first.Evaluations, 20)
		cfg.MaxEvaluations = left / 2
		res, err := fit(obs, cfg, &start)
		if err != nil {
			return nil, err
		}
		cfg.MaxEvaluations = left - res.Evaluations
		other, err := fit(obs, cfg, nil)
		if err != nil {
			return nil, err
		}
		evals := first.Evaluations + res.Evaluations + other.Evaluations
		if other.Loss < res.Loss {
			res = other
		}
		res.Evaluations = evals
		return res, nil
	}
	return fit(obs, cfg, nil)
}

func (cfg FitConfig) maxEvaluations() int {
	if cfg.MaxEvaluations == 0 {
		return 2000
	}
	return cfg.MaxEvaluations
}

// fit is Fit from start (nil: the prior).
func fit(obs []Observation, cfg FitConfig, start *Params) (*FitResult, error) {
	lo, hi := DefaultBounds()
	if cfg.Min != (Params{}) {
		lo = cfg.Min
	}
	if cfg.Max != (Params{}) {
		hi = cfg.Max
	}
	if cfg.PriorWeight == 0 {
		cfg.PriorWeight = 1e-4
	}
	cfg.MaxEvaluations = cfg.maxEvaluations()
	prior := cfg.Prior.vec()
	lov, hiv := lo.vec(), hi.vec()
	if lov[convIndex] == 0 && hiv[convIndex] == 0 { // bounds given before ConvScale existed
		lov[convIndex], hiv[convIndex] = 0.05, 10
	}
	if lov[stepIndex] == 0 && hiv[stepIndex] == 0 {
		lov[stepIndex], hiv[stepIndex] = 1e-6, 1
	}
	if lov[hostIndex] == 0 && hiv[hostIndex] == 0 {
		lov[hostIndex], hiv[hostIndex] = 0.05, 10
	}
	// active are the parameters fitted: all but the optional ones with a zero prior.
	var active []int
	for i, p := range prior {
		if optional(i) && p == 0 {
			continue
		}
		active = append(active, i)
		if !(p > 0) {
			return nil, fmt.Errorf("fit: prior %s = %g, must be positive", paramNames[i], p)
		}
		prior[i] = math.Min(math.Max(p, lov[i]), hiv[i])
	}
	before := make([]Prediction, len(obs))
	for i, o := range obs {
		p, err := o.Predict(paramsOf(prior))
		if err != nil {
			return nil, fmt.Errorf("fit: %s: %w", o.Name, err)
		}
		before[i] = p
	}
	// x[j] = log(p[i]/prior[i]) for i = active[j], clamped into the bounds by the objective.
	toParams := func(x []float64) []float64 {
		v := append([]float64(nil), prior...)
		for j, i := range active {
			v[i] = math.Min(math.Max(prior[i]*math.Exp(x[j]), lov[i]), hiv[i])
		}
		return v
	}
	evals := 0
	var evalErr error
	loss := func(x []float64) float64 {
		evals++
		v := toParams(x)
		sum := 0.0
		for i, o := range obs {
			p, err := o.Predict(paramsOf(v))
			if err != nil {
				if evalErr == nil {
					evalErr = fmt.Errorf("%s: %w", obs[i].Name, err)
				}
				return math.Inf(1)
			}
			if o.StepTime > 0 {
				sum += sqLogRatio(p.StepTime, o.StepTime)
			}
			if o.MemoryBytes > 0 {
				sum += sqLogRatio(p.MemoryBytes, o.MemoryBytes)
			}
			if o.ContextBytes > 0 {
				sum += sqLogRatio(v[3], o.ContextBytes)
			}
		}
		for j, i := range active {
			// Bounds: a parameter pushed past its limit costs as if it were there, plus the excess.
			lx := math.Log(v[i] / prior[i])
			sum += cfg.PriorWeight*lx*lx + (x[j]-lx)*(x[j]-lx)
		}
		return sum
	}
	// Nelder-Mead, restarted from its own answer with a fresh simplex until a restart no longer
	// improves the loss: a simplex collapses early on the flat stretches of a simulator (launch
	// overhead changes nothing until the host becomes the bottleneck).
	// A coarse coordinate scan first: each parameter in turn over factors e^-2 .. e^2 around the
	// current point, twice. It finds the basin of a parameter whose effect starts only past a
	// threshold (a launch overhead below the kernels' run time changes nothing), which a local
	// simplex would never leave.
	x := make([]float64, len(active))
	if start != nil {
		sv := start.vec()
		for j, i := range active {
			x[j] = math.Log(math.Min(math.Max(sv[i], lov[i]), hiv[i]) / prior[i])
		}
	}
	fx := loss(x)
	// The scan takes host_dispatch_scale first: a host-bound step moves only with the host's
	// cost, and the GPU's scales, scanned first, would absorb a host miss by slowing the GPU
	// into the host's place (a basin the simplex does not leave). Then the others in order.
	order := make([]int, 0, len(x))
	for j, i := range active {
		if i == hostIndex {
			order = append([]int{j}, order...)
		} else {
			order = append(order, j)
		}
	}
	for sweep := 0; sweep < 2; sweep++ {
		for _, i := range order {
			best := x[i]
			for k := -4; k <= 4; k++ {
				if k == 0 {
					continue
				}
				y := append([]float64(nil), x...)
				y[i] = best + 0.5*float64(k)
				if f := loss(y); f < fx {
					fx, x[i] = f, y[i]
				}
			}
		}
	}
	if math.IsInf(fx, 1) && evalErr != nil {
		return nil, fmt.Errorf("fit: %w", evalErr)
	}
	status := "not run"
	for restart := 0; restart < 8 && evals < cfg.MaxEvaluations; restart++ {
		settings := &optimize.Settings{
			FuncEvaluations: cfg.MaxEvaluations - evals,
			Converger:       &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-10, Iterations: 100},
		}
		// The first simplex spans a factor of e^1.5 (4.5) in each direction, wide enough to step
		// over the flat stretches; restarts refine with a factor of e^0.5 (1.6).
		size := 0.5
		if restart == 0 {
			size = 1.5
		}
		res, err := optimize.Minimize(optimize.Problem{Func: loss}, x, settings, &optimize.NelderMead{SimplexSize: size})
		if err != nil && res == nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
		if evalErr != nil && math.IsInf(res.F, 1) {
			return nil, fmt.Errorf("fit: %w", evalErr)
		}
		status = res.Status.String()
		improved := fx - res.F
		if restart == 0 {
			improved = math.Inf(1)
		}
		if res.F < fx {
			x, fx = res.X, res.F
		}
		if improved <= 1e-9*math.Max(1, math.Abs(fx)) {
			break
		}
	}
	best := toParams(x)
	out := &FitResult{Prior: paramsOf(prior), Params: paramsOf(best), Evaluations: evals, Status: status, Loss: fx}
	for i, o := range obs {
		p, err := o.Predict(out.Params)
		if err != nil {
			return nil, fmt.Errorf("fit: %s: %w", o.Name, err)
		}
		if o.StepTime > 0 {
			out.Residuals = append(out.Residuals, Residual{Observation: o.Name, Quantity: "step_time_s", Observed: o.StepTime, Before: before[i].StepTime, After: p.StepTime})
		}
		if o.MemoryBytes > 0 {
			out.Residuals = append(out.Residuals, Residual{Observation: o.Name, Quantity: "memory_bytes", Observed: o.MemoryBytes, Before: before[i].MemoryBytes, After: p.MemoryBytes})
		}
		if o.ContextBytes > 0 {
			out.Residuals = append(out.Residuals, Residual{Observation: o.Name, Quantity: "context_bytes", Observed: o.ContextBytes, Before: prior[3], After: best[3]})
		}
	}
	return out, nil
}

func sqLogRatio(pred, obs float64) float64 {
	if !(pred > 0) {
		return 1e6 // a non-positive prediction is as wrong as it gets, but finite for the simplex
	}
	l := math.Log(pred / obs)
	return l * l
}

// WriteText prints the fitted parameters and the residuals as aligned tables.
func (r *FitResult) WriteText(w io.Writer) error {
	var err error
	pf := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, args...)
		}
	}
	pf("%-22s %14s %14s\n", "parameter", "prior", "fitted")
	pv, fv := r.Prior.vec(), r.Params.vec()
	for i, n := range paramNames {
		if optional(i) && pv[i] == 0 {
			continue
		}
		pf("%-22s %14.6g %14.6g\n", n, pv[i], fv[i])
	}
	nw := len("observation")
	for _, res := range r.Residuals {
		nw = max(nw, len(res.Observation))
	}
	pf("\n%-*s %-14s %14s %14s %9s %14s %9s\n", nw, "observation", "quantity", "observed", "before", "error", "after", "error")
	for _, res := range r.Residuals {
		pf("%-*s %-14s %14.6g %14.6g %+8.1f%% %14.6g %+8.1f%%\n", nw, res.Observation, res.Quantity, res.Observed, res.Before, 100*res.RelErrBefore(), res.After, 100*res.RelErrAfter())
	}
	pf("\n%d simulator runs, %s, loss %.3g\n", r.Evaluations, r.Status, r.Loss)
	return err
}
