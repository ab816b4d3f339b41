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
	ParamSustainedClock    = "sustained_clock_hz"
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
	// Groups is the device time of the median step's ops by group (xprof.Group of their
	// kinds: conv, matmul, memory-bound), seconds; Kinds the same by op kind. Only a
	// Predictor for profile observations needs to fill them.
	Groups map[string]float64
	Kinds  map[string]float64
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
	// Groups is the device time per step of the ops of each group a profile measured
	// (seconds, by xprof.Group name), compared with Prediction.Groups; ProfileObservations
	// makes them. An absent group is not observed.
	Groups map[string]float64
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
	// observation error included (default 5000; the identifiability probes come on top, four
	// per parameter, and the cross-validation's refits, at most looEvaluations each).
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
	Quantity    string  `json:"quantity"` // step_time_s, memory_bytes, context_bytes or kernel_time_s.GROUP
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
	// TiedTo names the parameter this one moves with: the observations change the two in
	// one direction only (their effects on every observed quantity are proportional), so
	// neither can be fitted apart and the posterior mode moves both, each by its share of
	// the effect (Ratio: this parameter's move in its widths per width of TiedTo's).
	TiedTo string  `json:"tied_to,omitempty"`
	Ratio  float64 `json:"ratio,omitempty"`
	// Note says why a parameter the observations inform stays at its prior (the
	// observations' rank is spent, leave-one-out cross-validation found no gain) or how a
	// fitted one was checked.
	Note string `json:"note,omitempty"`
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
	// PredictionError is the standard deviation of log(measured/predicted) the fit expects of
	// a new step like the fitted ones: ObsError widened for the directions fitted from the n
	// observed quantities, sqrt(1 + k/n) (a regression's new-observation variance, sigma^2
	// (1 + leverage), at the mean leverage k/n).
	PredictionError float64 `json:"prediction_error"`
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
	f, err := newFitter(obs, cfg)
	if err != nil {
		return nil, err
	}
	before, err := f.predictAll(obs, f.prior)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	var fitBefore []Prediction
	for i, o := range obs {
		if !o.HoldOut {
			fitBefore = append(fitBefore, before[i])
		}
	}
	f.probe(f.logErrs(f.fitted, fitBefore, f.prior))
	// The search's budget comes on top of the probes'.
	f.maxEvals += f.evals
	sigma, estimate := cfg.ObsError, cfg.ObsError == 0
	if estimate {
		sigma = ObsErrorFloor
	}
	// The cross-validation's refits come on top of the search's budget too.
	used := f.evals
	dirs, notes, err := f.choose(sigma)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	f.maxEvals += f.evals - used
	// With no ObsError given, it is estimated from the fit's own residuals: the residual
	// variance over the degrees of freedom the parameters leave (the observed quantities less
	// the effective number of parameters, sum of info/(1+info): a parameter the prior holds
	// counts for little), not below ObsErrorFloor, refitted until it settles. A fit that can
	// make its residuals vanish keeps the floor; one whose model cannot express what it sees
	// learns so from its residuals and lets the priors hold more.
	start := f.prior
	var s searchResult
	for iter := 0; ; iter++ {
		s, err = f.search(f.informed(dirs, sigma), sigma, start, iter == 0)
		if err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
		start = f.at(s.dirs, s.x)
		if !estimate || iter == 5 || f.evals >= f.maxEvals {
			break
		}
		next, err := f.residualSigma(start, s.dirs, sigma)
		if err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
		if math.Abs(next/sigma-1) < 0.05 {
			break
		}
		sigma = next
	}
	best := f.at(s.dirs, s.x)
	out := &FitResult{Params: best, Table: f.table(best, s.dirs, notes, sigma), ObsError: sigma, ObsErrorEstimated: estimate, Evaluations: f.evals, Status: s.status, Converged: s.converged, Loss: s.fx}
	out.PredictionError = sigma * math.Sqrt(1+float64(len(s.dirs))/float64(max(len(f.e0), 1)))
	after, err := f.predictAll(obs, best)
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
			rs = append(rs, Residual{Observation: o.Name, Quantity: "context_bytes", Observed: o.ContextBytes, Before: f.prior[ParamContextBytes], After: best[ParamContextBytes]})
		}
		for _, g := range o.groupNames() {
			rs = append(rs, Residual{Observation: o.Name, Quantity: GroupQuantity(g), Observed: o.Groups[g], Before: before[i].Groups[g], After: after[i].Groups[g]})
		}
		if o.HoldOut {
			out.HoldOut = append(out.HoldOut, rs...)
		} else {
			out.Residuals = append(out.Residuals, rs...)
		}
	}
	return out, nil
}

// table is the fit's parameter table: the directions' lead and tied parameters fitted at best,
// the others at their prior with the note choose gave them.
func (f *fitter) table(best Params, dirs []direction, notes map[int]string, sigma float64) []ParamResult {
	table := make([]ParamResult, len(f.ps))
	for i, p := range f.ps {
		table[i] = ParamResult{Param: p, Fitted: p.Prior, Information: f.raw[i] / (sigma * sigma), Note: notes[i]}
	}
	fitted := func(i int) {
		v := best[f.ps[i].Name]
		table[i].Identified = true
		table[i].Fitted = v
		table[i].AtBound = v <= f.ps[i].Min*(1+1e-9) || v >= f.ps[i].Max*(1-1e-9)
	}
	for _, d := range dirs {
		fitted(d.lead)
		for _, t := range d.tied {
			fitted(t.param)
			table[t.param].TiedTo, table[t.param].Ratio = f.ps[d.lead].Name, t.ratio
		}
	}
	return table
}

// fitter holds one fit's parameters, with their bounds filled in, and counts its simulator
// runs.
type fitter struct {
	cfg    FitConfig
	ps     []Param
	prior  Params
	fitted []Observation // the observations not held out
	raw    []float64     // per parameter, probe's largest squared change per width
	// cols is, per parameter, the change of each fitted quantity's log prediction per width
	// at the probe's step that changed them most: the parameter's column of the Jacobian.
	cols     [][]float64
	e0       []float64 // the fitted quantities' log errors at the prior
	evals    int
	maxEvals int
	evalErr  error // the first simulation error the loss met
	// light makes a search cheaper (one simplex, a shorter convergence test): the
	// cross-validation's refits compare fits, they are not the answer.
	light bool
}

// direction is one degree of freedom of a fit: its lead parameter (an index into ps) and the
// parameters tied to it, each moving ratio of its widths per width of the lead.
type direction struct {
	lead int
	tied []tie
}

type tie struct {
	param int
	ratio float64
}

func newFitter(obs []Observation, cfg FitConfig) (*fitter, error) {
	f := &fitter{cfg: cfg, prior: Params{}}
	for _, o := range obs {
		if !o.HoldOut {
			f.fitted = append(f.fitted, o)
		}
	}
	if len(f.fitted) == 0 {
		return nil, errors.New("fit: no observations to fit")
	}
	if len(cfg.Params) == 0 {
		return nil, errors.New("fit: no parameters")
	}
	if f.cfg.MinInformation == 0 {
		f.cfg.MinInformation = 0.1
	}
	f.maxEvals = cfg.MaxEvaluations
	if f.maxEvals == 0 {
		f.maxEvals = 5000
	}
	f.ps = append([]Param(nil), cfg.Params...)
	seen := map[string]bool{}
	for i, p := range f.ps {
		if seen[p.Name] {
			return nil, fmt.Errorf("fit: parameter %s given twice", p.Name)
		}
		seen[p.Name] = true
		if !(p.Prior > 0) || !(p.Width > 0) {
			return nil, fmt.Errorf("fit: parameter %s: prior %g, width %g, must be positive", p.Name, p.Prior, p.Width)
		}
		if p.Min == 0 {
			f.ps[i].Min = p.Prior * math.Exp(-8*p.Width)
		}
		if p.Max == 0 {
			f.ps[i].Max = p.Prior * math.Exp(8*p.Width)
		}
		f.ps[i].Prior = math.Min(math.Max(p.Prior, f.ps[i].Min), f.ps[i].Max)
	}
	for _, p := range f.ps {
		f.prior[p.Name] = p.Prior
	}
	return f, nil
}

// predictAll runs every observation of os at v.
func (f *fitter) predictAll(os []Observation, v Params) ([]Prediction, error) {
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
func (f *fitter) logErrs(os []Observation, pr []Prediction, v Params) []float64 {
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
		for _, g := range o.groupNames() {
			e = append(e, logRatio(pr[i].Groups[g], o.Groups[g]))
		}
	}
	return e
}

// groupNames are o's observed groups, sorted.
func (o Observation) groupNames() []string {
	var gs []string
	for g, v := range o.Groups {
		if v > 0 {
			gs = append(gs, g)
		}
	}
	sort.Strings(gs)
	return gs
}

// GroupQuantity is the Residual.Quantity of a group's device time.
func GroupQuantity(group string) string { return "kernel_time_s." + group }

// at is the prior with each direction dirs[j] at x[j] widths (log(value/prior)/Width) of its
// lead, its tied parameters at their ratio of that, within their bounds.
func (f *fitter) at(dirs []direction, x []float64) Params {
	v := Params{}
	for k, w := range f.prior {
		v[k] = w
	}
	set := func(i int, w float64) {
		p := f.ps[i]
		v[p.Name] = math.Min(math.Max(p.Prior*math.Exp(w*p.Width), p.Min), p.Max)
	}
	for j, d := range dirs {
		set(d.lead, x[j])
		for _, t := range d.tied {
			set(t.param, x[j]*t.ratio)
		}
	}
	return v
}

// probe is the identifiability check: each parameter alone at -2, -1, +1 and +2 widths from
// the prior, whose log errors are e0; raw is the largest squared change of the log predictions
// per width, the information times ObsError^2, and cols the change at that step.
func (f *fitter) probe(e0 []float64) {
	f.e0 = e0
	f.raw = make([]float64, len(f.ps))
	f.cols = make([][]float64, len(f.ps))
	for i := range f.ps {
		f.cols[i] = make([]float64, len(e0))
		for _, d := range []float64{-2, -1, 1, 2} {
			v := f.at([]direction{{lead: i}}, []float64{d})
			pr, err := f.predictAll(f.fitted, v)
			f.evals++
			if err != nil {
				// A parameter that breaks the simulation two widths out is still probed at one.
				continue
			}
			e := f.logErrs(f.fitted, pr, v)
			s := 0.0
			col := make([]float64, len(e))
			for k := range e {
				col[k] = (e[k] - e0[k]) / d
				s += col[k] * col[k]
			}
			if s > f.raw[i] {
				f.raw[i], f.cols[i] = s, col
			}
		}
	}
}

// searchResult is where a search stopped: the directions it moved, their values in widths,
// the loss there, the optimizer's status and whether it converged.
type searchResult struct {
	dirs      []direction
	x         []float64
	fx        float64
	status    string
	converged bool
}

// loss is the fit's objective over the directions at x: the fitted observations' log errors
// in units of sigma, and each moved parameter's distance from its prior in widths.
func (f *fitter) loss(dirs []direction, sigma float64, x []float64) float64 {
	f.evals++
	v := f.at(dirs, x)
	pr, err := f.predictAll(f.fitted, v)
	if err != nil {
		if f.evalErr == nil {
			f.evalErr = err
		}
		return math.Inf(1)
	}
	sum := 0.0
	for _, e := range f.logErrs(f.fitted, pr, v) {
		sum += e * e / (sigma * sigma)
	}
	prior := func(i int, w float64) {
		// A parameter pushed past its limit costs as if it were there, plus the excess.
		lx := math.Log(v[f.ps[i].Name]/f.ps[i].Prior) / f.ps[i].Width
		sum += lx*lx + (w-lx)*(w-lx)
	}
	for j, d := range dirs {
		prior(d.lead, x[j])
		for _, t := range d.tied {
			prior(t.param, x[j]*t.ratio)
		}
	}
	return sum
}

// search finds the loss's minimum at observation error sigma over dirs, from the values start.
func (f *fitter) search(dirs []direction, sigma float64, start Params, scan bool) (searchResult, error) {
	r := searchResult{dirs: dirs}
	loss := func(x []float64) float64 { return f.loss(r.dirs, sigma, x) }
	r.x = make([]float64, len(r.dirs))
	for j, d := range r.dirs {
		r.x[j] = math.Log(start[f.ps[d.lead].Name]/f.ps[d.lead].Prior) / f.ps[d.lead].Width
	}
	r.fx = loss(r.x)
	if math.IsInf(r.fx, 1) && f.evalErr != nil {
		return searchResult{}, f.evalErr
	}
	if len(r.dirs) == 0 {
		r.status, r.converged = "no parameter identified", true
		return r, nil
	}
	if scan {
		f.scan(&r, loss)
	}
	// Nelder-Mead, restarted from its own answer with a fresh simplex until a restart no
	// longer improves the loss: a simplex collapses early on the flat stretches of a
	// simulator. The loss is in units of the prior's and the observations' variances, so
	// a change of 1e-6 is nothing either can tell.
	restarts, iters := 10, 50
	if f.light {
		restarts, iters = 2, 20
	}
	for restart := 0; restart < restarts && f.evals < f.maxEvals; restart++ {
		settings := &optimize.Settings{
			FuncEvaluations: f.maxEvals - f.evals,
			Converger:       &optimize.FunctionConverge{Absolute: 1e-6, Relative: 1e-9, Iterations: iters},
		}
		// The first simplex spans one prior width in each direction; restarts refine with
		// a third of one.
		size := 1.0
		if restart > 0 || !scan {
			size = 0.3
		}
		res, err := optimize.Minimize(optimize.Problem{Func: loss}, r.x, settings, &optimize.NelderMead{SimplexSize: size})
		if err != nil && res == nil {
			return searchResult{}, err
		}
		if f.evalErr != nil && math.IsInf(res.F, 1) {
			return searchResult{}, f.evalErr
		}
		r.status = res.Status.String()
		improved := r.fx - res.F
		if res.F < r.fx {
			r.x, r.fx = res.X, res.F
		}
		if restart > 0 && improved <= 1e-6 {
			r.converged = res.Status == optimize.FunctionConvergence
			break
		}
	}
	return r, nil
}

// scan is a coarse scan before the simplex: each direction in turn over -3 .. +3 widths
// around the current point, twice. It finds the basin of a parameter whose effect starts only
// past a threshold (a launch overhead below the kernels' run time changes nothing), which a
// local simplex would not leave. Host parameters go first: a host-bound step moves only with
// the host's cost, and the GPU's efficiencies, scanned first, would absorb a host miss by
// slowing the GPU into the host's place.
func (f *fitter) scan(r *searchResult, loss func([]float64) float64) {
	order := make([]int, 0, len(r.dirs))
	for j, d := range r.dirs {
		if hostParam(f.ps[d.lead].Name) {
			order = append(order, j)
		}
	}
	for j, d := range r.dirs {
		if !hostParam(f.ps[d.lead].Name) {
			order = append(order, j)
		}
	}
	for sweep := 0; sweep < 2; sweep++ {
		for _, j := range order {
			best := r.x[j]
			for k := -6; k <= 6; k++ {
				if k == 0 {
					continue
				}
				y := append([]float64(nil), r.x...)
				y[j] = best + 0.5*float64(k)
				if fy := loss(y); fy < r.fx {
					r.fx, r.x[j] = fy, y[j]
				}
			}
		}
	}
}

// residualSigma is the observation error the fitted observations' residuals at v give: their
// variance over the degrees of freedom the directions leave, not below ObsErrorFloor.
func (f *fitter) residualSigma(v Params, dirs []direction, sigma float64) (float64, error) {
	pr, err := f.predictAll(f.fitted, v)
	if err != nil {
		return 0, err
	}
	rss := 0.0
	r := f.logErrs(f.fitted, pr, v)
	for _, e := range r {
		rss += e * e
	}
	pEff := 0.0
	for _, d := range dirs {
		info := f.raw[d.lead] / (sigma * sigma)
		pEff += info / (1 + info)
	}
	next := ObsErrorFloor
	if dof := float64(len(r)) - pEff; dof >= 1 {
		next = math.Max(ObsErrorFloor, math.Sqrt(rss/dof))
	}
	return next, nil
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
	var idle, held []string
	for _, p := range r.Table {
		switch {
		case !p.Identified && p.Note == "":
			idle = append(idle, p.Name)
			continue
		case !p.Identified:
			held = append(held, fmt.Sprintf("  %s (info %.3g): %s", p.Name, p.Information, p.Note))
			continue
		}
		bound := ""
		if p.AtBound {
			bound = " (at its bound)"
		}
		if p.TiedTo != "" {
			bound += fmt.Sprintf(" (tied to %s: %.3g of its widths)", p.TiedTo, p.Ratio)
		}
		pf("%-36s %12.6g %12.6g %7.3g %8.3g  %s%s\n", p.Name, p.Prior, p.Fitted, p.Width, p.Information, p.Source, bound)
		if p.Note != "" && p.TiedTo == "" {
			pf("%-36s %s\n", "", p.Note)
		}
	}
	if len(held) > 0 {
		pf("informed but left at the prior:\n%s\n", strings.Join(held, "\n"))
	}
	if len(idle) > 0 {
		pf("not identified by the fitted observations (left at the prior): %s\n", strings.Join(idle, ", "))
	}
	nw := len("observation")
	for _, res := range append(append([]Residual(nil), r.Residuals...), r.HoldOut...) {
		nw = max(nw, len(res.Observation))
	}
	qw := 14 // step_time_s, memory_bytes and context_bytes fit in it; a group quantity widens it
	for _, res := range append(append([]Residual(nil), r.Residuals...), r.HoldOut...) {
		qw = max(qw, len(res.Quantity))
	}
	table := func(title string, rs []Residual) {
		pf("\n%-*s %-*s %14s %14s %9s %14s %9s\n", nw, title, qw, "quantity", "observed", "before", "error", "after", "error")
		for _, res := range rs {
			pf("%-*s %-*s %14.6g %14.6g %+8.1f%% %14.6g %+8.1f%%\n", nw, res.Observation, qw, res.Quantity, res.Observed, res.Before, 100*res.RelErrBefore(), res.After, 100*res.RelErrAfter())
		}
		b, a := MAE(rs)
		pf("%-*s %-*s %14s %14s %8.1f%% %14s %8.1f%%\n", nw, "mean absolute error", qw, "", "", "", 100*b, "", 100*a)
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
