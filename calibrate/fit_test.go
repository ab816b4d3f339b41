package calibrate

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/hw"
)

// rooflineModel is a synthetic job: FLOPs and bytes per step, kernels per step, and the bytes
// it holds on the GPU besides the context.
type rooflineModel struct {
	flops, bytes float64
	kernels      float64
	pool         float64
}

// predictor prices m on a GPU of 400 TFLOP/s and 4 TB/s at the profile's efficiencies (0.77
// compute and 0.85 memory, scaled by p), with kernels overlapping nothing: a stand-in for
// train with the same parameters.
func (m rooflineModel) predictor() Predictor {
	return func(p Params) (Prediction, error) {
		compute := m.flops / (400e12 * 0.77 * p.ComputeScale)
		memory := m.bytes / (4e12 * 0.85 * p.MemoryScale)
		return Prediction{
			StepTime:    math.Max(compute, memory) + m.kernels*p.LaunchOverhead,
			MemoryBytes: p.ContextBytes + m.pool,
		}, nil
	}
}

func observe(name string, m rooflineModel, truth Params) Observation {
	p, _ := m.predictor()(truth)
	return Observation{Name: name, StepTime: p.StepTime, MemoryBytes: p.MemoryBytes, Predict: m.predictor()}
}

func TestFitRecoversAndTransfers(t *testing.T) {
	// The real GPU: kernels reach 60% of what the profile thinks, launching costs 12 µs, not 6,
	// and the context is 621 MiB, not 528.
	truth := Params{ComputeScale: 0.6, MemoryScale: 0.9, LaunchOverhead: 12e-6, ContextBytes: 621 << 20}
	prior := Params{ComputeScale: 1, MemoryScale: 1, LaunchOverhead: 6e-6, ContextBytes: 528 << 20}
	resnetB64 := rooflineModel{flops: 64 * 3 * 4.1e9 * 2, bytes: 6e9, kernels: 900, pool: 20e9}
	resnetB128 := rooflineModel{flops: 128 * 3 * 4.1e9 * 2, bytes: 12e9, kernels: 900, pool: 38e9}
	obs := []Observation{observe("resnet50-b64", resnetB64, truth), observe("resnet50-b128", resnetB128, truth)}
	res, err := Fit(obs, FitConfig{Prior: prior})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Residuals {
		if e := math.Abs(r.RelErrAfter()); e > 0.01 {
			t.Errorf("after the fit %s %s is off by %.2f%% (observed %g, predicted %g)", r.Observation, r.Quantity, 100*e, r.Observed, r.After)
		}
		if math.Abs(r.RelErrAfter()) >= math.Abs(r.RelErrBefore()) {
			t.Errorf("%s %s: error %.3f after the fit, %.3f before", r.Observation, r.Quantity, r.RelErrAfter(), r.RelErrBefore())
		}
	}
	// A different model (more kernels, less compute per kernel) is predicted better with the
	// fitted parameters than with the prior.
	other := rooflineModel{flops: 64 * 3 * 0.3e9 * 2, bytes: 3e9, kernels: 1500, pool: 6e9}
	want, _ := other.predictor()(truth)
	before, _ := other.predictor()(prior)
	after, _ := other.predictor()(res.Params)
	errBefore := math.Abs(before.StepTime-want.StepTime) / want.StepTime
	errAfter := math.Abs(after.StepTime-want.StepTime) / want.StepTime
	if errAfter >= errBefore {
		t.Errorf("other model: fitted error %.3f, prior error %.3f: the fit did not transfer", errAfter, errBefore)
	}
	var b strings.Builder
	if err := res.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"compute_scale", "resnet50-b128", "step_time_s", "memory_bytes"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteText output lacks %q:\n%s", want, b.String())
		}
	}
}

func TestFitIsDeterministic(t *testing.T) {
	truth := Params{ComputeScale: 0.7, MemoryScale: 1.1, LaunchOverhead: 9e-6, ContextBytes: 600 << 20}
	prior := Params{ComputeScale: 1, MemoryScale: 1, LaunchOverhead: 6e-6, ContextBytes: 528 << 20}
	m := rooflineModel{flops: 1e14, bytes: 1e10, kernels: 500, pool: 1e9}
	a, err := Fit([]Observation{observe("a", m, truth)}, FitConfig{Prior: prior})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Fit([]Observation{observe("a", m, truth)}, FitConfig{Prior: prior})
	if a.Params != b.Params || a.Evaluations != b.Evaluations {
		t.Errorf("two identical fits differ: %+v (%d runs) and %+v (%d runs)", a.Params, a.Evaluations, b.Params, b.Evaluations)
	}
}

func TestFitBoundsAndErrors(t *testing.T) {
	prior := Params{ComputeScale: 1, MemoryScale: 1, LaunchOverhead: 6e-6, ContextBytes: 528 << 20}
	// An observation no parameter inside the bounds can reach: the fit stops at the bound.
	m := rooflineModel{flops: 1e12, kernels: 10}
	o := observe("slow", m, prior)
	o.StepTime *= 1000
	res, err := Fit([]Observation{o}, FitConfig{Prior: prior})
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := DefaultBounds()
	for i, v := range res.Params.vec() {
		if optional(i) && v == 0 {
			continue // tied to compute_scale, or not fitted
		}
		if v < lo.vec()[i] || v > hi.vec()[i] {
			t.Errorf("fitted %s = %g outside [%g, %g]", paramNames[i], v, lo.vec()[i], hi.vec()[i])
		}
	}
	if _, err := Fit(nil, FitConfig{Prior: prior}); err == nil {
		t.Error("Fit(no observations): no error")
	}
	if _, err := Fit([]Observation{o}, FitConfig{}); err == nil {
		t.Error("Fit(zero prior): no error")
	}
	boom := errors.New("bad scenario")
	bad := Observation{Name: "bad", StepTime: 1, Predict: func(Params) (Prediction, error) { return Prediction{}, boom }}
	if _, err := Fit([]Observation{bad}, FitConfig{Prior: prior}); !errors.Is(err, boom) {
		t.Errorf("Fit(failing predictor) = %v, want it wrapped", err)
	}
}

func TestFitContextObservation(t *testing.T) {
	prior := Params{ComputeScale: 1, MemoryScale: 1, LaunchOverhead: 6e-6, ContextBytes: 528 << 20}
	truth := prior
	truth.ContextBytes = 621 << 20 // PyTorch's context on the H200 here (docs/sources.md)
	m := rooflineModel{flops: 1e14, bytes: 1e10, kernels: 500, pool: 1e9}
	o := observe("torch", m, truth)
	o.MemoryBytes, o.ContextBytes = 0, truth.ContextBytes
	res, err := Fit([]Observation{o}, FitConfig{Prior: prior})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Params.ContextBytes; math.Abs(got-truth.ContextBytes) > 1<<20 {
		t.Errorf("fitted context = %.0f MiB, want %d MiB (observed)", got/(1<<20), 621)
	}
	last := res.Residuals[len(res.Residuals)-1]
	if last.Quantity != "context_bytes" || last.Before != prior.ContextBytes {
		t.Errorf("last residual = %+v, want context_bytes from the prior %g", last, prior.ContextBytes)
	}
}

func TestApplyParams(t *testing.T) {
	base, err := hw.LookupGPU("h200")
	if err != nil {
		t.Fatal(err)
	}
	g := ApplyParams(base, Params{ComputeScale: 1.2, MemoryScale: 0.5, LaunchOverhead: 2e-5, ContextBytes: 600 << 20})
	e, b := g.Efficiency, base.Efficiency
	checks := []struct {
		name      string
		got, want float64
	}{
		{"fp32", e.FP32, math.Min(b.FP32*1.2, 1)},
		{"tf32", e.TF32, math.Min(b.TF32*1.2, 1)},
		{"half", e.Half, math.Min(b.Half*1.2, 1)},
		{"vector", e.Vector, math.Min(b.Vector*1.2, 1)},
		{"memory", e.Memory, b.Memory * 0.5},
		{"pseudo_half (a ratio, unscaled)", e.PseudoHalf, b.PseudoHalf},
		{"launch_overhead", g.LaunchOverhead, 2e-5},
		{"context_bytes", float64(g.ContextBytes), 600 << 20},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("ApplyParams: %s = %g, want %g", c.name, c.got, c.want)
		}
	}
	for k, v := range b.MemoryByKind {
		if got := e.MemoryByKind[k]; math.Abs(got-v*0.5) > 1e-12 {
			t.Errorf("ApplyParams: memory_by_kind.%s = %g, want %g", k, got, v*0.5)
		}
	}
	if base.LaunchOverhead == g.LaunchOverhead || &base.Efficiency.MemoryByKind == &g.Efficiency.MemoryByKind {
		t.Error("ApplyParams changed its argument")
	}
	if err := g.WriteProfile(io.Discard); err != nil {
		t.Errorf("ApplyParams made an invalid profile: %v", err)
	}
}

// convModel is a synthetic job whose FLOPs split into convolutions and other math, each priced
// at its own scaled efficiency (ConvScale, or ComputeScale when it is tied), plus launches.
type convModel struct{ conv, other, kernels float64 }

func (m convModel) predictor() Predictor {
	return func(p Params) (Prediction, error) {
		cs := p.ConvScale
		if cs == 0 {
			cs = p.ComputeScale
		}
		return Prediction{StepTime: m.conv/(400e12*0.31*cs) + m.other/(400e12*0.53*p.ComputeScale) + m.kernels*p.LaunchOverhead}, nil
	}
}

// TestFitConvScale: two models that mix convolutions and other math differently, made by a GPU
// whose convolutions run 1.5x the profile and the rest 0.8x. With the two tied no parameter set
// fits both; with conv_scale free the fit recovers both scales and both step times.
func TestFitConvScale(t *testing.T) {
	truth := Params{ComputeScale: 0.8, MemoryScale: 1, LaunchOverhead: 6e-6, ContextBytes: 528 << 20, ConvScale: 1.5}
	prior := Params{ComputeScale: 1, MemoryScale: 1, LaunchOverhead: 6e-6, ContextBytes: 528 << 20}
	models := []convModel{{conv: 3e12, other: 0.3e12, kernels: 600}, {conv: 1e12, other: 2e12, kernels: 200}}
	var obs []Observation
	for i, m := range models {
		p, _ := m.predictor()(truth)
		obs = append(obs, Observation{Name: fmt.Sprint("model", i), StepTime: p.StepTime, Predict: m.predictor()})
	}
	tied, err := Fit(obs, FitConfig{Prior: prior})
	if err != nil {
		t.Fatal(err)
	}
	prior.ConvScale = 1
	free, err := Fit(obs, FitConfig{Prior: prior})
	if err != nil {
		t.Fatal(err)
	}
	if free.Loss >= tied.Loss {
		t.Errorf("loss with conv_scale free %g, tied %g: want lower", free.Loss, tied.Loss)
	}
	worst := func(r *FitResult) float64 {
		w := 0.0
		for _, res := range r.Residuals {
			w = math.Max(w, math.Abs(res.RelErrAfter()))
		}
		return w
	}
	if w := worst(tied); w < 0.02 {
		t.Errorf("tied fit: worst step-time error %.3f, want the two models out of reach of one scale (> 2%%)", w)
	}
	if w := worst(free); w > 0.005 {
		t.Errorf("conv_scale fit: worst step-time error %.4f, want < 0.5%%", w)
	}
	got := free.Params
	if math.Abs(got.ConvScale/truth.ConvScale-1) > 0.02 || math.Abs(got.ComputeScale/truth.ComputeScale-1) > 0.02 {
		t.Errorf("fitted conv_scale %.3f compute_scale %.3f, want %.2f and %.2f", got.ConvScale, got.ComputeScale, truth.ConvScale, truth.ComputeScale)
	}
	var b strings.Builder
	if err := free.WriteText(&b); err != nil || !strings.Contains(b.String(), "conv_scale") {
		t.Errorf("WriteText of a conv_scale fit lacks conv_scale (%v):\n%s", err, b.String())
	}
	b.Reset()
	if err := tied.WriteText(&b); err != nil || strings.Contains(b.String(), "conv_scale") {
		t.Errorf("WriteText of a tied fit prints conv_scale (%v):\n%s", err, b.String())
	}
}

func TestApplyParamsConvScale(t *testing.T) {
	base, err := hw.LookupGPU("h200")
	if err != nil {
		t.Fatal(err)
	}
	b := base.Efficiency
	for _, tc := range []struct {
		p                Params
		convTF32, tf32   float64
		convFP32, vector float64
	}{
		{Params{ComputeScale: 1.2, MemoryScale: 1, LaunchOverhead: 6e-6, ContextBytes: 1 << 29}, // tied
			math.Min(b.ConvTF32*1.2, 1), math.Min(b.TF32*1.2, 1), math.Min(b.ConvFP32*1.2, 1), math.Min(b.Vector*1.2, 1)},
		{Params{ComputeScale: 1.2, MemoryScale: 1, LaunchOverhead: 6e-6, ContextBytes: 1 << 29, ConvScale: 0.5},
			b.ConvTF32 * 0.5, math.Min(b.TF32*1.2, 1), b.ConvFP32 * 0.5, math.Min(b.Vector*1.2, 1)},
	} {
		e := ApplyParams(base, tc.p).Efficiency
		got := []float64{e.ConvTF32, e.TF32, e.ConvFP32, e.Vector}
		want := []float64{tc.convTF32, tc.tf32, tc.convFP32, tc.vector}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Errorf("ApplyParams(%+v): [conv_tf32 tf32 conv_fp32 vector] = %v, want %v", tc.p, got, want)
				break
			}
		}
	}
}
