package models

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/internal/testcsv"
)

// TestXLACompileFit refits the compile-time constants to testdata/h200/xla/xla_compile.csv.
// GEMM shapes per step, counted from the models of tools/h200/xla_compile.py: the MLP and
// the CNN's classifier have one dot shape forward and two backward (dW, dX); each Transformer
// layer has six dots forward (QKV, QK^T, AV, output, two feed-forward) and two per dot
// backward, all layers alike.
func TestXLACompileFit(t *testing.T) {
	_, recs := testcsv.Read(t, "../testdata/h200/xla/xla_compile.csv")
	gemms := map[string]float64{"mlp": 3, "cnn": 3, "transformer": 18}
	var a11, a12, a22, b1, b2 float64
	type pt struct{ eqns, shapes, secs float64 }
	var pts []pt
	for i, r := range recs {
		eq, err1 := strconv.ParseFloat(r[3], 64)
		s, err2 := strconv.ParseFloat(r[7], 64)
		g, ok := gemms[r[0]]
		if err1 != nil || err2 != nil || !ok {
			t.Fatalf("xla_compile.csv:%d: bad row %v", i+2, r)
		}
		pts = append(pts, pt{eq, g, s})
		a11, a12, a22 = a11+eq*eq, a12+eq*g, a22+g*g
		b1, b2 = b1+eq*s, b2+g*s
	}
	det := a11*a22 - a12*a12
	perEqn, perShape := (b1*a22-b2*a12)/det, (a11*b2-a12*b1)/det
	var mae float64
	for _, p := range pts {
		mae += math.Abs((perEqn*p.eqns+perShape*p.shapes)/p.secs - 1)
	}
	mae /= float64(len(pts))
	t.Logf("fit: %.3g s per equation, %.3g s per GEMM shape, MAE %.1f%% over %d compiles", perEqn, perShape, 100*mae, len(pts))
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"XLACompilePerEqn", perEqn, XLACompilePerEqn}, {"XLACompilePerGEMMShape", perShape, XLACompilePerGEMMShape}} {
		if math.Abs(c.got/c.want-1) > 0.01 {
			t.Errorf("fitted %s = %.4g, constant is %.4g", c.name, c.got, c.want)
		}
	}
	if mae > 0.35 {
		t.Errorf("compile-time fit MAE = %.1f%%, want <= 35%%", 100*mae)
	}
}

// TestXLAEqnsPerPlanOp counts the plan ops of one ResNet-50 bottleneck block, the block the
// measured CNN repeats (xlaEqnsPerPlanOp).
func TestXLAEqnsPerPlanOp(t *testing.T) {
	m, err := Get("resnet50")
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Plan(PlanOptions{Batch: 8, Precision: PrecisionFloat32, Optimizer: "sgd"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, op := range p.Ops {
		if strings.Contains(op.Name, "conv3_block2_") {
			n++
		}
	}
	if n != resnet50BlockOps {
		t.Errorf("plan ops of conv3_block2 = %d, resnet50BlockOps = %d", n, resnet50BlockOps)
	}
}
