package allocator

import (
	"errors"
	"fmt"
	"testing"
)

// TestTwoProcessesPreallocated: TF process A preallocates (free - 1800 MiB); process B on the
// same H200 still gets a context, finds under 2 GiB free, so its limit is free - 225 MiB, and
// its first large allocation fails. After A exits, B's own pool is what it is; a new process
// gets the whole card again.
func TestTwoProcessesPreallocated(t *testing.T) {
	dev := NewDevice(H200Spec(0))
	idle := dev.FreeBytes()
	a, err := StartProcess("A", []*Device{dev}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	freeAfterContext := idle - H200Spec(0).ContextBytes
	wantA := freeAfterContext - 1800<<20
	if got := a.Allocators()[0].Stats(); got.BytesLimit != wantA || got.PoolBytes != wantA {
		t.Fatalf("A: limit %d pool %d, want both %d", got.BytesLimit, got.PoolBytes, wantA)
	}
	if got, want := dev.FreeBytes(), freeAfterContext-pages(wantA); got != want {
		t.Errorf("free after A = %d, want %d", got, want)
	}
	b, err := StartProcess("B", []*Device{dev}, Options{})
	if err != nil {
		t.Fatalf("B failed to start: %v", err)
	}
	sb := b.Allocators()[0].Stats()
	if sb.BytesLimit >= 2<<30 || sb.PoolBytes == 0 {
		t.Errorf("B: limit %d pool %d, want a small preallocated pool", sb.BytesLimit, sb.PoolBytes)
	}
	if _, ok := b.Allocators()[0].Allocate(3 << 30); ok {
		t.Error("B allocated 3 GiB next to A's preallocated pool")
	}
	if o := b.Allocators()[0].LastOOM(); o == nil || o.Allocator != "GPU_0_bfc" {
		t.Errorf("B's OOM = %+v", o)
	}
	// Growth in A: a growth process next to a limited one coexist.
	a.Exit()
	b.Exit()
	if got := dev.FreeBytes(); got != idle {
		t.Errorf("free after both exit = %d, want %d", got, idle)
	}
}

// TestProcessStartFailsWhenCardFull: when the card has no room for a context, the start fails
// with CUDA's out of memory and the device is left as it was.
func TestProcessStartFailsWhenCardFull(t *testing.T) {
	dev := NewDevice(H200Spec(0))
	// A logical device of 142,618 MiB preallocates all whole 2 MiB pages left after its context.
	hog, err := StartProcess("hog", []*Device{dev}, Options{LogicalDevices: map[int][]int64{0: {142618}}})
	if err != nil {
		t.Fatal(err)
	}
	before := dev.FreeBytes()
	_, err = StartProcess("late", []*Device{dev}, Options{})
	var ce *ConfigError
	if !errors.As(err, &ce) || err.Error() != "InternalError: CUDA runtime implicit initialization on GPU:0 failed. Status: out of memory" {
		t.Fatalf("late start error = %v", err)
	}
	if dev.FreeBytes() != before {
		t.Errorf("failed start changed free memory: %d -> %d", before, dev.FreeBytes())
	}
	hog.Exit()
}

// TestGrowthAndLimitCoexist: a growing process and a 4 GiB-limited one share a card; each can
// use what it asks for, and the growing one's pool follows its use.
func TestGrowthAndLimitCoexist(t *testing.T) {
	dev := NewDevice(H200Spec(0))
	g, err := StartProcess("growth", []*Device{dev}, Options{Growth: boolp(true)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := StartProcess("limit", []*Device{dev}, Options{LogicalDevices: map[int][]int64{0: {4096}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Allocators()[0].Allocate(10 << 30); !ok {
		t.Error("growth process could not take 10 GiB")
	}
	if got := g.Allocators()[0].Stats().PoolBytes; got != 16<<30 {
		t.Errorf("growth pool = %d, want 16 GiB (regions doubled from 2 MiB to 8 GiB)", got)
	}
	if _, ok := l.Allocators()[0].Allocate(3 << 30); !ok {
		t.Error("limited process could not take 3 GiB")
	}
	if _, ok := l.Allocators()[0].Allocate(2 << 30); ok {
		t.Error("limited process went past its 4 GiB limit")
	}
	g.Exit()
	l.Exit()
}

// TestAsyncAndPlatform checks the non-BFC allocators' accounting against the device.
func TestAsyncAndPlatform(t *testing.T) {
	dev := NewDevice(H200Spec(0))
	p, err := StartProcess("async", []*Device{dev}, Options{Env: map[string]string{"TF_GPU_ALLOCATOR": "cuda_malloc_async"}})
	if err != nil {
		t.Fatal(err)
	}
	a := p.Allocators()[0]
	if a.Name() != "gpu_async_0" {
		t.Errorf("name %q", a.Name())
	}
	h1, _ := a.Allocate(3 << 20)
	h2, _ := a.Allocate(1000)
	a.Free(h1)
	s := a.Stats()
	if s.BytesInUse != 1000 || s.PoolBytes != 4<<20 || s.PeakBytesInUse != 3<<20+1000 {
		t.Errorf("async stats %+v", s)
	}
	a.Free(h2)
	free := dev.FreeBytes()
	p.Exit()
	if dev.FreeBytes() != free+4<<20+H200Spec(0).ContextBytes {
		t.Errorf("exit returned %d bytes", dev.FreeBytes()-free)
	}

	q, err := StartProcess("platform", []*Device{dev}, Options{Allocator: "platform"})
	if err != nil {
		t.Fatal(err)
	}
	pa := q.Allocators()[0]
	before := dev.FreeBytes()
	h, ok := pa.Allocate(5 << 20)
	if !ok || before-dev.FreeBytes() != 6<<20 {
		t.Errorf("cudaMalloc of 5 MiB took %d bytes, want 6 MiB", before-dev.FreeBytes())
	}
	pa.Free(h)
	if dev.FreeBytes() != before {
		t.Error("cudaFree did not return the pages")
	}
	q.Exit()
}

// TestTwoJAXProcessesMeasured reproduces two JAX 0.11.2 processes measured on the H200
// (testdata/record/out/two-process-*.json): A preallocates 75% at its first buffer; B, started
// while A holds its pool, gets the same bytes_limit, cannot get that region from the card, backs
// off by 0.9x until a region fits (the failed sizes are in the recording's log), and still
// serves a 2 GiB buffer.
func TestTwoJAXProcessesMeasured(t *testing.T) {
	dev := NewDevice(H200Spec(0))
	a, err := StartProcess("A", []*Device{dev}, Options{Framework: "jax"})
	if err != nil {
		t.Fatal(err)
	}
	aa := a.Allocators()[0]
	if s := aa.Stats(); s.BytesLimit != 112583507968 || s.PoolBytes != 0 {
		t.Errorf("A at start: %+v, want limit 112583507968 and no pool", s)
	}
	if _, ok := aa.Allocate(1); !ok {
		t.Fatal("A's first buffer failed")
	}
	if s := aa.Stats(); s.PoolBytes != 112583507968 || s.LargestFreeBlockBytes != 112583507712 {
		t.Errorf("A after 1 byte: %+v", s)
	}
	// NVML free after A's first buffer: 36,963,483,648 B.
	if got := dev.FreeBytes(); got != 36963483648 {
		t.Errorf("free after A = %d, want 36963483648 (measured)", got)
	}
	b, err := StartProcess("B", []*Device{dev}, Options{Framework: "jax"})
	if err != nil {
		t.Fatal(err)
	}
	ba := b.Allocators()[0]
	if _, ok := ba.Allocate(1); !ok {
		t.Fatal("B's first buffer failed")
	}
	if s := ba.Stats(); s.BytesLimit != 112583507968 || s.PoolBytes != 35330719744 || s.LargestFreeBlockBytes != 35330719488 {
		t.Errorf("B after 1 byte: limit %d pool %d largest free %d, want 112583507968 35330719744 35330719488 (measured)",
			s.BytesLimit, s.PoolBytes, s.LargestFreeBlockBytes)
	}
	if _, ok := ba.Allocate(2 << 30); !ok {
		t.Error("B's 2 GiB buffer failed")
	}
	if s := ba.Stats(); s.LargestFreeBlockBytes != 33183235840 {
		t.Errorf("B largest free after 2 GiB = %d, want 33183235840 (measured)", s.LargestFreeBlockBytes)
	}
	a.Exit()
	b.Exit()
}

// TestBackpedalMeasured: the region sizes XLA asked the driver for, as its log printed them
// ("Failed to allocate device memory of 104.85GiB (112583507968 bytes)", then 0.9x each time).
func TestBackpedalMeasured(t *testing.T) {
	sub := &limitedSub{free: 36400594944, next: 1 << 40}
	a := NewBFC("GPU_0_bfc", 112583507968, BFCOptions{RegionGranularity: 2 << 20}, sub)
	if _, ok := a.Allocate(1); !ok {
		t.Fatal("allocation failed")
	}
	// The sizes XLA logged; the device allocator maps each in whole 2 MiB pages, and the last,
	// 0.9 x 39255429120 = 35329884160, fits and comes back as 35330719744 B of pool.
	logged := []int64{112583507968, 101325152256, 91192631296, 82073362432, 73866027008, 66479423488,
		59831480320, 53848330240, 48463495168, 43617144832, 39255429120, 35329884160}
	var want []int64
	for _, n := range logged {
		want = append(want, pages(n))
	}
	if got := a.Stats().PoolBytes; got != 35330719744 {
		t.Errorf("pool_bytes = %d, want 35330719744 (measured)", got)
	}
	if fmt.Sprint(sub.calls) != fmt.Sprint(want) {
		t.Errorf("region sizes asked:\n got %v\nwant %v", sub.calls, want)
	}
}
