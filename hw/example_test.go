package hw_test

import (
	"fmt"

	"github.com/gpusim/gpusim/hw"
)

// A convolution and a BatchNorm in float16 on two GPUs: Tensor Cores make the V100 step
// several times faster than the Pascal card's.
func ExampleGPU_Step() {
	works := []hw.Work{
		{Kind: hw.KindConv, FLOPs: 2e12, Bytes: 4e9, Kernels: 3, DType: hw.Float16},
		{Kind: hw.KindNorm, Bytes: 2e9, Kernels: 2, DType: hw.Float16},
	}
	for _, name := range []string{"v100-16gb", "gtx1080ti"} {
		g, _ := hw.LookupGPU(name)
		b, err := g.Step(works)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %.1f ms (%s path for the conv)\n", name, 1e3*b.Total, g.Path(works[0]))
	}
	// Output:
	// v100-16gb: 29.7 ms (fp16-tc path for the conv)
	// gtx1080ti: 376.9 ms (pseudo-half path for the conv)
}

func ExampleLookupGPU() {
	g, err := hw.LookupGPU("h200")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %.0f GiB, %.1f TB/s, BF16 %.0f TFLOP/s, cc %d.%d, TF32 %v\n", g.Description,
		float64(g.MemoryBytes)/hw.GiB, g.MemBandwidth/1e12, g.PeakBF16/hw.TFLOPS, g.CCMajor, g.CCMinor, g.SupportsTF32())
	// Output:
	// NVIDIA H200 141GB HBM3e (SXM): 140 GiB, 4.8 TB/s, BF16 989 TFLOP/s, cc 9.0, TF32 true
}
