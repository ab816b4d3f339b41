package calibrate

import (
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/hw"
)

// rooflineModel is a synthetic job: convolution FLOPs, GEMM FLOPs and bytes per step, kernels
// per step, and the bytes it holds on the GPU besides the context.
type rooflineModel struct {
	conv, gemm, bytes float64
	kernels           float64
	pool              float64
}

// predictor prices m on a GPU of 400 TFLOP/s and 4 TB/s at the efficiencies p names
// (conv_tf32, tf32, memory), with kernels overlapping nothing: a stand-in for train with the
// same parameters.
func (m rooflineModel) predictor() Predictor {
	return func(p Params) (Prediction, error) {
		compute := m.conv/(400e12*p["conv_tf32"]) + m.gemm/(400e12*p["tf32"])
		memory := m.bytes / (4e12 * p["memory"])
		return Prediction{
			StepTime:    math.Max(compute, memory) + m.kernels*p[ParamLaunchOverhead],
			MemoryBytes: p[ParamContextBytes] + m.pool,
		}, nil
	}
}

func observe(name string, m rooflineModel, truth Params) Observation {
	p, _ := m.predictor()(truth)
	return Observation{Name: name, StepTime: p.StepTime, MemoryBytes: p.MemoryBytes, Predict: m.predictor()}
}

// wide are the parameters of the synthetic jobs with priors wide enough that the observations
// decide, and "half", which none of them uses.
func wide() []Param {
	return []Param{
		{Name: "conv_tf32", Prior: 0.5, Width: 1, Max: 1},
		{Name: "tf32", Prior: 0.8, Width: 1, Max: 1},
		{Name: "half", Prior: 0.78, Width: 1, Max: 1},
		{Name: "memory", Prior: 0.85, Width: 1, Max: 1},
		{Name: ParamLaunchOverhead, Prior: 6e-6, Width: 1},
		{Name: ParamContextBytes, Prior: 528 << 20, Width: 1},
	}
}

func valuesOf(ps []Param) Params {
	v := Params{}
	for _, p := range ps {
		v[p.Name] = p.Prior
	}
	return v
}

func TestFitRecoversAndTransfers(t *testing.T) {
	// The real GPU: convolutions reach 0.3 of the peak, not 0.5, GEMMs 0.6, memory 0.8,
	// launching costs 12 µs, not 6, and the context is 621 MiB, not 528.
	truth := Params{"conv_tf32": 0.3, "tf32": 0.6, "half": 0.78, "memory": 0.8, ParamLaunchOverhead: 12e-6, ParamContextBytes: 621 << 20}
	prior := valuesOf(wide())
	resnetB64 := rooflineModel{conv: 64 * 3 * 4.1e9 * 2, gemm: 64 * 3 * 0.4e9 * 2, bytes: 6e9, kernels: 900, pool: 20e9}
	resnetB128 := rooflineModel{conv: 128 * 3 * 4.1e9 * 2, gemm: 128 * 3 * 0.4e9 * 2, bytes: 12e9, kernels: 900, pool: 38e9}
	bert := rooflineModel{gemm: 32 * 3 * 22e9 * 2, bytes: 9e9, kernels: 1200, pool: 12e9}
	obs := []Observation{observe("resnet50-b64", resnetB64, truth), observe("resnet50-b128", resnetB128, truth), observe("bert", bert, truth)}
	res, err := Fit(obs, FitConfig{Params: wide()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged {
		t.Errorf("fit did not converge: %s after %d runs", res.Status, res.Evaluations)
	}
	for _, r := range res.Residuals {
		if e := math.Abs(r.RelErrAfter()); e > 0.01 {
			t.Errorf("after the fit %s %s is off by %.2f%% (observed %g, predicted %g)", r.Observation, r.Quantity, 100*e, r.Observed, r.After)
		}
	}
	// "half" changes no prediction: not identified, left at its prior.
	for _, p := range res.Table {
		if p.Name == "half" && (p.Identified || p.Fitted != 0.78 || res.Params["half"] != 0.78) {
			t.Errorf("half: %+v, want not identified and left at 0.78", p)
		}
		if p.Name == "conv_tf32" && !p.Identified {
			t.Errorf("conv_tf32: %+v, want identified", p)
		}
	}
	// A different model (more kernels, another mix) is predicted better with the fitted
	// parameters than with the prior.
	other := rooflineModel{conv: 64 * 3 * 0.3e9 * 2, gemm: 64 * 3 * 0.2e9 * 2, bytes: 3e9, kernels: 1500, pool: 6e9}
	want, _ := other.predictor()(truth)
	before, _ := other.predictor()(prior)
	after, _ := other.predictor()(res.Params)
	errBefore := math.Abs(before.StepTime-want.StepTime) / want.StepTime
	errAfter := math.Abs(after.StepTime-want.StepTime) / want.StepTime
	if errAfter >= errBefore || errAfter > 0.02 {
		t.Errorf("other model: fitted error %.3f, prior error %.3f: the fit did not transfer", errAfter, errBefore)
	}
	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"conv_tf32", "resnet50-b128", "step_time_s", "memory_bytes", "not identified", "half", "converged"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteText output lacks %q:\n%s", want, b.String())
		}
	}
}

// TestFitPosterior: one observation of a step whose time is inversely proportional to one
// efficiency. The maximum a posteriori estimate has a closed form: with d = log(observed /
// predicted at the prior), log(value/prior) = d w^2 / (w^2 + s^2) for prior width w and
// observation error s. The fit must land on it.
func TestFitPosterior(t *testing.T) {
	pred := func(p Params) (Prediction, error) { return Prediction{StepTime: 0.01 * 0.5 / p["conv_tf32"]}, nil }
	for _, tc := range []struct{ width, obsErr float64 }{{0.3, 0.013}, {0.05, 0.05}, {0.05, 0.1}} {
		o := Observation{Name: "one", StepTime: 0.01 * 0.8, Predict: pred} // 20% faster than the prior says
		res, err := Fit([]Observation{o}, FitConfig{Params: []Param{{Name: "conv_tf32", Prior: 0.5, Width: tc.width}}, ObsError: tc.obsErr})
		if err != nil {
			t.Fatal(err)
		}
		d := -math.Log(0.8) // the efficiency must rise by this much to match
		want := 0.5 * math.Exp(d*tc.width*tc.width/(tc.width*tc.width+tc.obsErr*tc.obsErr))
		if got := res.Params["conv_tf32"]; math.Abs(got/want-1) > 2e-3 {
			t.Errorf("width %g, observation error %g: fitted %.5f, want the posterior mode %.5f", tc.width, tc.obsErr, got, want)
		}
		if !res.Converged {
			t.Errorf("width %g: not converged (%s)", tc.width, res.Status)
		}
	}
	// A prior of 0.02 against an error of 0.1 holds 25 times what the observation says of the
	// parameter (information 0.04): not identified, left at the prior.
	o := Observation{Name: "one", StepTime: 0.01 * 0.8, Predict: pred}
	res, err := Fit([]Observation{o}, FitConfig{Params: []Param{{Name: "conv_tf32", Prior: 0.5, Width: 0.02}}, ObsError: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Table[0]; p.Identified || math.Abs(p.Information-0.04) > 1e-3 || res.Params["conv_tf32"] != 0.5 {
		t.Errorf("width 0.02, error 0.1: %+v, want information 0.04, not identified, left at 0.5", p)
	}
}

func TestFitIsDeterministic(t *testing.T) {
	truth := Params{"conv_tf32": 0.35, "tf32": 0.7, "half": 0.78, "memory": 0.9, ParamLaunchOverhead: 9e-6, ParamContextBytes: 600 << 20}
	m := rooflineModel{conv: 1e14, gemm: 1e13, bytes: 1e10, kernels: 500, pool: 1e9}
	a, err := Fit([]Observation{observe("a", m, truth)}, FitConfig{Params: wide()})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Fit([]Observation{observe("a", m, truth)}, FitConfig{Params: wide()})
	if !reflect.DeepEqual(a.Params, b.Params) || a.Evaluations != b.Evaluations {
		t.Errorf("two identical fits differ: %v (%d runs) and %v (%d runs)", a.Params, a.Evaluations, b.Params, b.Evaluations)
	}
}

// TestFitHoldOut: a held-out observation is predicted before and after and reported apart; it
// does not change the fit.
func TestFitHoldOut(t *testing.T) {
	truth := Params{"conv_tf32": 0.35, "tf32": 0.7, "half": 0.78, "memory": 0.9, ParamLaunchOverhead: 9e-6, ParamContextBytes: 600 << 20}
	a := observe("fitted", rooflineModel{conv: 1e14, gemm: 1e13, bytes: 1e10, kernels: 500}, truth)
	h := observe("held", rooflineModel{conv: 1e13, gemm: 5e13, bytes: 1e10, kernels: 900}, truth)
	h.HoldOut = true
	h.MemoryBytes = 0
	a.MemoryBytes = 0
	alone, err := Fit([]Observation{a}, FitConfig{Params: wide()})
	if err != nil {
		t.Fatal(err)
	}
	with, err := Fit([]Observation{a, h}, FitConfig{Params: wide()})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(alone.Params, with.Params) {
		t.Errorf("a held-out observation changed the fit: %v vs %v", with.Params, alone.Params)
	}
	if len(with.Residuals) != 1 || len(with.HoldOut) != 1 || with.HoldOut[0].Observation != "held" {
		t.Errorf("residuals %+v, held out %+v: want one each", with.Residuals, with.HoldOut)
	}
	if _, err := Fit([]Observation{h}, FitConfig{Params: wide()}); err == nil {
		t.Error("Fit(only held-out observations): no error")
	}
	var b strings.Builder
	if err := with.WriteText(&b); err != nil || !strings.Contains(b.String(), "held out") {
		t.Errorf("WriteText lacks the held-out table (%v):\n%s", err, b.String())
	}
}

func TestFitBoundsAndErrors(t *testing.T) {
	prior := valuesOf(wide())
	// An observation no parameter inside the bounds can reach: the fit stops at the bounds.
	m := rooflineModel{gemm: 1e12, kernels: 10}
	o := observe("slow", m, prior)
	o.StepTime *= 1000
	o.MemoryBytes = 0
	res, err := Fit([]Observation{o}, FitConfig{Params: wide()})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range wide() {
		lo, hi := p.Prior*math.Exp(-8*p.Width), p.Prior*math.Exp(8*p.Width)
		if p.Max > 0 {
			hi = p.Max
		}
		if v := res.Params[p.Name]; v < lo*(1-1e-12) || v > hi*(1+1e-12) {
			t.Errorf("fitted %s = %g outside [%g, %g]", p.Name, v, lo, hi)
		}
	}
	if _, err := Fit(nil, FitConfig{Params: wide()}); err == nil {
		t.Error("Fit(no observations): no error")
	}
	if _, err := Fit([]Observation{o}, FitConfig{}); err == nil {
		t.Error("Fit(no parameters): no error")
	}
	if _, err := Fit([]Observation{o}, FitConfig{Params: []Param{{Name: "memory", Prior: 0.8}}}); err == nil {
		t.Error("Fit(zero width): no error")
	}
	if _, err := Fit([]Observation{o}, FitConfig{Params: append(wide(), wide()[0])}); err == nil {
		t.Error("Fit(a parameter twice): no error")
	}
	boom := errors.New("bad scenario")
	bad := Observation{Name: "bad", StepTime: 1, Predict: func(Params) (Prediction, error) { return Prediction{}, boom }}
	if _, err := Fit([]Observation{bad}, FitConfig{Params: wide()}); !errors.Is(err, boom) {
		t.Errorf("Fit(failing predictor) = %v, want it wrapped", err)
	}
}

func TestFitContextObservation(t *testing.T) {
	truth := valuesOf(wide())
	truth[ParamContextBytes] = 621 << 20 // PyTorch's context on the H200 here (docs/sources.md)
	m := rooflineModel{conv: 1e14, bytes: 1e10, kernels: 500, pool: 1e9}
	o := observe("torch", m, truth)
	o.MemoryBytes, o.ContextBytes = 0, truth[ParamContextBytes]
	res, err := Fit([]Observation{o}, FitConfig{Params: wide()})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Params[ParamContextBytes]; math.Abs(got-truth[ParamContextBytes]) > 1<<20 {
		t.Errorf("fitted context = %.0f MiB, want %d MiB (observed)", got/(1<<20), 621)
	}
	last := res.Residuals[len(res.Residuals)-1]
	if last.Quantity != "context_bytes" || last.Before != 528<<20 {
		t.Errorf("last residual = %+v, want context_bytes from the prior 528 MiB", last)
	}
	// Without a memory or context observation the context is not identified.
	o.ContextBytes = 0
	res, err = Fit([]Observation{o}, FitConfig{Params: wide()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Params[ParamContextBytes] != 528<<20 {
		t.Errorf("context with no memory observed: fitted %g, want the prior", res.Params[ParamContextBytes])
	}
}

// TestFitByKind: three models that mix convolutions and GEMMs differently, made by a GPU
// whose convolutions run 1.5x the profile and its GEMMs 0.8x. The efficiencies of the two
// paths are separate parameters, as the cost model prices them: any two of the models
// identify both, so each passes leave-one-out, and the fit recovers both. (From two models
// alone, a fit to either one predicts the other worse than the prior: neither is freed.)
func TestFitByKind(t *testing.T) {
	truth := Params{"conv_tf32": 0.75, "tf32": 0.64, "half": 0.78, "memory": 0.85, ParamLaunchOverhead: 6e-6, ParamContextBytes: 528 << 20}
	var obs []Observation
	for i, m := range []rooflineModel{{conv: 3e12, gemm: 0.3e12}, {conv: 1e12, gemm: 2e12}, {conv: 2e12, gemm: 1e12}} {
		o := observe(fmt.Sprint("model", i), m, truth)
		o.MemoryBytes = 0
		obs = append(obs, o)
	}
	res, err := Fit(obs, FitConfig{Params: wide()})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Residuals {
		if math.Abs(r.RelErrAfter()) > 0.005 {
			t.Errorf("%s: error %.4f after the fit, want < 0.5%%", r.Observation, r.RelErrAfter())
		}
	}
	if got := res.Params; math.Abs(got["conv_tf32"]/0.75-1) > 0.02 || math.Abs(got["tf32"]/0.64-1) > 0.02 {
		t.Errorf("fitted conv_tf32 %.3f tf32 %.3f, want 0.75 and 0.64", got["conv_tf32"], got["tf32"])
	}
	two, err := Fit(obs[:2], FitConfig{Params: wide()})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range two.Table {
		if p.Identified {
			t.Errorf("two models: %s fitted (%s), want none past leave-one-out", p.Name, p.Note)
		}
	}
}

func TestApplyParams(t *testing.T) {
	base, err := hw.LookupGPU("h200")
	if err != nil {
		t.Fatal(err)
	}
	g := ApplyParams(base, Params{"conv_tf32": 0.6, "memory": 0.5, "memory_by_kind.xla_batchnorm": 0.3,
		ParamLaunchOverhead: 2e-5, ParamContextBytes: 600 << 20, ParamHostDispatchScale: 1.2, ParamStepOverhead: 3e-3})
	e, b := g.Efficiency, base.Efficiency
	checks := []struct {
		name      string
		got, want float64
	}{
		{"conv_tf32", e.ConvTF32, 0.6},
		{"conv_half (not named)", e.ConvHalf, b.ConvHalf},
		{"tf32 (not named)", e.TF32, b.TF32},
		{"memory", e.Memory, 0.5},
		{"memory_by_kind.xla_batchnorm", e.MemoryByKind[hw.MemXLABatchNorm], 0.3},
		{"memory_by_kind.xla_batchnorm_grad (not named)", e.MemoryByKind[hw.MemXLABatchNormGrad], b.MemoryByKind[hw.MemXLABatchNormGrad]},
		{"pseudo_half", e.PseudoHalf, b.PseudoHalf},
		{"launch_overhead", g.LaunchOverhead, 2e-5},
		{"step_overhead", g.StepOverhead, 3e-3},
		{"host_dispatch_scale", g.HostDispatchScale, 1.2},
		{"context_bytes", float64(g.ContextBytes), 600 << 20},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("ApplyParams: %s = %g, want %g", c.name, c.got, c.want)
		}
	}
	if base.LaunchOverhead == g.LaunchOverhead || base.Efficiency.MemoryByKind[hw.MemXLABatchNorm] == 0.3 {
		t.Error("ApplyParams changed its argument")
	}
	if err := g.WriteProfile(io.Discard); err != nil {
		t.Errorf("ApplyParams made an invalid profile: %v", err)
	}
}

// TestPriorParams: the h200 profile's parameters, one per efficiency path and memory kind,
// each with a positive width and its source; --prior-width-scale widens the efficiencies only
// (not the host's costs nor the sustained clock, whose widths are not from the H200's
// micro-benchmarks).
func TestPriorParams(t *testing.T) {
	g, err := hw.LookupGPU("h200")
	if err != nil {
		t.Fatal(err)
	}
	ps := PriorParams(g, 1)
	wide := PriorParams(g, 3)
	seen := map[string]bool{}
	for i, p := range ps {
		if seen[p.Name] || !(p.Prior > 0) || !(p.Width > 0) || p.Source == "" || p.Min >= p.Prior || p.Max < p.Prior {
			t.Errorf("parameter %+v: want a unique name, positive prior and width, a source, bounds around the prior", p)
		}
		seen[p.Name] = true
		host := p.Name == ParamLaunchOverhead || p.Name == ParamStepOverhead || p.Name == ParamHostDispatchScale || p.Name == ParamContextBytes || p.Name == ParamSustainedClock
		if want := map[bool]float64{true: p.Width, false: 3 * p.Width}[host]; math.Abs(wide[i].Width-want) > 1e-12 {
			t.Errorf("%s: width %g at scale 3, want %g", p.Name, wide[i].Width, want)
		}
	}
	for _, n := range []string{"conv_tf32", "conv_half", "tf32", "memory", "memory_by_kind." + hw.MemXLABatchNormHalf, ParamLaunchOverhead, ParamHostDispatchScale, ParamContextBytes, ParamSustainedClock} {
		if !seen[n] {
			t.Errorf("PriorParams(h200) lacks %s", n)
		}
	}
	// The prior values are the profile's: applying them changes nothing.
	if got := ApplyParams(g, valuesOf(ps)); !reflect.DeepEqual(got, g) {
		t.Errorf("ApplyParams(g, its own priors) changed the profile:\n%+v\n%+v", got, g)
	}
}

// TestFitObsError: with no ObsError given, a fit whose parameters reproduce the observations
// keeps the floor; one whose observations scatter about what any parameter gives (a
// model that cannot express them) estimates the scatter from its residuals, over the degrees
// of freedom its parameters leave.
func TestFitObsError(t *testing.T) {
	pred := func(p Params) (Prediction, error) { return Prediction{StepTime: 0.01 * 0.5 / p["conv_tf32"]}, nil }
	ps := []Param{{Name: "conv_tf32", Prior: 0.5, Width: 1}}
	exact, err := Fit([]Observation{{Name: "a", StepTime: 0.008, Predict: pred}}, FitConfig{Params: ps})
	if err != nil {
		t.Fatal(err)
	}
	if !exact.ObsErrorEstimated || exact.ObsError != ObsErrorFloor {
		t.Errorf("exact observation: error %g (estimated %v), want the floor %g", exact.ObsError, exact.ObsErrorEstimated, ObsErrorFloor)
	}
	// Six observations of one step, 4% either side of 8 ms: one parameter fits their mean.
	var obs []Observation
	for i := 0; i < 6; i++ {
		d := 0.04
		if i%2 == 1 {
			d = -0.04
		}
		obs = append(obs, Observation{Name: fmt.Sprint("r", i), StepTime: 0.008 * math.Exp(d), Predict: pred})
	}
	res, err := Fit(obs, FitConfig{Params: ps})
	if err != nil {
		t.Fatal(err)
	}
	// Residuals of 4% over 6 - 1 degrees of freedom.
	want := math.Sqrt(6 * 0.04 * 0.04 / 5)
	if math.Abs(res.ObsError/want-1) > 0.1 || !res.Converged {
		t.Errorf("scattered observations: error %.4f, want about %.4f (converged %v)", res.ObsError, want, res.Converged)
	}
	if got := res.Params["conv_tf32"]; math.Abs(got/0.625-1) > 0.01 {
		t.Errorf("scattered observations: fitted %.4f, want their mean's 0.625", got)
	}
	given, err := Fit(obs, FitConfig{Params: ps, ObsError: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	if given.ObsErrorEstimated || given.ObsError != 0.02 {
		t.Errorf("given error: %g (estimated %v), want 0.02 as given", given.ObsError, given.ObsErrorEstimated)
	}
}
