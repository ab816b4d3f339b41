package xprof

import (
	"math"
	"strconv"
	"testing"

	"github.com/gpusim/gpusim/internal/testcsv"
)

// The kind mapping on the kernels of real Keras 3 train steps under XLA on the H200
// (testdata/h200/keras/trace: each kernel's name and hlo_op, from the JAX profiler's XSpace)
// gives the sums tools/h200/keras_trace.py makes from the same kernels with XLA's optimized
// HLO beside them (its README: ResNet-50's cuDNN calls 16.97 ms a step, everything else 18.4;
// InceptionV3's forward, input and filter gradients 6.69 + 8.54 + 16.40 ms, the rest 22.0;
// VGG16's convolutions 45.2 and dense GEMMs 0.67 of its 64.79 ms of kernels; EfficientNetB0's
// convolutions 4.74 + depthwise 5.62 of 23.31), without the HLO.
func TestGroupsOfKerasTraces(t *testing.T) {
	for _, tc := range []struct {
		model              string
		conv, memory, gemm float64 // ms per step
	}{
		{"resnet50_float32_b128", 16.97, 18.4, 0.03},
		{"inceptionv3_float32_b128", 6.69 + 8.54 + 16.40, 22.0, 0.03},
		{"vgg16_float32_b128", 45.2, 18.9, 0.67},
		{"efficientnetb0_float32_b128", 4.74 + 5.62, 12.95, 0.03},
	} {
		col, rows := testcsv.Read(t, "../../testdata/h200/keras/trace/"+tc.model+".kernels.csv")
		got := map[string]float64{}
		for _, r := range rows {
			ns, err1 := strconv.ParseFloat(r[col["total_ns"]], 64)
			steps, err2 := strconv.ParseFloat(r[col["steps"]], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: row %v: bad total_ns or steps", tc.model, r)
			}
			k := Kernel{Name: r[col["kernel"]], Op: r[col["hlo_op"]], Framework: "xla"}
			got[Group(Kind(k))] += ns / steps / 1e6
		}
		for g, want := range map[string]float64{GroupConv: tc.conv, GroupMemory: tc.memory, GroupMatMul: tc.gemm} {
			// keras_trace.py's figures are rounded to 0.01 ms (0.1 for the rest); a GEMM
			// group of 0.03 ms is one kernel's.
			if math.Abs(got[g]-want) > math.Max(0.06, 0.005*want) {
				t.Errorf("%s: %s %.3f ms a step, want %.2f", tc.model, g, got[g], want)
			}
		}
	}
}
