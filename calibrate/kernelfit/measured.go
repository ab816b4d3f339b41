package kernelfit

import (
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/hw"

	"github.com/gpusim/gpusim/internal/limitread"
)

// Measured is a set of measurements on one GPU in the format tools/h200/measure.py writes
// (testdata/h200 at the repository root holds the H200's): training-step times and memory
// per (model, precision, batch), the op list of one step per config, and micro-benchmarks.
type Measured struct {
	Steps []MeasuredStep
	// Ops holds each config's op list, in execution order.
	Ops   map[Config][]MeasuredOp
	Micro []MeasuredMicro
	// KernelTime is each config's device time per aten op name ("cudnn_convolution") from
	// the profiler (kernels.csv), seconds per step.
	KernelTime map[Config]map[string]float64
	// KernelCalls is each config's call count per aten op name (kernels.csv "count").
	KernelCalls map[Config]map[string]int
}

// Config names one measured training configuration. Prec is "fp32" (TF32 off), "tf32",
// "bf16" or "fp16" (autocast, fp16 with a gradient scaler).
type Config struct {
	Model, Prec string
	Batch       int
}

func (c Config) String() string { return fmt.Sprintf("%s/%s/b%d", c.Model, c.Prec, c.Batch) }

// MeasuredStep is one row of steps.csv.
type MeasuredStep struct {
	Config
	// StepS is the median step time (CUDA events around the step, the host synchronised after
	// each step); BusyS is the summed kernel time of one profiled step.
	StepS, BusyS float64
	// Kernels is the profiler's kernel count of one step; Ops the logged op count.
	Kernels, Ops int
	Params       int64
	// WeightsBytes is the parameters' size; BaseBytes the allocated bytes before a step
	// (weights plus optimizer state, gradients freed); PeakBytes the peak during a step.
	WeightsBytes, BaseBytes, PeakBytes int64
}

// ActivationBytes is the step's peak above the persistent state: activations, gradients and
// workspace.
func (s MeasuredStep) ActivationBytes() int64 { return s.PeakBytes - s.BaseBytes }

// MeasuredOp is one aten op of a logged step (ops.csv.gz).
type MeasuredOp struct {
	Phase, Op, Kind, DType string
	FLOPs, Bytes           float64
}

// MeasuredMicro is one micro-benchmark row (micro.csv).
type MeasuredMicro struct {
	Bench, Prec, Shape    string
	FLOPs, Bytes, Seconds float64
}

// Work maps a logged op to the cost model's Work under the config's precision: TF32 is on for
// "tf32" configs, integer and boolean ops are priced as float32.
func (o MeasuredOp) Work(prec string) hw.Work {
	dt := o.DType
	switch dt {
	case hw.Float32, hw.Float16, hw.BFloat16:
	default:
		dt = hw.Float32
	}
	return hw.Work{Kind: o.Kind, FLOPs: o.FLOPs, Bytes: o.Bytes, Kernels: 1, DType: dt, TF32: prec == "tf32"}
}

// Works returns the Works of one config's logged step.
func (m *Measured) Works(c Config) []hw.Work {
	ops := m.Ops[c]
	w := make([]hw.Work, len(ops))
	for i, o := range ops {
		w[i] = o.Work(c.Prec)
	}
	return w
}

// Step returns the step row of c.
func (m *Measured) Step(c Config) (MeasuredStep, bool) {
	for _, s := range m.Steps {
		if s.Config == c {
			return s, true
		}
	}
	return MeasuredStep{}, false
}

// ReadMeasured reads steps.csv, ops.csv.gz (or ops.csv) and micro.csv from dir.
func ReadMeasured(dir string) (*Measured, error) {
	m := &Measured{Ops: map[Config][]MeasuredOp{}, KernelTime: map[Config]map[string]float64{},
		KernelCalls: map[Config]map[string]int{}}
	if err := readCSV(filepath.Join(dir, "steps.csv"), func(get func(string) (string, error), line int) error {
		var s MeasuredStep
		var err error
		p := &parser{get: get}
		s.Model, s.Prec = p.str("model"), p.str("prec")
		s.Batch = p.int("batch")
		s.StepS, s.BusyS = p.float("step_s"), p.floatOpt("profiler_busy_s")
		s.Kernels, s.Ops = p.intOpt("profiler_kernels"), p.intOpt("ops")
		s.Params = int64(p.int("params"))
		s.WeightsBytes, s.BaseBytes, s.PeakBytes = int64(p.int("weights_bytes")), int64(p.int("base_bytes")), int64(p.int("peak_bytes"))
		if err = p.err; err != nil {
			return err
		}
		m.Steps = append(m.Steps, s)
		return nil
	}); err != nil {
		return nil, err
	}
	opsPath := filepath.Join(dir, "ops.csv.gz")
	if _, err := os.Stat(opsPath); err != nil {
		opsPath = filepath.Join(dir, "ops.csv")
	}
	if err := readCSV(opsPath, func(get func(string) (string, error), line int) error {
		p := &parser{get: get}
		c := Config{Model: p.str("model"), Prec: p.str("prec"), Batch: p.int("batch")}
		o := MeasuredOp{Phase: p.str("phase"), Op: p.str("op"), Kind: p.str("kind"), DType: p.str("dtype"),
			FLOPs: p.float("flops"), Bytes: p.float("bytes")}
		if p.err != nil {
			return p.err
		}
		if !slices.Contains(hw.Kinds, o.Kind) {
			return fmt.Errorf("kind: unknown work kind %q", o.Kind)
		}
		m.Ops[c] = append(m.Ops[c], o)
		return nil
	}); err != nil {
		return nil, err
	}
	if err := readCSV(filepath.Join(dir, "micro.csv"), func(get func(string) (string, error), line int) error {
		p := &parser{get: get}
		r := MeasuredMicro{Bench: p.str("bench"), Prec: p.str("prec"), Shape: p.str("shape"),
			FLOPs: p.float("flops"), Bytes: p.float("bytes"), Seconds: p.float("seconds")}
		if p.err != nil {
			return p.err
		}
		m.Micro = append(m.Micro, r)
		return nil
	}); err != nil {
		return nil, err
	}
	kpath := filepath.Join(dir, "kernels.csv")
	if _, err := os.Stat(kpath); err == nil {
		if err := readCSV(kpath, func(get func(string) (string, error), line int) error {
			p := &parser{get: get}
			c := Config{Model: p.str("model"), Prec: p.str("prec"), Batch: p.int("batch")}
			op, us, n := p.str("op"), p.float("self_device_us"), p.int("count")
			if p.err != nil {
				return p.err
			}
			name, ok := strings.CutPrefix(op, "aten::")
			if !ok {
				return nil // kernel names and annotations repeat the aten ops' time
			}
			if m.KernelTime[c] == nil {
				m.KernelTime[c] = map[string]float64{}
			}
			m.KernelTime[c][name] += us * 1e-6
			if m.KernelCalls[c] == nil {
				m.KernelCalls[c] = map[string]int{}
			}
			m.KernelCalls[c][name] += n
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// kernelGroup maps a profiled aten op name to the Work kind it is compared with; "" for ops
// whose kind depends on context (add_ is element-wise or optimizer).
func kernelGroup(op string) string {
	switch op {
	case "cudnn_convolution", "convolution_backward", "convolution", "_convolution":
		return hw.KindConv
	case "mm", "addmm", "bmm", "baddbmm":
		return hw.KindMatMul
	case "cudnn_batch_norm", "cudnn_batch_norm_backward", "native_batch_norm", "native_batch_norm_backward",
		"native_layer_norm", "native_layer_norm_backward":
		return hw.KindNorm
	}
	return ""
}

// Configs returns the configs that have both a step row and an op list, sorted.
func (m *Measured) Configs() []Config {
	var cs []Config
	for _, s := range m.Steps {
		if len(m.Ops[s.Config]) > 0 && s.BusyS > 0 {
			cs = append(cs, s.Config)
		}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].String() < cs[j].String() })
	return cs
}

type parser struct {
	get func(string) (string, error)
	err error
}

func (p *parser) str(k string) string {
	v, err := p.get(k)
	if err != nil && p.err == nil {
		p.err = err
	}
	return v
}

func (p *parser) float(k string) float64 {
	v := p.str(k)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("%s: %w", k, err)
	}
	return f
}

func (p *parser) floatOpt(k string) float64 {
	if v, err := p.get(k); err != nil || v == "" {
		return 0
	}
	return p.float(k)
}

func (p *parser) int(k string) int {
	v := p.str(k)
	n, err := strconv.Atoi(v)
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("%s: %w", k, err)
	}
	return n
}

func (p *parser) intOpt(k string) int {
	if v, err := p.get(k); err != nil || v == "" {
		return 0
	}
	return p.int(k)
}

// maxMeasuredBytes bounds a measured kernel table (the largest shipped one is under 2 MB).
const maxMeasuredBytes = 1 << 30

// readCSV calls row for every data row with a getter by column name; errors name file:line.
func readCSV(path string, row func(get func(string) (string, error), line int) error) error {
	f, err := limitread.Open(path, maxMeasuredBytes)
	if err != nil {
		return fmt.Errorf("read measurements: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s:1: header: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		get := func(k string) (string, error) {
			i, ok := col[k]
			if !ok {
				return "", fmt.Errorf("%s: no such column", k)
			}
			if i >= len(rec) {
				return "", nil
			}
			return rec[i], nil
		}
		if err := row(get, line); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
}

// Override replaces m's configs and micro-benchmark rows with those of o where both have them
// (same config; same bench, precision and shape) and adds o's others.
func (m *Measured) Override(o *Measured) {
	for _, s := range o.Steps {
		replaced := false
		for i := range m.Steps {
			if m.Steps[i].Config == s.Config {
				m.Steps[i], replaced = s, true
			}
		}
		if !replaced {
			m.Steps = append(m.Steps, s)
		}
		m.Ops[s.Config] = o.Ops[s.Config]
		m.KernelTime[s.Config] = o.KernelTime[s.Config]
		m.KernelCalls[s.Config] = o.KernelCalls[s.Config]
	}
	type key struct{ b, p, s string }
	idx := map[key]int{}
	for i, r := range m.Micro {
		idx[key{r.Bench, r.Prec, r.Shape}] = i
	}
	for _, r := range o.Micro {
		if i, ok := idx[key{r.Bench, r.Prec, r.Shape}]; ok {
			m.Micro[i] = r
		} else {
			m.Micro = append(m.Micro, r)
		}
	}
}

// ReadTFLayout reads dir and overrides it with dir/nchw: the measurements laid out as
// TensorFlow lays out convolutions on a GPU. Grappler's generic layout optimizer
// (tensorflow/core/grappler/optimizers/generic_layout_optimizer.cc, GetSrcAndDstDataFormats)
// converts NHWC graphs to NCHW unless at least half the GPUs are Volta or newer and at least
// half the convolutions are float16; so float32 and TF32 convolutions run NCHW, mixed-precision
// ones NHWC. testdata/h200 holds NHWC runs of every precision and nchw/ the float32/TF32 CNN
// runs in NCHW (plus float32 BERT-base and GPT-2, which have no layout).
func ReadTFLayout(dir string) (*Measured, error) {
	m, err := ReadMeasured(dir)
	if err != nil {
		return nil, err
	}
	o, err := ReadMeasured(filepath.Join(dir, "nchw"))
	if err != nil {
		return nil, err
	}
	// MobileNetV2 keeps its NHWC runs: its depthwise convolutions are TF's own
	// DepthwiseConv2dNative kernels, not cuDNN's, and cuDNN's NCHW depthwise kernels measured
	// here reach 3% of the FP32 peak (nchw/micro.csv), a PyTorch artefact TF does not share.
	var keep []MeasuredStep
	for _, s := range o.Steps {
		if s.Model != "mobilenetv2" {
			keep = append(keep, s)
		}
	}
	o.Steps = keep
	m.Override(o)
	return m, nil
}

// Filter returns the measurements whose configs keep accepts (micro-benchmarks are kept).
func (m *Measured) Filter(keep func(Config) bool) *Measured {
	o := &Measured{Ops: map[Config][]MeasuredOp{}, KernelTime: map[Config]map[string]float64{},
		KernelCalls: map[Config]map[string]int{}, Micro: m.Micro}
	for _, s := range m.Steps {
		if keep(s.Config) {
			o.Steps = append(o.Steps, s)
			o.Ops[s.Config] = m.Ops[s.Config]
			o.KernelTime[s.Config] = m.KernelTime[s.Config]
			o.KernelCalls[s.Config] = m.KernelCalls[s.Config]
		}
	}
	return o
}
