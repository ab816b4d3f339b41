package kernelfit

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gpusim/gpusim/hw"

	"gonum.org/v1/gonum/optimize"
)

// HarnessHost is the host time per op of the program that made a measurement, by phase. The
// H200 data was taken with PyTorch eager, whose Python dispatch costs far more per op than a
// kernel launch; it is a property of that harness, not of the GPU, so the fit keeps it apart
// from GPU.LaunchOverhead.
type HarnessHost struct {
	Forward, Backward, Optimizer float64
	// NormHalf multiplies the time of half-precision BatchNorm: PyTorch runs it with its own
	// channels-last kernels (native_batch_norm), measured slower than the cuDNN kernels it
	// uses in float32 and that TF uses in every precision.
	NormHalf float64
}

// harnessWork applies the harness's quirks to a Work's device time.
func (h HarnessHost) scale(w hw.Work) float64 {
	if w.Kind == hw.KindNorm && (w.DType == hw.Float16 || w.DType == hw.BFloat16) && h.NormHalf > 0 {
		return h.NormHalf
	}
	return 1
}

// Row compares one measured config with the model.
type Row struct {
	Config
	MeasuredStep, PredictedStep float64 // seconds per step
	// MeasuredBusy is steps.csv's profiler_busy_s and PredictedBusy the model's device time
	// with the KernelGap between kernels. profiler_busy_s sums every CUDA-side profiler
	// event, annotation ranges included (Optimizer.step#AdamW.step spans 36.6 ms of
	// BERT-base bf16 batch 16, host-bound idle and all), so it over-counts host-bound steps.
	MeasuredBusy, PredictedBusy float64
	// MeasuredKernels is the summed kernel time of one step without annotations: the
	// profiler's self device time of every aten op (kernels.csv; profiler_busy_s without
	// it). PredictedKernels is the model's device time without the KernelGap idle between
	// kernels, which kernel durations do not hold.
	MeasuredKernels, PredictedKernels float64
}

// Report is the outcome of Fit or Evaluate.
type Report struct {
	Efficiency hw.Efficiency
	Host       HarnessHost
	Rows       []Row
	// StepMAE and BusyMAE are the mean absolute relative errors of the predicted step time and
	// kernel time; MicroMAE that of the micro-benchmarks used (those over 50 us).
	StepMAE, BusyMAE, MicroMAE float64
	// KernelMAE is that of the summed kernel time (MeasuredKernels, no annotations).
	KernelMAE float64
	// OpMAE is the mean absolute relative error of the device time per profiled aten op and
	// config (the kernel-level measurements, OpGroups of them, see opGroups); OpWeightedMAE
	// weighs each by its measured time.
	OpMAE, OpWeightedMAE float64
	OpGroups             int
	// Evaluations counts objective evaluations (Fit only).
	Evaluations int
}

// microMin is the shortest micro-benchmark used: shorter ones are bound by the harness's host
// overhead (the H200 data shows ~20 us per timed call whatever the size).
const microMin = 50e-6

type countedWork struct {
	w hw.Work
	n float64
}

type fitData struct {
	cfgs []Config
	uniq [][]countedWork // per config, identical Works merged
	meas []MeasuredStep
	// kern is each config's measured kernel time (Row.MeasuredBusy).
	kern []float64
	// group holds each config's profiled time per kind group (conv, matmul, norm, and
	// "rest" for everything else).
	group []map[string]float64
	micro []struct {
		w hw.Work
		t float64
	}
	// ops holds the kernel-level measurements: each config's profiled aten ops matched with
	// their logged calls (opGroups).
	ops []opGroup
}

func prepare(m *Measured) (*fitData, error) {
	d := &fitData{}
	for _, c := range m.Configs() {
		s, _ := m.Step(c)
		idx := map[hw.Work]int{}
		var u []countedWork
		for _, w := range m.Works(c) {
			if i, ok := idx[w]; ok {
				u[i].n++
				continue
			}
			idx[w] = len(u)
			u = append(u, countedWork{w, 1})
		}
		d.cfgs = append(d.cfgs, c)
		d.uniq = append(d.uniq, u)
		d.meas = append(d.meas, s)
		gr := map[string]float64{}
		var known float64
		for op, t := range m.KernelTime[c] {
			if k := kernelGroup(op); k != "" {
				gr[k] += t
				known += t
			}
		}
		gr["rest"] = s.BusyS - known
		kern := s.BusyS
		if known > 0 {
			kern = 0
			for _, t := range m.KernelTime[c] {
				kern += t
			}
		}
		d.kern = append(d.kern, kern)
		d.group = append(d.group, gr)
		d.ops = append(d.ops, opGroups(m, c, len(d.cfgs)-1)...)
	}
	if len(d.cfgs) == 0 {
		return nil, fmt.Errorf("fit: no config has both a step time and an op list")
	}
	for _, r := range m.Micro {
		w, ok := microWork(r)
		// Grouped (depthwise) convolutions are left out: TF runs them with its own
		// DepthwiseConv2dNative kernels, and cuDNN's measured here are an outlier.
		if ok && r.Seconds >= microMin && !(r.Bench == "conv" && !strings.HasSuffix(r.Shape, "_g1")) {
			d.micro = append(d.micro, struct {
				w hw.Work
				t float64
			}{w, r.Seconds})
		}
	}
	return d, nil
}

// microWork maps a micro-benchmark row to a Work.
func microWork(r MeasuredMicro) (hw.Work, bool) {
	dt := map[string]string{"fp32": hw.Float32, "tf32": hw.Float32, "bf16": hw.BFloat16, "fp16": hw.Float16}[r.Prec]
	if dt == "" {
		return hw.Work{}, false
	}
	kind := map[string]string{"matmul": hw.KindMatMul, "conv": hw.KindConv, "add": hw.KindElementwise,
		"relu": hw.KindElementwise, "mul_": hw.KindElementwise, "copy": hw.KindCopy, "cast": hw.KindCast,
		"sum": hw.KindReduction, "batchnorm": hw.KindNorm, "layernorm": hw.KindNorm}[r.Bench]
	if kind == "" {
		return hw.Work{}, false
	}
	return hw.Work{Kind: kind, FLOPs: r.FLOPs, Bytes: r.Bytes, Kernels: 1, DType: dt, TF32: r.Prec == "tf32"}, true
}

func (d *fitData) busy(g hw.GPU, h HarnessHost, i int) float64 {
	var t float64
	for _, cw := range d.uniq[i] {
		c, _ := g.Cost(cw.w)
		t += cw.n * c.Exec * h.scale(cw.w)
	}
	return t
}

// kernels is busy without the KernelGap idle between kernels.
func (d *fitData) kernels(g hw.GPU, h HarnessHost, i int) float64 {
	var t float64
	for _, cw := range d.uniq[i] {
		c, _ := g.Cost(cw.w)
		t += cw.n * (c.Exec - float64(max(cw.w.Kernels, 1))*g.Efficiency.KernelGap) * h.scale(cw.w)
	}
	return t
}

// groups returns the predicted time per kind group of config i.
func (d *fitData) groups(g hw.GPU, h HarnessHost, i int) map[string]float64 {
	gr := map[string]float64{}
	for _, cw := range d.uniq[i] {
		c, _ := g.Cost(cw.w)
		k := cw.w.Kind
		if k != hw.KindConv && k != hw.KindMatMul && k != hw.KindNorm {
			k = "rest"
		}
		gr[k] += cw.n * c.Exec * h.scale(cw.w)
	}
	return gr
}

// Evaluate compares g's predictions with the measurements, the harness taking host per op.
func Evaluate(g hw.GPU, m *Measured, host HarnessHost) (Report, error) {
	d, err := prepare(m)
	if err != nil {
		return Report{}, err
	}
	return d.evaluate(g, m, host), nil
}

func (d *fitData) evaluate(g hw.GPU, m *Measured, host HarnessHost) Report {
	r := Report{Efficiency: g.Efficiency, Host: host}
	for i, c := range d.cfgs {
		pb := d.busy(g, host, i)
		pk := d.kernels(g, host, i)
		ps := harnessStep(g, m, c, host)
		r.Rows = append(r.Rows, Row{Config: c, MeasuredStep: d.meas[i].StepS, PredictedStep: ps,
			MeasuredBusy: d.meas[i].BusyS, PredictedBusy: pb, MeasuredKernels: d.kern[i], PredictedKernels: pk})
		r.StepMAE += math.Abs(ps/d.meas[i].StepS - 1)
		r.BusyMAE += math.Abs(pb/d.meas[i].BusyS - 1)
		r.KernelMAE += math.Abs(pk/d.kern[i] - 1)
	}
	r.StepMAE /= float64(len(d.cfgs))
	r.BusyMAE /= float64(len(d.cfgs))
	r.KernelMAE /= float64(len(d.cfgs))
	for _, mm := range d.micro {
		c, _ := g.Cost(mm.w)
		r.MicroMAE += math.Abs(c.Exec/mm.t - 1)
	}
	if len(d.micro) > 0 {
		r.MicroMAE /= float64(len(d.micro))
	}
	var tw float64
	for k := range d.ops {
		o := &d.ops[k]
		e := math.Abs(o.predict(g, host)/o.meas - 1)
		r.OpMAE += e
		r.OpWeightedMAE += e * o.meas
		tw += o.meas
	}
	if r.OpGroups = len(d.ops); r.OpGroups > 0 {
		r.OpMAE /= float64(r.OpGroups)
		r.OpWeightedMAE /= tw
	}
	return r
}

// harnessStep replays a config's op list on a Stream with the harness's host time per op.
func harnessStep(g hw.GPU, m *Measured, c Config, host HarnessHost) float64 {
	s := g.NewStream()
	for _, o := range m.Ops[c] {
		w := o.Work(c.Prec)
		if f := host.scale(w); f != 1 {
			// Stretch the op by the harness factor: more bytes at the same rate.
			w.Bytes *= f
			w.FLOPs *= f
		}
		switch o.Phase {
		case "forward":
			w.Host = host.Forward
		case "backward":
			w.Host = host.Backward
		default:
			w.Host = host.Optimizer
		}
		s.Enqueue(w)
	}
	return s.Breakdown().Total
}

// fitKinds are the memory-bound kinds Ops gives a memory efficiency of their own
// (Efficiency.MemoryByKind); element-wise ops, casts and XLA fusions keep Efficiency.Memory.
var fitKinds = []string{hw.KindOptimizer, hw.KindReduction, hw.KindPool, hw.KindEmbedding, hw.KindCopy}

// Level is what the efficiency fit (the first stage of Fit) compares with the model.
type Level string

// Levels of Fit.
const (
	// Ops fits on kernel-level data: each config's profiled device time per aten
	// op (kernels.csv), matched by name and call count with the logged ops that ran it, plus
	// the micro-benchmarks. Op sizes differ within and across models (a 2048x768x768 GEMM
	// next to a 65536x768x3072 one), which separates the per-kernel ramps from the
	// asymptotic efficiencies.
	Ops Level = "ops"
	// Groups fits on each config's kernel time summed per kind group (conv, matmul,
	// norm, rest), plus the micro-benchmarks: the fit before Ops.
	Groups Level = "groups"
	// OpsBase fits Ops's data with Groups's parameters only: one
	// compute ramp, the streaming and BatchNorm memory efficiencies.
	OpsBase Level = "ops-base"
)

// Fit fits g's efficiency factors to the measured kernel times at level (Groups: each
// config's summed kernel time per kind group from the profiler, what hw.DefaultEfficiency
// holds; Ops or OpsBase: per profiled op), with the micro-benchmarks over 50 us, then the
// harness's host time per op to the step times, minimising squared log errors with
// Nelder-Mead (gonum/optimize).
func Fit(g hw.GPU, m *Measured, level Level) (Report, error) {
	if level != Ops && level != Groups && level != OpsBase {
		return Report{}, fmt.Errorf("fit: unknown level %q (want %q, %q or %q)", level, Ops, OpsBase, Groups)
	}
	d, err := prepare(m)
	if err != nil {
		return Report{}, err
	}
	f := &fitter{g: g, m: m, d: d, byOps: level != Groups}
	res, err := minimizeRestarted(f.deviceLoss, startPoint(level))
	if err != nil {
		return Report{}, err
	}
	fitted, fh := f.apply(res.X)
	host, err := f.fitHost(fitted, fh)
	if err != nil {
		return Report{}, err
	}
	rep := d.evaluate(fitted, m, host)
	rep.Evaluations = f.evals
	return rep, nil
}

// logistic maps a free parameter onto (0, 1), the range of an efficiency; logit inverts it.
func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func logit(f float64) float64 { return math.Log(f / (1 - f)) }

// startPoint is the device fit's fixed starting point (not g's current factors, so the fit
// does not depend on them), in fitter.apply's parameter order.
func startPoint(level Level) []float64 {
	x0 := []float64{logit(0.7), logit(0.6), logit(0.6), logit(0.6 / 2), logit(0.6),
		logit(0.6), logit(0.7), logit(0.5), math.Log(5e-6), math.Log(5e-6), 0}
	// The kernel-level data also prices each memory-bound kind on its own (fitKinds): a
	// gather's scatter-add gradient or a max-pool gradient streams far below a vector add.
	if level == Ops {
		for range fitKinds {
			x0 = append(x0, logit(0.6))
		}
		x0 = append(x0, math.Log(5e-6)) // ConvRamp
	}
	return x0
}

// fitter holds what Fit's objectives read, and counts their evaluations.
type fitter struct {
	g     hw.GPU
	m     *Measured
	d     *fitData
	byOps bool
	evals int
}

// apply is g with the efficiencies of parameters x, and the harness's half-precision norm
// host time.
func (f *fitter) apply(x []float64) (hw.GPU, HarnessHost) {
	h := f.g
	e := f.g.Efficiency
	e.FP32, e.TF32, e.Half = logistic(x[0]), logistic(x[1]), logistic(x[2])
	e.ConvFP32, e.ConvTF32, e.ConvHalf = 2*logistic(x[3]), logistic(x[4]), logistic(x[5])
	e.Memory = logistic(x[6])
	e.MemoryByKind = map[string]float64{hw.KindNorm: logistic(x[7])}
	for j, k := range fitKinds {
		if 11+j < len(x) {
			e.MemoryByKind[k] = logistic(x[11+j])
		}
	}
	if j := 11 + len(fitKinds); j < len(x) {
		e.ConvRamp = math.Exp(x[j])
	}
	e.MatrixRampOnly = f.byOps
	e.ComputeRamp, e.MemoryRamp = math.Exp(x[8]), math.Exp(x[9])
	h.Efficiency = e
	return h, HarnessHost{NormHalf: math.Exp(x[10])}
}

// deviceLoss is the squared log error of the kernel times predicted with parameters x: per
// op (byOps) or per config's kind group, plus the micro-benchmarks.
func (f *fitter) deviceLoss(x []float64) float64 {
	f.evals++
	g, hh := f.apply(x)
	d := f.d
	var s float64
	var n int
	if f.byOps {
		for k := range d.ops {
			o := &d.ops[k]
			l := math.Log(o.predict(g, hh) / o.meas)
			s += l * l
			n++
		}
	} else {
		for i := range d.cfgs {
			pg := d.groups(g, hh, i)
			for k, mt := range d.group[i] {
				// Groups under half a millisecond are dominated by a handful of tiny ops.
				if mt < 0.5e-3 || pg[k] <= 0 {
					continue
				}
				l := math.Log(pg[k] / mt)
				s += l * l
				n++
			}
		}
	}
	// Micro-benchmarks weighted to count half as much as the profiled groups in total.
	var sm float64
	for _, mm := range d.micro {
		c, _ := g.Cost(mm.w)
		l := math.Log(c.Exec / mm.t)
		sm += l * l
	}
	if len(d.micro) > 0 {
		s += 0.5 * sm * float64(n) / float64(len(d.micro))
	}
	return s
}

// minimizeRestarted runs Nelder-Mead restarted from its own result until it stops improving
// (at most 4 runs): a fresh simplex escapes the collapsed one a single run can end with.
func minimizeRestarted(obj func([]float64) float64, x0 []float64) (*optimize.Result, error) {
	var res *optimize.Result
	for run := 0; run < 4; run++ {
		r, err := optimize.Minimize(optimize.Problem{Func: obj}, x0,
			&optimize.Settings{FuncEvaluations: 8000}, &optimize.NelderMead{})
		if err != nil && r == nil {
			return nil, fmt.Errorf("fit efficiency: %w", err)
		}
		if res != nil && r.F >= res.F*(1-1e-4) {
			break
		}
		res = r
		x0 = r.X
	}
	return res, nil
}

// fitHost fits the harness's host time per op by phase to the step times, given the fitted
// device model and its half-precision norm host time fh.
func (f *fitter) fitHost(fitted hw.GPU, fh HarnessHost) (HarnessHost, error) {
	hx0 := []float64{math.Log(20e-6), math.Log(8e-6), math.Log(8e-6)}
	hostOf := func(x []float64) HarnessHost {
		return HarnessHost{Forward: math.Exp(x[0]), Backward: math.Exp(x[1]), Optimizer: math.Exp(x[2]), NormHalf: fh.NormHalf}
	}
	hobj := func(x []float64) float64 {
		f.evals++
		h := hostOf(x)
		var s float64
		for i, c := range f.d.cfgs {
			l := math.Log(harnessStep(fitted, f.m, c, h) / f.d.meas[i].StepS)
			s += l * l
		}
		return s
	}
	hres, err := optimize.Minimize(optimize.Problem{Func: hobj}, hx0,
		&optimize.Settings{FuncEvaluations: 600}, &optimize.NelderMead{})
	if err != nil && hres == nil {
		return HarnessHost{}, fmt.Errorf("fit host: %w", err)
	}
	return hostOf(hres.X), nil
}

// SortRows orders rows by model, precision and batch.
func (r *Report) SortRows() {
	sort.Slice(r.Rows, func(i, j int) bool {
		a, b := r.Rows[i], r.Rows[j]
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		if a.Prec != b.Prec {
			return a.Prec < b.Prec
		}
		return a.Batch < b.Batch
	})
}

// DefaultHarnessHost is the PyTorch-eager host time per op fitted to the H200 step times
// (`go run ./tools/h200/fit`).
func DefaultHarnessHost() HarnessHost {
	return HarnessHost{Forward: 85.3e-6, Backward: 9.04e-6, Optimizer: 2.94e-6, NormHalf: 1.107}
}

// OpsBaseEfficiency returns the factors fitted on the H200's per-kernel times
// (`go run ./tools/h200/fit -level ops-base`, OpsBase): each config's profiled
// device time per aten op (testdata/h200 kernels.csv, annotation ranges left out) matched by
// name and call count with the logged ops that ran it, 507 (config, op) groups, plus the
// micro-benchmarks over 50 us, with ComputeRamp charged to matrix kernels only
// (MatrixRampOnly). The kernel-level data separates the ramps from the efficiencies that
// DefaultEfficiency's per-config sums cannot: it prices a 2048x768x768 BF16 GEMM (8.4 us per
// kernel measured) and a small element-wise kernel (1.3-6 us) where DefaultEfficiency charges
// 17.5 us and 15 us. It is not the default: through train.Run its cheaper kernels move the
// H200 step times further below PyTorch eager's (docs/speed.md, "Refit on per-kernel
// times"). KernelGap, PseudoHalf, Vector and PCIe are DefaultEfficiency's.
func OpsBaseEfficiency() hw.Efficiency {
	e := hw.DefaultEfficiency()
	e.FP32, e.TF32, e.Half = 0.6826, 0.5230, 0.5159
	e.ConvFP32, e.ConvTF32, e.ConvHalf = 0.6291, 0.3073, 0.6021
	e.Memory = 0.6105
	e.MemoryByKind = map[string]float64{hw.KindNorm: 0.3144}
	e.ComputeRamp, e.MemoryRamp = 8.44e-6, 1.0e-6
	e.MatrixRampOnly = true
	return e
}

// OpsBaseHarnessHost is the PyTorch-eager host time per op fitted to the H200 step times
// with OpsBaseEfficiency (`go run ./tools/h200/fit -level ops-base`).
func OpsBaseHarnessHost() HarnessHost {
	// The fitted backward host time is about 0 (1e-17 s); it is kept at 1 ns, as 0 means the
	// launch overhead in Work.Host.
	return HarnessHost{Forward: 76.4e-6, Backward: 1e-9, Optimizer: 37.1e-6, NormHalf: 1.134}
}
