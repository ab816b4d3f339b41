package calibrate

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/optimize"
)

// Params are values of the profile parameters a fit adjusts, by name: an efficiency of the cost
// model by its profile key ("conv_tf32", "memory", "memory_by_kind.xla_batchnorm": one per op
// kind and math path, as hw prices them), or a host or memory quantity ("launch_overhead_s",
// "step_overhead_s", "host_dispatch_scale", "context_bytes"). [ApplyParams] puts them into a
// profile; a name it does not hold is left as the profile has it.
type Params map[string]float64

// The names of the parameters that are not efficiencies.
const (
	ParamLaunchOverhead    = "launch_overhead_s"
	ParamStepOverhead      = "step_overhead_s"
	ParamHostDispatchScale = "host_dispatch_scale"
	ParamContextBytes      = "context_bytes"
)

// Param is one parameter a fit may adjust: its value in the uncalibrated profile, the width of
// the prior around it and where that width comes from, and hard limits.
type Param struct {
	Name  string  `json:"name"`
	Prior float64 `json:"prior"`
	// Width is the prior's standard deviation of log(value/Prior): the fit is pulled back by
	// (log(value/Prior)/Width)^2, against (log(predicted/observed)/ObsError)^2 per observed
	// quantity.
	Width float64 `json:"width"`
	// Source says what Width rests on.
	Source string `json:"source,omitempty"`
	// Min and Max bound the value (0: 8 widths from the prior).
	Min, Max float64 `json:"-"`
}

// Prediction is what the simulator says a configuration does.
type Prediction struct {
	StepTime    float64 // seconds, median step
	MemoryBytes float64 // the job's device memory at its plateau (context plus pool)
}

// Predictor runs the simulator with the given parameters (every parameter of the fit named).
type Predictor func(Params) (Prediction, error)

// Observation is one recorded job and the simulator configured like it.
type Observation struct {
	Name        string
	StepTime    float64 // seconds; 0 = not observed
	MemoryBytes float64 // the memory plateau; 0 = not observed
	// ContextBytes is the CUDA context the recording shows (its first memory level); it is
	// compared with the context_bytes parameter itself. 0 = not observed.
	ContextBytes float64
	// HoldOut keeps the observation out of the fit: it is predicted before and after, and its
	// residuals are reported apart, as a test of what the fit is worth on a job it did not see.
	HoldOut bool
	Predict Predictor
}

// FitConfig tunes [Fit].
type FitConfig struct {
	// Params are the parameters the fit may adjust (PriorParams of the scenario's profile).
	// Each one is first tested for identifiability: one that no fitted observation depends on
	// enough to tell (see MinInformation) stays at its prior and is reported as not identified.
	Params []Param
	// ObsError is the standard deviation of log(predicted/observed) the fit allows each
	// observed quantity: how far a recording is expected to scatter about the simulator at the
	// right parameters. 0: estimated from the fit's residuals, at least [ObsErrorFloor].
	ObsError float64
	// MinInformation is the least information (in units of the prior's) the fitted observations
	// must hold on a parameter for it to be fitted. Default 0.1: a parameter whose prior the
	// data narrow by less than 5% is left at its prior.
	MinInformation float64
	// MaxEvaluations bounds the simulator runs of the search, the refits that estimate the
	// observation error included (default 5000; the identifiability probes come on top: four
	// per parameter).
	MaxEvaluations int
}

// ObsErrorFloor is the least observation error a fit assumes: the run-to-run scatter of a
// recorded step time. testdata/h200/keras/steps.csv recorded every config twice (phases A and
// B, separate processes): the synchronised device-fed medians of the two differ by a median of
// 1.3% over the 13 configs. Unless FitConfig.ObsError is given, Fit starts there and estimates
// the error from its residuals: what the simulator cannot express at any parameters counts as
// observation error too, so that the priors, not a chase of every residual, decide how far a
// parameter moves.
const ObsErrorFloor = 0.013

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

// ParamResult is what a fit did with one parameter.
type ParamResult struct {
	Param
	Fitted float64 `json:"fitted"`
	// Information is how much the fitted observations say of the parameter, in units of what
	// the prior says (sum over observed quantities of (d log prediction / d (log value/Width))^2
	// / ObsError^2, from probes at 1 and 2 widths either side of the prior).
	Information float64 `json:"information"`
	// Identified is whether it was fitted (Information >= MinInformation); otherwise Fitted is
	// the prior.
	Identified bool `json:"identified"`
	// AtBound says the fit stopped at one of the parameter's limits (an efficiency at the
	// peak, 1): the observations want more than the parameter can give, a sign that what they
	// miss is not this parameter.
	AtBound bool `json:"at_bound,omitempty"`
}

// FitResult is a finished fit.
type FitResult struct {
	Params Params        `json:"params"` // every parameter, fitted or at its prior
	Table  []ParamResult `json:"table"`
	// Residuals are the fitted observations', HoldOut the held-out ones'.
	Residuals []Residual `json:"residuals"`
	HoldOut   []Residual `json:"hold_out,omitempty"`
	ObsError  float64    `json:"obs_error"`
	// ObsErrorEstimated says ObsError was estimated from the residuals (FitConfig.ObsError 0).
	ObsErrorEstimated bool `json:"obs_error_estimated,omitempty"`
	// Evaluations counts the simulator runs (of every observation at one parameter set) of
	// the probes and the search.
	Evaluations int    `json:"evaluations"`
	Status      string `json:"status"`
	// Converged says the last Nelder-Mead search stopped on its convergence test and a restart
	// from its answer no longer improved the loss (not on the evaluation limit).
	Converged bool    `json:"converged"`
	Loss      float64 `json:"loss"`
}

// MAE is the mean absolute relative error of rs before and after the fit.
func MAE(rs []Residual) (before, after float64) {
	if len(rs) == 0 {
		return 0, 0
	}
	for _, r := range rs {
		before += math.Abs(r.RelErrBefore())
		after += math.Abs(r.RelErrAfter())
	}
	return before / float64(len(rs)), after / float64(len(rs))
}

// Fit finds the parameters that make the fitted observations' predictions match, as a
// maximum a posteriori estimate in log space: each observed quantity's log(predicted/observed)
// has a normal error of ObsError (estimated from the residuals unless given), each
// parameter's log(value/prior) a normal prior of its Width. It searches in units of each parameter's width (so that a step means as much for a
// launch overhead as for an efficiency) by a coarse scan and Nelder-Mead (the simulator is
// piecewise and has no gradient). It is deterministic.
//
// Parameters the fitted observations cannot identify (a half-precision efficiency in a fit of
// float32 steps, the TF step overhead in a JAX scenario, the context without a memory
// observation) are not fitted: moving them would change no fitted residual and would change
// what other jobs are predicted to do.
func Fit(obs []Observation, cfg FitConfig) (*FitResult, error) {
	var fitted []Observation
	for _, o := range obs {
		if !o.HoldOut {
			fitted = append(fitted, o)
		}
	}
	if len(fitted) == 0 {
		return nil, errors.New("fit: no observations to fit")
	}
	if len(cfg.Params) == 0 {
		return nil, errors.New("fit: no parameters")
	}
	if cfg.MinInformation == 0 {
		cfg.MinInformation = 0.1
	}
	maxEvals := cfg.MaxEvaluations
	if maxEvals == 0 {
		maxEvals = 5000
	}
	ps := append([]Param(nil), cfg.Params...)
	seen := map[string]bool{}
	for i, p := range ps {
		if seen[p.Name] {
			return nil, fmt.Errorf("fit: parameter %s given twice", p.Name)
		}
		seen[p.Name] = true
		if !(p.Prior > 0) || !(p.Width > 0) {
			return nil, fmt.Errorf("fit: parameter %s: prior %g, width %g, must be positive", p.Name, p.Prior, p.Width)
		}
		if p.Min == 0 {
			ps[i].Min = p.Prior * math.Exp(-8*p.Width)
		}
		if p.Max == 0 {
			ps[i].Max = p.Prior * math.Exp(8*p.Width)
		}
		ps[i].Prior = math.Min(math.Max(p.Prior, ps[i].Min), ps[i].Max)
	}
	prior := Params{}
	for _, p := range ps {
		prior[p.Name] = p.Prior
	}
	// predictAll runs every observation (fitted and held out) at v.
	evals := 0
	predictAll := func(os []Observation, v Params) ([]Prediction, error) {
		out := make([]Prediction, len(os))
		for i, o := range os {
			p, err := o.Predict(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", o.Name, err)
			}
			out[i] = p
		}
		return out, nil
	}
	// logErrs are the log(predicted/observed) of every observed quantity of os.
	logErrs := func(os []Observation, pr []Prediction, v Params) []float64 {
		var e []float64
		for i, o := range os {
			if o.StepTime > 0 {
				e = append(e, logRatio(pr[i].StepTime, o.StepTime))
			}
			if o.MemoryBytes > 0 {
				e = append(e, logRatio(pr[i].MemoryBytes, o.MemoryBytes))
			}
			if o.ContextBytes > 0 {
				e = append(e, logRatio(v[ParamContextBytes], o.ContextBytes))
			}
		}
		return e
	}
	before, err := predictAll(obs, prior)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	var fitBefore []Prediction
	for i, o := range obs {
		if !o.HoldOut {
			fitBefore = append(fitBefore, before[i])
		}
	}
	e0 := logErrs(fitted, fitBefore, prior)
	sigma, estimate := cfg.ObsError, cfg.ObsError == 0
	if estimate {
		sigma = ObsErrorFloor
	}
	// x[j] is log(value/prior)/Width of parameter ps[active[j]].
	at := func(active []int, x []float64) Params {
		v := Params{}
		for k, w := range prior {
			v[k] = w
		}
		for j, i := range active {
			p := ps[i]
			v[p.Name] = math.Min(math.Max(p.Prior*math.Exp(x[j]*p.Width), p.Min), p.Max)
		}
		return v
	}
	// Identifiability: each parameter alone at -2, -1, +1 and +2 widths; raw is the largest
	// squared change of the log predictions per width, the information times ObsError^2.
	table := make([]ParamResult, len(ps))
	raw := make([]float64, len(ps))
	for i, p := range ps {
		table[i] = ParamResult{Param: p, Fitted: p.Prior}
		for _, d := range []float64{-2, -1, 1, 2} {
			v := at([]int{i}, []float64{d})
			pr, err := predictAll(fitted, v)
			evals++
			if err != nil {
				// A parameter that breaks the simulation two widths out is still probed at one.
				continue
			}
			e := logErrs(fitted, pr, v)
			s := 0.0
			for k := range e {
				dd := (e[k] - e0[k]) / d
				s += dd * dd
			}
			raw[i] = math.Max(raw[i], s)
		}
	}
	// The search's budget comes on top of the probes'.
	maxEvals += evals
	var evalErr error
	// search finds the loss's minimum at observation error sigma over the parameters the
	// observations identify at that error, from the values start.
	search := func(sigma float64, start Params, scan bool) (active []int, x []float64, fx float64, status string, converged bool, err error) {
		for i := range ps {
			if raw[i]/(sigma*sigma) >= cfg.MinInformation {
				active = append(active, i)
			}
		}
		loss := func(x []float64) float64 {
			evals++
			v := at(active, x)
			pr, err := predictAll(fitted, v)
			if err != nil {
				if evalErr == nil {
					evalErr = err
				}
				return math.Inf(1)
			}
			sum := 0.0
			for _, e := range logErrs(fitted, pr, v) {
				sum += e * e / (sigma * sigma)
			}
			for j, i := range active {
				// A parameter pushed past its limit costs as if it were there, plus the excess.
				lx := math.Log(v[ps[i].Name]/ps[i].Prior) / ps[i].Width
				sum += lx*lx + (x[j]-lx)*(x[j]-lx)
			}
			return sum
		}
		x = make([]float64, len(active))
		for j, i := range active {
			x[j] = math.Log(start[ps[i].Name]/ps[i].Prior) / ps[i].Width
		}
		fx = loss(x)
		if math.IsInf(fx, 1) && evalErr != nil {
			return nil, nil, 0, "", false, evalErr
		}
		if len(active) == 0 {
			return active, x, fx, "no parameter identified", true, nil
		}
		if scan {
			// A coarse scan first: each parameter in turn over -3 .. +3 widths around the
			// current point, twice. It finds the basin of a parameter whose effect starts only
			// past a threshold (a launch overhead below the kernels' run time changes nothing),
			// which a local simplex would not leave. Host parameters go first: a host-bound
			// step moves only with the host's cost, and the GPU's efficiencies, scanned first,
			// would absorb a host miss by slowing the GPU into the host's place.
			order := make([]int, 0, len(active))
			for j, i := range active {
				if hostParam(ps[i].Name) {
					order = append(order, j)
				}
			}
			for j, i := range active {
				if !hostParam(ps[i].Name) {
					order = append(order, j)
				}
			}
			for sweep := 0; sweep < 2; sweep++ {
				for _, j := range order {
					best := x[j]
					for k := -6; k <= 6; k++ {
						if k == 0 {
							continue
						}
						y := append([]float64(nil), x...)
						y[j] = best + 0.5*float64(k)
						if f := loss(y); f < fx {
							fx, x[j] = f, y[j]
						}
					}
				}
			}
		}
		// Nelder-Mead, restarted from its own answer with a fresh simplex until a restart no
		// longer improves the loss: a simplex collapses early on the flat stretches of a
		// simulator. The loss is in units of the prior's and the observations' variances, so
		// a change of 1e-6 is nothing either can tell.
		for restart := 0; restart < 10 && evals < maxEvals; restart++ {
			settings := &optimize.Settings{
				FuncEvaluations: maxEvals - evals,
				Converger:       &optimize.FunctionConverge{Absolute: 1e-6, Relative: 1e-9, Iterations: 50},
			}
			// The first simplex spans one prior width in each direction; restarts refine with
			// a third of one.
			size := 1.0
			if restart > 0 || !scan {
				size = 0.3
			}
			res, err := optimize.Minimize(optimize.Problem{Func: loss}, x, settings, &optimize.NelderMead{SimplexSize: size})
			if err != nil && res == nil {
				return nil, nil, 0, "", false, err
			}
			if evalErr != nil && math.IsInf(res.F, 1) {
				return nil, nil, 0, "", false, evalErr
			}
			status = res.Status.String()
			improved := fx - res.F
			if res.F < fx {
				x, fx = res.X, res.F
			}
			if restart > 0 && improved <= 1e-6 {
				converged = res.Status == optimize.FunctionConvergence
				break
			}
		}
		return active, x, fx, status, converged, nil
	}
	// With no ObsError given, it is estimated from the fit's own residuals: the residual
	// variance over the degrees of freedom the parameters leave (the observed quantities less
	// the effective number of parameters, sum of info/(1+info): a parameter the prior holds
	// counts for little), not below ObsErrorFloor, refitted until it settles. A fit that can
	// make its residuals vanish keeps the floor; one whose model cannot express what it sees
	// learns so from its residuals and lets the priors hold more.
	start := prior
	var (
		active    []int
		x         []float64
		fx        float64
		status    string
		converged bool
	)
	for iter := 0; ; iter++ {
		active, x, fx, status, converged, err = search(sigma, start, iter == 0)
		if err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
		start = at(active, x)
		if !estimate || iter == 5 || evals >= maxEvals {
			break
		}
		pr, err := predictAll(fitted, start)
		if err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
		rss := 0.0
		r := logErrs(fitted, pr, start)
		for _, e := range r {
			rss += e * e
		}
		pEff := 0.0
		for _, i := range active {
			info := raw[i] / (sigma * sigma)
			pEff += info / (1 + info)
		}
		next := ObsErrorFloor
		if dof := float64(len(r)) - pEff; dof >= 1 {
			next = math.Max(ObsErrorFloor, math.Sqrt(rss/dof))
		}
		if math.Abs(next/sigma-1) < 0.05 {
			break
		}
		sigma = next
	}
	best := at(active, x)
	for i := range ps {
		table[i].Information = raw[i] / (sigma * sigma)
		table[i].Identified = false
	}
	for _, i := range active {
		v := best[ps[i].Name]
		table[i].Identified = true
		table[i].Fitted = v
		table[i].AtBound = v <= ps[i].Min*(1+1e-9) || v >= ps[i].Max*(1-1e-9)
	}
	out := &FitResult{Params: best, Table: table, ObsError: sigma, ObsErrorEstimated: estimate, Evaluations: evals, Status: status, Converged: converged, Loss: fx}
	after, err := predictAll(obs, best)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	for i, o := range obs {
		var rs []Residual
		if o.StepTime > 0 {
			rs = append(rs, Residual{Observation: o.Name, Quantity: "step_time_s", Observed: o.StepTime, Before: before[i].StepTime, After: after[i].StepTime})
		}
		if o.MemoryBytes > 0 {
			rs = append(rs, Residual{Observation: o.Name, Quantity: "memory_bytes", Observed: o.MemoryBytes, Before: before[i].MemoryBytes, After: after[i].MemoryBytes})
		}
		if o.ContextBytes > 0 {
			rs = append(rs, Residual{Observation: o.Name, Quantity: "context_bytes", Observed: o.ContextBytes, Before: prior[ParamContextBytes], After: best[ParamContextBytes]})
		}
		if o.HoldOut {
			out.HoldOut = append(out.HoldOut, rs...)
		} else {
			out.Residuals = append(out.Residuals, rs...)
		}
	}
	return out, nil
}

// hostParam reports whether a parameter is the host's (scanned before the GPU's).
func hostParam(name string) bool {
	return name == ParamHostDispatchScale || name == ParamStepOverhead || name == ParamLaunchOverhead
}

func logRatio(pred, obs float64) float64 {
	if !(pred > 0) {
		return 1e3 // a non-positive prediction is as wrong as it gets, but finite for the simplex
	}
	return math.Log(pred / obs)
}

// Names returns p's names, sorted.
func (p Params) Names() []string {
	ns := make([]string, 0, len(p))
	for k := range p {
		ns = append(ns, k)
	}
	sort.Strings(ns)
	return ns
}

// WriteText prints the parameters (fitted, and those not identified apart) and the residuals of
// the fitted and the held-out observations as aligned tables.
func (r *FitResult) WriteText(w io.Writer) error {
	var err error
	pf := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, args...)
		}
	}
	pf("%-36s %12s %12s %7s %8s  %s\n", "parameter", "prior", "fitted", "width", "info", "width from")
	var idle []string
	for _, p := range r.Table {
		if !p.Identified {
			idle = append(idle, p.Name)
			continue
		}
		bound := ""
		if p.AtBound {
			bound = " (at its bound)"
		}
		pf("%-36s %12.6g %12.6g %7.3g %8.3g  %s%s\n", p.Name, p.Prior, p.Fitted, p.Width, p.Information, p.Source, bound)
	}
	if len(idle) > 0 {
		pf("not identified by the fitted observations (left at the prior): %s\n", strings.Join(idle, ", "))
	}
	nw := len("observation")
	for _, res := range append(append([]Residual(nil), r.Residuals...), r.HoldOut...) {
		nw = max(nw, len(res.Observation))
	}
	table := func(title string, rs []Residual) {
		pf("\n%-*s %-14s %14s %14s %9s %14s %9s\n", nw, title, "quantity", "observed", "before", "error", "after", "error")
		for _, res := range rs {
			pf("%-*s %-14s %14.6g %14.6g %+8.1f%% %14.6g %+8.1f%%\n", nw, res.Observation, res.Quantity, res.Observed, res.Before, 100*res.RelErrBefore(), res.After, 100*res.RelErrAfter())
		}
		b, a := MAE(rs)
		pf("%-*s %-14s %14s %14s %8.1f%% %14s %8.1f%%\n", nw, "mean absolute error", "", "", "", 100*b, "", 100*a)
	}
	table("fitted", r.Residuals)
	if len(r.HoldOut) > 0 {
		table("held out (not fitted)", r.HoldOut)
	}
	conv := "converged"
	if !r.Converged {
		conv = "not converged"
	}
	how := "given"
	if r.ObsErrorEstimated {
		how = "estimated from the residuals"
	}
	pf("\n%d simulator runs, %s (%s), observation error %.2g (%s), loss %.3g\n", r.Evaluations, r.Status, conv, r.ObsError, how, r.Loss)
	return err
}
