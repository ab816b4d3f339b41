package hw

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/internal/testcsv"
)

// TestXLAMemoryKinds prices the XLA micro-benchmarks recorded on the H200
// (testdata/h200/memkinds/micro.csv, tools/h200/memkinds.py) as the training engineer hands
// such kernels to hw, and checks the prediction against the kernels' own device time
// (kernel_s): loop fusions, batch norm by dtype and pass, depthwise convolutions. The
// constants were read from these rows, so the check is that the mechanisms (bytes per kind,
// kernel counts, the FLOP-bound depthwise kernels, the strided input gradient) reproduce each
// shape, not only the median.
func TestXLAMemoryKinds(t *testing.T) {
	g, err := LookupGPU("h200")
	if err != nil {
		t.Fatal(err)
	}
	rows := readCSVMaps(t, "../testdata/h200/memkinds/micro.csv")
	// Pads of the stride-2 depthwise rows (the micro-benchmark pads x itself; Keras pads with a
	// ZeroPadding2D layer of its own, priced apart): the forward's loop_pad_fusion, and the
	// filter gradient's loop_pad_fusion_1. The input gradient's dilation of dy (the backward's
	// loop_pad_fusion) stays: hw prices it.
	pads := map[string]float64{}
	for _, r := range readCSVMaps(t, "../testdata/h200/memkinds/micro_kernels.csv") {
		fwd := strings.HasPrefix(r["bench"], "dwconv_fwd") && r["kernel"] == "loop_pad_fusion"
		bwd := strings.HasPrefix(r["bench"], "dwconv_bwd") && r["kernel"] == "loop_pad_fusion_1"
		if fwd || bwd {
			pads[r["bench"]+"/"+r["dtype"]+"/"+r["shape"]] += num(t, r["total_ns"]) * 1e-9 / num(t, r["calls"])
		}
	}
	dtype := map[string]string{"float32": Float32, "bfloat16": BFloat16, "float16": Float16}
	type check struct{ ratios []float64 }
	groups := map[string]*check{}
	add := func(group, name string, pred, meas, tol float64) {
		r := pred / meas
		if groups[group] == nil {
			groups[group] = &check{}
		}
		groups[group].ratios = append(groups[group].ratios, r)
		if math.Abs(r-1) > tol {
			t.Errorf("%s %s: predicted %.1f us, measured %.1f us (%.2fx, want within %.0f%%)", group, name, pred*1e6, meas*1e6, r, 100*tol)
		}
	}
	// kernel is the device time of w's kernels alone: the profiler's durations hold no gap.
	kernel := func(w Work) float64 {
		c, err := g.Cost(w)
		if err != nil {
			t.Fatal(err)
		}
		return c.Exec - float64(max(w.Kernels, 1))*g.Efficiency.KernelGap
	}
	bnFwd := map[string]float64{}
	for _, r := range rows {
		dt := dtype[r["dtype"]]
		meas := num(t, r["kernel_s"])
		name := r["bench"] + " " + r["dtype"] + " " + r["shape"]
		switch b := r["bench"]; {
		case (b == "add" || b == "chain8_fused" || strings.HasPrefix(b, "cast")) && num(t, r["elements"]) >= 1<<22:
			w := Work{Kind: KindElementwise, Bytes: num(t, r["bytes"]), DType: dt, Graph: true, Kernels: 1}
			add("loop fusion", name, kernel(w), meas, 0.15)
		case b == "bn_fwd":
			w := Work{Kind: KindNorm, Bytes: num(t, r["bytes"]), DType: dt, Graph: true, Kernels: XLABatchNormKernels}
			bnFwd[r["dtype"]+r["shape"]] = meas
			add("batch norm forward "+r["dtype"], name, kernel(w), meas, 0.20)
		case b == "bn_fwd_bwd":
			// bytes: x, dy read and y, dx written; the gradient's own are x, dy and dx.
			w := Work{Kind: KindNorm, Bytes: 0.75 * num(t, r["bytes"]), DType: dt, Graph: true, Grad: true, Kernels: XLABatchNormGradKernels}
			if f, ok := bnFwd[r["dtype"]+r["shape"]]; ok {
				// The 32- and 64-channel half-precision shapes run their gradient faster
				// than the median (1.3x): the widest tolerance of the checks.
				add("batch norm backward "+r["dtype"], name, kernel(w), meas-f, 0.35)
			}
		case strings.HasPrefix(b, "dwconv_"):
			// dwconv_{fwd,bwd}_{model}_k{K}_s{S}; shape is the input, NHWC.
			parts := strings.Split(b, "_")
			k, _ := strconv.Atoi(strings.TrimPrefix(parts[3], "k"))
			s, _ := strconv.Atoi(strings.TrimPrefix(parts[4], "s"))
			dims := strings.Split(r["shape"], "x")
			n, _ := strconv.ParseInt(dims[0], 10, 64)
			h, _ := strconv.ParseInt(dims[1], 10, 64)
			c, _ := strconv.ParseInt(dims[3], 10, 64)
			ho := (h + int64(s) - 1) / int64(s)
			el := dtypeSize(dt)
			in, out := float64(n*h*h*c)*el, float64(n*ho*ho*c)*el
			sh := Shape{M: n * ho * ho, N: 1, K: int64(k * k), Batch: c, FilterH: k, FilterW: k, Stride: s, InC: 1}
			flops := 2 * float64(n*ho*ho*c) * float64(k*k)
			w := Work{Kind: KindConv, FLOPs: flops, Bytes: in + out, DType: dt, TF32: true, Graph: true, Kernels: 1, Shape: sh}
			if parts[1] == "bwd" {
				w.FLOPs, w.Bytes, w.Grad, w.Kernels = 2*flops, 2*in+out, true, 2
			}
			tol := 0.30
			if n*ho*ho*c < 10e6 {
				tol = 0.45 // small layers: a few waves, under the fitted rate
			}
			if s > 1 && dt != Float32 {
				tol = 0.50 // cuDNN's strided half-precision kernels: not modelled (hw.depthwise)
			}
			add("depthwise "+r["dtype"], name, kernel(w), meas-pads[b+"/"+r["dtype"]+"/"+r["shape"]], tol)
		}
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rs := groups[k].ratios
		sort.Float64s(rs)
		med := rs[len(rs)/2]
		t.Logf("%-28s %2d rows: predicted/measured median %.3f (%.2f..%.2f)", k, len(rs), med, rs[0], rs[len(rs)-1])
		if math.Abs(med-1) > 0.10 {
			t.Errorf("%s: median predicted/measured %.3f, want within 10%%", k, med)
		}
	}
	for _, k := range []string{"loop fusion", "batch norm forward float32", "batch norm backward bfloat16", "depthwise float32", "depthwise bfloat16"} {
		if groups[k] == nil {
			t.Errorf("no %s rows in memkinds/micro.csv", k)
		}
	}
}

func readCSVMaps(t *testing.T, path string) []map[string]string {
	t.Helper()
	col, recs := testcsv.Read(t, path)
	var out []map[string]string
	for _, rec := range recs {
		m := map[string]string{}
		for h, i := range col {
			if i < len(rec) {
				m[h] = rec[i]
			}
		}
		out = append(out, m)
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// TestDepthwise7x7 prices the 7x7 depthwise micro-benchmark at ConvNeXtTiny's stage shapes
// (testdata/h200/profiles/dw7_micro.csv: forward, input gradient and filter gradient apart,
// float32 with TF32 and bfloat16, batch 128) against each call's kernel time. The large-filter
// constants of hw.depthwise were read from these rows; the check is that one rate per pass and
// precision, the generic float32 filter-gradient algorithms and the grouped direct kernel at
// 7x7 reproduce all 24 shapes within 20% (45% for the layers under 10M outputs, 14x14x384 and
// 7x7x768, which run a few waves under the fitted rate, as TestXLAMemoryKinds allows).
func TestDepthwise7x7(t *testing.T) {
	g, err := LookupGPU("h200")
	if err != nil {
		t.Fatal(err)
	}
	dtype := map[string]string{"float32": Float32, "bfloat16": BFloat16}
	rows := readCSVMaps(t, "../testdata/h200/profiles/dw7_micro.csv")
	if len(rows) != 24 {
		t.Fatalf("dw7_micro.csv: %d rows, want 24", len(rows))
	}
	for _, r := range rows {
		// dwconv_{fwd,dgrad,wgrad}_convnext_c{C}_{H}_k{K}_s{S}; shape is the input, NHWC.
		parts := strings.Split(r["bench"], "_")
		pass := parts[1]
		k, _ := strconv.Atoi(strings.TrimPrefix(parts[5], "k"))
		dims := strings.Split(r["shape"], "x")
		n, _ := strconv.ParseInt(dims[0], 10, 64)
		h, _ := strconv.ParseInt(dims[1], 10, 64)
		c, _ := strconv.ParseInt(dims[3], 10, 64)
		dt := dtype[r["dtype"]]
		el := dtypeSize(dt)
		x := float64(n*h*h*c) * el
		sh := Shape{M: n * h * h, N: 1, K: int64(k * k), Batch: c, FilterH: k, FilterW: k, Stride: 1, InC: 1, Spatial: h * h}
		// The input gradient is the forward kernel over dy with the filter reversed.
		w := Work{Kind: KindConv, FLOPs: num(t, r["flops"]), Bytes: 2 * x, DType: dt, TF32: true, Graph: true, Kernels: 1, Shape: sh, NHWC: true}
		if pass == "wgrad" {
			w.Grad = true
		}
		c0, err := g.Cost(w)
		if err != nil {
			t.Fatal(err)
		}
		pred := c0.Exec - g.Efficiency.KernelGap
		meas := num(t, r["kernel_s"])
		tol := 0.20
		if n*h*h*c < 10e6 {
			tol = 0.45 // small layers: a few waves, as in TestXLAMemoryKinds
		}
		if c0.Algo != AlgoDepthwise || math.Abs(pred/meas-1) > tol {
			t.Errorf("%s %s: predicted %.1f us (%s), measured %.1f us (%.2fx, want within %.0f%%)", r["bench"], r["dtype"], pred*1e6, c0.Algo, meas*1e6, pred/meas, 100*tol)
		}
	}
}
