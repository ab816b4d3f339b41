package calibrate

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/calibrate/xprof"
	"github.com/gpusim/gpusim/hw"
)

// groupModel is a synthetic job seen by a profile: per step, convolution FLOPs, GEMM FLOPs and
// memory-bound bytes, in kernels of each group, each kernel charged the GPU's gap, and the host
// time between the kernels (launch_overhead_s per kernel).
type groupModel struct {
	conv, gemm, bytes  float64
	convK, gemmK, memK float64
}

const testGap = 1e-6

func (m groupModel) predict(p Params) Prediction {
	g := map[string]float64{
		xprof.GroupConv:   m.conv/(400e12*p["conv_tf32"]) + m.convK*testGap,
		xprof.GroupMatMul: m.gemm/(400e12*p["tf32"]) + m.gemmK*testGap,
		xprof.GroupMemory: m.bytes/(4e12*p["memory"]) + m.memK*testGap,
	}
	step := (m.convK + m.gemmK + m.memK) * p[ParamLaunchOverhead]
	for _, v := range g {
		step += v
	}
	return Prediction{StepTime: step, Groups: g}
}

// summary is what a profile of m records on the real GPU truth: each group's kernels without
// the gap (a traced duration does not hold it), and the marked step.
func (m groupModel) summary(truth Params) xprof.StepSummary {
	p := m.predict(truth)
	s := xprof.StepSummary{Marker: "train", Steps: 3, StepTime: p.StepTime, Groups: map[string]float64{}, Kernels: map[string]float64{
		xprof.GroupConv: m.convK, xprof.GroupMatMul: m.gemmK, xprof.GroupMemory: m.memK}}
	for g, v := range p.Groups {
		s.Groups[g] = v - s.Kernels[g]*testGap
	}
	return s
}

// Two profiles identify what their step times alone cannot: the convolutions', the GEMMs' and
// the memory-bound kernels' efficiencies and the host's cost per kernel, each from its own
// group (within 5%: the priors pull a little), so a third job (all GEMMs, which neither profile's step is made of) is predicted. The
// step times alone (two observations) move at most two directions and leave the third job
// off.
func TestProfileFitIdentifiesGroups(t *testing.T) {
	truth := Params{"conv_tf32": 0.35, "tf32": 0.6, "memory": 0.7, ParamLaunchOverhead: 3e-6}
	ps := []Param{
		{Name: "conv_tf32", Prior: 0.5, Width: 0.5, Max: 1},
		{Name: "tf32", Prior: 0.8, Width: 0.5, Max: 1},
		{Name: "memory", Prior: 0.88, Width: 0.5, Max: 1},
		{Name: ParamLaunchOverhead, Prior: 6e-6, Width: 1},
	}
	resnet := groupModel{conv: 5e12, gemm: 0.6e12, bytes: 60e9, convK: 228, gemmK: 40, memK: 1100}
	vgg := groupModel{conv: 12e12, gemm: 1.5e12, bytes: 40e9, convK: 55, gemmK: 60, memK: 160}
	bert := groupModel{gemm: 8e12, bytes: 30e9, gemmK: 400, memK: 900}
	g := hw.GPU{Efficiency: hw.Efficiency{KernelGap: testGap}}
	pred := func(m groupModel) Predictor {
		return MemoPredictor(func(p Params) (Prediction, error) { return m.predict(p), nil })
	}
	heldOut := Observation{Name: "bert", StepTime: bert.predict(truth).StepTime, HoldOut: true, Predict: pred(bert)}

	var obs []Observation
	obs = append(obs, ProfileObservations("resnet50.xplane.pb", resnet.summary(truth), g, true, false, pred(resnet))...)
	obs = append(obs, ProfileObservations("vgg16.xplane.pb", vgg.summary(truth), g, true, false, pred(vgg))...)
	if len(obs) != 8 {
		t.Fatalf("%d observations from two profiles, want 8 (step, conv, matmul, memory-bound each)", len(obs))
	}
	res, err := Fit(append(obs, heldOut), FitConfig{Params: ps})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Table {
		if !p.Identified || math.Abs(p.Fitted/truth[p.Name]-1) > 0.05 {
			t.Errorf("%s: fitted %.4g (identified %v), truth %.4g: %s", p.Name, p.Fitted, p.Identified, truth[p.Name], p.Note)
		}
	}
	if e := res.HoldOut[0].RelErrAfter(); math.Abs(e) > 0.02 {
		t.Errorf("held-out job after the profile fit: %+.1f%%, want within 2%%", 100*e)
	}

	steps := []Observation{
		{Name: "resnet50", StepTime: resnet.predict(truth).StepTime, Predict: pred(resnet)},
		{Name: "vgg16", StepTime: vgg.predict(truth).StepTime, Predict: pred(vgg)},
		heldOut,
	}
	sres, err := Fit(steps, FitConfig{Params: ps})
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, p := range sres.Table {
		if p.Identified {
			moved++
		}
	}
	if moved > 2 {
		t.Errorf("a fit of two step times moved %d parameters", moved)
	}
	if e, pe := math.Abs(sres.HoldOut[0].RelErrAfter()), math.Abs(res.HoldOut[0].RelErrAfter()); e <= pe {
		t.Errorf("held-out job: step-time fit %.2f%%, profile fit %.2f%%: the profile should predict it better", 100*e, 100*pe)
	}
}

// A group under MinGroupShare of the step is shown, not fitted; the table's host row is the
// step less the groups.
func TestProfileObservationsAndTable(t *testing.T) {
	s := xprof.StepSummary{Marker: "train", Steps: 3, StepTime: 40e-3,
		Groups:    map[string]float64{xprof.GroupConv: 17e-3, xprof.GroupMatMul: 30e-6, xprof.GroupMemory: 18e-3},
		Kernels:   map[string]float64{xprof.GroupConv: 228, xprof.GroupMatMul: 3, xprof.GroupMemory: 1000},
		KindTimes: map[string]float64{hw.KindConv: 17e-3, hw.KindMatMul: 30e-6, hw.KindFusion: 17.5e-3, hw.KindCopy: 0.5e-3}}
	g := hw.GPU{Efficiency: hw.Efficiency{KernelGap: 1e-6}}
	obs := ProfileObservations("r50", s, g, true, false, nil)
	var names []string
	for _, o := range obs {
		names = append(names, o.Name)
	}
	if got, want := strings.Join(names, ","), "r50 step,r50 conv,r50 memory-bound"; got != want {
		t.Errorf("observations %s, want %s", got, want)
	}
	if got, want := obs[2].Groups[xprof.GroupMemory], 18e-3+1000e-6; math.Abs(got-want) > 1e-12 {
		t.Errorf("memory-bound observed %g, want the kernels plus a gap each, %g", got, want)
	}
	sim := Prediction{StepTime: 41e-3, Groups: map[string]float64{xprof.GroupConv: 17.5e-3, xprof.GroupMatMul: 25e-6, xprof.GroupMemory: 20e-3},
		Kinds: map[string]float64{hw.KindConv: 17.5e-3, hw.KindNorm: 15e-3, hw.KindElementwise: 5e-3, hw.KindMatMul: 25e-6, "launch": 3e-3}}
	tab := NewProfileTable("r50", s, g, true, false, sim, sim)
	var buf bytes.Buffer
	if err := tab.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		`r50: 3 steps between "train" markers, kernels of GPU 0, per step`,
		"  conv               228.0     17.23ms     17.50ms    +1.6%",
		"not fitted: under 2.6% of the step",
		"  host and idle                3.739ms     3.475ms    -7.1%",
		"  step                         40.00ms     41.00ms    +2.5%",
		"measured by kind: fusion 17.50ms, conv 17.00ms, copy 500.0µs, matmul 30.00µs",
		"simulated by kind (after): conv 17.50ms, norm 15.00ms, elementwise 5.000ms, matmul 25.00µs\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestMemoPredictor(t *testing.T) {
	n := 0
	p := MemoPredictor(func(v Params) (Prediction, error) { n++; return Prediction{StepTime: v["x"]}, nil })
	for _, x := range []float64{1, 1, 2, 2, 1} {
		if got, _ := p(Params{"x": x}); got.StepTime != x {
			t.Errorf("p(x=%g) = %g", x, got.StepTime)
		}
	}
	if n != 3 {
		t.Errorf("%d runs for x = 1, 1, 2, 2, 1; want 3 (a repeat asks once)", n)
	}
}
