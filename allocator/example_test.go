package allocator_test

import (
	"fmt"

	"github.com/gpusim/gpusim/allocator"
)

// A growing allocator fragments: four 1 MiB tensors freed in a checkerboard leave 2 MiB free in
// the region but no 2 MiB hole, so the 2 MiB request extends the pool with a new region.
func ExampleNewBFC() {
	a := allocator.NewBFC("GPU_0_bfc", 1<<30, allocator.BFCOptions{AllowGrowth: true}, nil)
	var hs []allocator.Handle
	for i := 0; i < 4; i++ {
		h, _ := a.Allocate(1 << 20)
		hs = append(hs, h)
	}
	a.Free(hs[0])
	a.Free(hs[2])
	s := a.Stats()
	fmt.Println("in use", s.BytesInUse, "pool", s.PoolBytes, "largest free", s.LargestFreeBlockBytes)
	a.Allocate(2 << 20)
	s = a.Stats()
	fmt.Println("in use", s.BytesInUse, "pool", s.PoolBytes, "largest free", s.LargestFreeBlockBytes)
	// Output:
	// in use 2097152 pool 6291456 largest free 2097152
	// in use 4194304 pool 6291456 largest free 1048576
}

// A second TensorFlow process next to one that preallocated gets what is left.
func ExampleStartProcess() {
	gpu := allocator.NewDevice(allocator.H200Spec(0))
	a, _ := allocator.StartProcess("trainer", []*allocator.Device{gpu}, allocator.Options{})
	b, err := allocator.StartProcess("notebook", []*allocator.Device{gpu}, allocator.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("A limit %.1f GiB, B limit %.2f GiB\n",
		float64(a.Allocators()[0].Stats().BytesLimit)/(1<<30), float64(b.Allocators()[0].Stats().BytesLimit)/(1<<30))
	if _, ok := b.Allocators()[0].Allocate(2 << 30); !ok {
		fmt.Println(b.Allocators()[0].LastOOM().Message)
	}
	// Output:
	// A limit 137.5 GiB, B limit 1.01 GiB
	// OOM when allocating tensor with shape[2147483648] and type uint8 on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc
}
