package collective_test

import (
	"fmt"

	"github.com/gpusim/gpusim/collective"
)

func ExampleAllReduce() {
	// 8 A100s on NVSwitch: 12 NVLink 3 links of 25 GB/s per direction each.
	topo := collective.Topology{GPUs: 8, Kind: collective.NVSwitch, LinkBandwidth: 300e9, CCMajor: 8}
	for _, size := range []int64{8, 16 << 20, 1 << 30} {
		r := collective.AllReduce(topo, size, "auto")
		fmt.Printf("%10d B: %s/%s %8.1f us, busbw %5.1f GB/s\n", size, r.Algo, r.Protocol, r.Seconds*1e6, r.BusBW/1e9)
	}
	// Output:
	//          8 B: ring/ll     15.0 us, busbw   0.0 GB/s
	//   16777216 B: ring/ll128    176.4 us, busbw 166.4 GB/s
	// 1073741824 B: ring/simple   8051.9 us, busbw 233.4 GB/s
}

func ExamplePlanGradientAllReduce() {
	topo := collective.Topology{GPUs: 8, Kind: collective.NVSwitch, LinkBandwidth: 300e9, CCMajor: 8}
	grads := []int64{4 << 20, 16 << 20, 64} // bytes of each float32 gradient
	g, err := collective.PlanGradientAllReduce(topo, grads, collective.DefaultGradientOptions())
	if err != nil {
		panic(err)
	}
	for _, st := range g.Pack.Stages {
		fmt.Println(st.Name, st.Alloc, st.Free)
	}
	fmt.Printf("%d NCCL call(s), %.1f us, %d bytes of pack buffers\n", len(g.Calls), g.Seconds*1e6, g.Pack.ExtraBytes)
	// Output:
	// pack.concat [{concat 20971584}] [gradients]
	// allreduce [] []
	// 1 NCCL call(s), 210.4 us, 20971584 bytes of pack buffers
}
