package allocator

import (
	"errors"
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
	freeAfterContext := idle - pages(528<<20)
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
	// A logical device of 142,626 MiB preallocates all that is left after its context.
	hog, err := StartProcess("hog", []*Device{dev}, Options{LogicalDevices: map[int][]int64{0: {142626}}})
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
	if dev.FreeBytes() != free+4<<20+pages(528<<20) {
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
