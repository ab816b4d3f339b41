package allocator

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// checkInvariants verifies the allocator's structure against a recount: chunks tile each region
// with no gap or overlap, links are consistent, free chunks sit in the right bin (or are the
// central gap) exactly once, no two free chunks are adjacent, and the statistics equal a recount.
func checkInvariants(a *BFC) error {
	var inUse, pool, largestFree int64
	binned := 0
	for ri, r := range a.regions {
		if ri > 0 && a.regions[ri-1].addr+a.regions[ri-1].size > r.addr {
			return fmt.Errorf("regions %d and %d overlap", ri-1, ri)
		}
		pool += r.size
		addr := r.addr
		prev := noChunk
		prevFree := false
		for h := r.first; h != noChunk; h = a.chunks[h].next {
			c := &a.chunks[h]
			if c.addr != addr {
				return fmt.Errorf("region %d: chunk %d at %#x, want %#x (gap or overlap)", ri, h, c.addr, addr)
			}
			if c.prev != prev {
				return fmt.Errorf("chunk %d: prev %d, want %d", h, c.prev, prev)
			}
			if c.size <= 0 || c.size%minAllocationSize != 0 {
				return fmt.Errorf("chunk %d: size %d", h, c.size)
			}
			if c.inUse {
				inUse += c.size
				if c.bin >= 0 {
					return fmt.Errorf("chunk %d in use but in bin %d", h, c.bin)
				}
				prevFree = false
			} else {
				if prevFree {
					return fmt.Errorf("chunk %d: two adjacent free chunks (missed coalescing)", h)
				}
				prevFree = true
				largestFree = max(largestFree, c.size)
				if c.tag == tagCentralGap {
					if a.centralGap != h || c.bin >= 0 {
						return fmt.Errorf("chunk %d: central-gap tag but central gap is %d (bin %d)", h, a.centralGap, c.bin)
					}
				} else {
					b := binNumForSize(c.size)
					if int(c.bin) != b {
						return fmt.Errorf("chunk %d of size %d in bin %d, want %d", h, c.size, c.bin, b)
					}
					if a.bins[b].find(c.size, c.addr); a.bins[b].e[a.bins[b].find(c.size, c.addr)].h != h {
						return fmt.Errorf("chunk %d: bin entry names another chunk", h)
					}
					binned++
				}
			}
			addr += c.size
			prev = h
		}
		if addr != r.addr+r.size {
			return fmt.Errorf("region %d: chunks end at %#x, region at %#x", ri, addr, r.addr+r.size)
		}
	}
	total := 0
	for b := range a.bins {
		total += len(a.bins[b].e)
		if (len(a.bins[b].e) > 0) != (a.nonEmpty&(1<<b) != 0) {
			return fmt.Errorf("bin %d: non-empty bit wrong", b)
		}
		for i := 1; i < len(a.bins[b].e); i++ {
			x, y := a.bins[b].e[i-1], a.bins[b].e[i]
			if !less(x.size, x.addr, y.size, y.addr) {
				return fmt.Errorf("bin %d not ordered by (size, address) at %d", b, i)
			}
		}
	}
	if total != binned {
		return fmt.Errorf("%d chunks in bins, %d free binned chunks in regions", total, binned)
	}
	s := a.Stats()
	if s.BytesInUse != inUse || s.PoolBytes != pool || s.LargestFreeBlockBytes != largestFree {
		return fmt.Errorf("stats in_use %d pool %d largest_free %d, recount %d %d %d",
			s.BytesInUse, s.PoolBytes, s.LargestFreeBlockBytes, inUse, pool, largestFree)
	}
	if s.PeakBytesInUse < s.BytesInUse || s.PeakPoolBytes < s.PoolBytes || s.PoolBytes > a.limit {
		return fmt.Errorf("stats inconsistent: %+v", s)
	}
	return nil
}

func TestRoundedBytesAndBins(t *testing.T) {
	for _, tc := range []struct {
		n, rounded int64
		bin        int
	}{
		{1, 256, 0}, {256, 256, 0}, {257, 512, 1}, {511, 512, 1}, {1000, 1024, 2},
		{1 << 20, 1 << 20, 12}, {3 << 20, 3 << 20, 13}, {256 << 20, 256 << 20, 20}, {100 << 30, 100 << 30, 20},
	} {
		if got := roundedBytes(tc.n); got != tc.rounded {
			t.Errorf("roundedBytes(%d) = %d, want %d", tc.n, got, tc.rounded)
		}
		if got := binNumForSize(tc.rounded); got != tc.bin {
			t.Errorf("binNumForSize(%d) = %d, want %d", tc.rounded, got, tc.bin)
		}
	}
}

func TestHumanReadableNumBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0B"}, {1023, "1023B"}, {1024, "1.0KiB"}, {1536, "1.5KiB"}, {1 << 20, "1.00MiB"},
		{3300000000, "3.07GiB"}, {-2048, "-2.0KiB"}, {256 << 20, "256.00MiB"}, {1 << 40, "1.00TiB"},
	} {
		if got := HumanReadableNumBytes(tc.n); got != tc.want {
			t.Errorf("HumanReadableNumBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// TestSplitRule checks BFC's split decision: split when the chunk is at least twice the request
// or the waste reaches max_internal_fragmentation.
func TestSplitRule(t *testing.T) {
	for _, tc := range []struct {
		name       string
		limit      int64
		frac       float64
		first, req int64 // fill the pool with first, free it, then ask for req
		wantInUse  int64
	}{
		{"twice splits", 4 << 20, 0, 4 << 20, 2 << 20, 2 << 20},
		{"under twice keeps whole chunk", 4 << 20, 0, 4 << 20, 3 << 20, 4 << 20},
		{"waste over 128MiB splits", 1 << 30, 0, 1 << 30, 600 << 20, 600 << 20},
		{"waste under 128MiB kept", 1 << 30, 0, 1 << 30, 900 << 20, 1 << 30},
		{"fraction lowers the threshold", 1 << 30, 0.05, 1 << 30, 900 << 20, 900 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewBFC("GPU_0_bfc", tc.limit, BFCOptions{FragmentationFraction: tc.frac}, nil)
			h, ok := a.Allocate(tc.first)
			if !ok {
				t.Fatal("first allocation failed")
			}
			a.Free(h)
			if _, ok := a.Allocate(tc.req); !ok {
				t.Fatal("allocation failed")
			}
			if got := a.Stats().BytesInUse; got != tc.wantInUse {
				t.Errorf("bytes_in_use = %d, want %d", got, tc.wantInUse)
			}
			if err := checkInvariants(a); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestGrowthRegions checks curr_region doubling: 2 MiB first, doubled after a region that fit,
// doubled until the request fits otherwise, capped by what is left below the limit.
func TestGrowthRegions(t *testing.T) {
	a := NewBFC("GPU_0_bfc", 100<<20, BFCOptions{AllowGrowth: true}, nil)
	var pools []int64
	for _, n := range []int64{1 << 20, 1 << 20, 3 << 20, 1 << 20, 30 << 20, 40 << 20} {
		if _, ok := a.Allocate(n); !ok {
			t.Fatalf("Allocate(%d) failed", n)
		}
		pools = append(pools, a.Stats().PoolBytes)
	}
	// 1 MiB: region 2 MiB (curr 2->4), split. 1 MiB: takes the other half. 3 MiB: region 4 MiB
	// (curr 4->8), kept whole (4 < 2x3). 1 MiB: nothing free, region 8 MiB (curr 8->16).
	// 30 MiB: curr 16->32, region 32 MiB (no doubling after). 40 MiB: curr 32->64, but only
	// 100-46 = 54 MiB are left below the limit: region 54 MiB.
	want := []int64{2 << 20, 2 << 20, 6 << 20, 14 << 20, 46 << 20, 100 << 20}
	if fmt.Sprint(pools) != fmt.Sprint(want) {
		t.Errorf("pool_bytes after each allocation = %v, want %v", pools, want)
	}
	if err := checkInvariants(a); err != nil {
		t.Error(err)
	}
}

// limitedSub is a device with a fixed amount of memory.
type limitedSub struct {
	free, next int64
	calls      []int64
}

func (l *limitedSub) Alloc(n int64) (int64, bool) {
	l.calls = append(l.calls, n)
	if n > l.free {
		return 0, false
	}
	l.free -= n
	addr := l.next
	l.next += n
	return addr, true
}

func (l *limitedSub) Free(addr, n int64) { l.free += n }

// TestBackpedal checks Extend's 0.9x back-off when the device cannot supply the whole region,
// and TF 2.x's once-per-allocator rule.
func TestBackpedal(t *testing.T) {
	sub := &limitedSub{free: 700 << 20, next: 1 << 30}
	a := NewBFC("GPU_0_bfc", 1<<30, BFCOptions{BackpedalOnce: true}, sub)
	if !a.Preallocate() {
		t.Fatal("Preallocate failed")
	}
	// 1 GiB refused, then 0.9^k x 1 GiB (rounded up to 256 B, in float32) until it fits.
	want := []int64{1 << 30}
	b := int64(1 << 30)
	for b > 700<<20 {
		b = roundedBytes(int64(float32(b) * backpedalFactor))
		want = append(want, b)
	}
	if fmt.Sprint(sub.calls) != fmt.Sprint(want) {
		t.Errorf("region sizes asked = %v, want %v", sub.calls, want)
	}
	if got := a.Stats().PoolBytes; got != b {
		t.Errorf("pool_bytes = %d, want %d", got, b)
	}
}

// TestGarbageCollection: with GC a request that fits only after unused regions are returned
// succeeds; without GC it is an OOM even though nothing is in use.
func TestGarbageCollection(t *testing.T) {
	for _, gc := range []bool{true, false} {
		a := NewBFC("GPU_0_bfc", 64<<20, BFCOptions{AllowGrowth: true, GarbageCollection: gc}, nil)
		var hs []Handle
		for _, n := range []int64{2 << 20, 4 << 20, 8 << 20, 16 << 20} { // regions 2,4,8,16 MiB
			h, ok := a.Allocate(n)
			if !ok {
				t.Fatal("setup allocation failed")
			}
			hs = append(hs, h)
		}
		for _, h := range hs {
			a.Free(h)
		}
		// 30 MiB used by regions, 34 MiB left: 40 MiB fits only if regions go back.
		_, ok := a.Allocate(40 << 20)
		if ok != gc {
			t.Errorf("gc=%v: Allocate(40MiB) ok = %v, want %v", gc, ok, gc)
		}
		if gc && a.GCRuns() != 1 {
			t.Errorf("gc runs = %d, want 1", a.GCRuns())
		}
		if err := checkInvariants(a); err != nil {
			t.Error(err)
		}
	}
}

// TestOOMReport checks the OOM result: TF's log text, dump, user message, fragmentation, wait.
func TestOOMReport(t *testing.T) {
	a := NewBFC("GPU_0_bfc", 10<<20, DefaultBFCOptions(), nil)
	var hs []Handle
	for i := 0; i < 10; i++ {
		h, ok := a.Allocate(1 << 20)
		if !ok {
			t.Fatal("setup allocation failed")
		}
		hs = append(hs, h)
	}
	for i := 0; i < 10; i += 2 {
		a.Free(hs[i]) // five separate 1 MiB holes: 5 MiB free, largest 1 MiB
	}
	if _, ok := a.Allocate(2 << 20); ok {
		t.Fatal("Allocate(2MiB) succeeded in a pool of 1 MiB holes")
	}
	o := a.LastOOM()
	if o == nil {
		t.Fatal("LastOOM() = nil after an OOM")
	}
	if o.Wait != 10*time.Second {
		t.Errorf("Wait = %v, want 10s", o.Wait)
	}
	if want := 0.8; o.Fragmentation != want {
		t.Errorf("Fragmentation = %v, want %v ((5MiB - 1MiB) / 5MiB)", o.Fragmentation, want)
	}
	for _, want := range []string{
		"Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.00MiB (rounded to 2097152)",
		"TF_GPU_ALLOCATOR=cuda_malloc_async",
		"BFCAllocator dump for GPU_0_bfc",
		"Bin (1048576): \tTotal Chunks: 10, Chunks in use: 5. 10.00MiB allocated for chunks. 5.00MiB in use in bin. 5.00MiB client-requested in use in bin.",
		"Next region of size 10485760",
		"     Summary of in-use Chunks by size: ",
		"5 Chunks of size 1048576 totalling 5.00MiB",
		"Sum Total of in-use chunks: 5.00MiB",
		"LargestFreeBlock:              1048576",
	} {
		if !strings.Contains(o.Log, want) {
			t.Errorf("OOM log lacks %q; log:\n%s", want, o.Log)
		}
	}
	wantMsg := "OOM when allocating tensor with shape[2097152] and type uint8 on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"
	if o.Message != wantMsg {
		t.Errorf("Message = %q, want %q", o.Message, wantMsg)
	}
	if !strings.HasPrefix(o.UserError(), "ResourceExhaustedError: OOM when allocating tensor") {
		t.Errorf("UserError() = %q", o.UserError())
	}
	if got, want := a.RenderOccupancy(), strings.Repeat("__________**********", 5); got != want {
		t.Errorf("RenderOccupancy() = %q, want %q", got, want)
	}
	// Without retry there is no wait.
	b := NewBFC("GPU_1_bfc", 1<<20, BFCOptions{}, nil)
	if _, ok := b.Allocate(2 << 20); ok || b.LastOOM().Wait != 0 {
		t.Errorf("no-retry OOM: ok=%v wait=%v, want false 0", ok, b.LastOOM().Wait)
	}
}

// TestSpatialDiffersFromClassic builds the case that separates the variants: the gap is smaller
// than a binned hole that fits. Classic takes the first fit in bin order (the gap's chunk);
// spatial takes the hole first.
func TestSpatialDiffersFromClassic(t *testing.T) {
	run := func(v Variant) (Stats, int64) {
		a := NewBFC("GPU_0_bfc", 100<<20, BFCOptions{Variant: v}, nil)
		h1, _ := a.Allocate(40 << 20) // [0,40) MiB, the hole to be
		for i := 0; i < 4; i++ {
			a.Allocate(10 << 20) // [40,80); the gap is [80,100), 20 MiB
		}
		a.Free(h1) // a 40 MiB hole in bin 17; the 20 MiB gap would be in bin 16
		h, ok := a.Allocate(2 << 20)
		if !ok {
			t.Fatalf("%v: allocation failed", v)
		}
		if err := checkInvariants(a); err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		return a.Stats(), a.chunks[h].addr - a.regions[0].addr
	}
	_, classicAt := run(Classic)
	_, spatialAt := run(XLASpatial)
	if classicAt != 80<<20 || spatialAt != 0 {
		t.Errorf("2 MiB placed at classic %d, spatial %d; want %d (gap), 0 (hole)", classicAt, spatialAt, 80<<20)
	}
}

// FuzzBFC drives random operation sequences through every variant and checks the invariants
// after each step.
func FuzzBFC(f *testing.F) {
	f.Add(uint64(1), uint8(0), []byte{1, 2, 3, 200, 17, 90})
	f.Add(uint64(7), uint8(1), []byte{255, 255, 0, 0, 128, 64, 32})
	f.Add(uint64(42), uint8(2), []byte{9, 9, 9, 9, 9, 9, 9, 9, 9})
	f.Fuzz(func(t *testing.T, seed uint64, mode uint8, ops []byte) {
		variant := Variant(mode % 3)
		growth := variant == Classic && mode&4 != 0
		limit := int64(64<<20) + int64(seed%(64<<20))
		a := NewBFC("GPU_0_bfc", limit, BFCOptions{AllowGrowth: growth, GarbageCollection: mode&8 != 0, Variant: variant}, nil)
		rng := rand.New(rand.NewPCG(seed, uint64(mode)))
		var live []Handle
		for i, op := range ops {
			if op < 100 && len(live) > 0 {
				k := int(op) % len(live)
				a.Free(live[k])
				live[k] = live[len(live)-1]
				live = live[:len(live)-1]
			} else {
				n := int64(1) << (op % 27)
				n += rng.Int64N(n)
				if h, ok := a.Allocate(n); ok {
					live = append(live, h)
				}
			}
			if err := checkInvariants(a); err != nil {
				t.Fatalf("after op %d (%d): %v", i, op, err)
			}
		}
	})
}

// TestRandomInvariants is a longer deterministic run of the fuzz body.
func TestRandomInvariants(t *testing.T) {
	for _, cfg := range []BFCOptions{
		{AllowGrowth: true, GarbageCollection: true}, {AllowGrowth: true}, {}, {Variant: XLASpatial}, {Variant: XLASpatialExact},
	} {
		rng := rand.New(rand.NewPCG(3, 4))
		a := NewBFC("GPU_0_bfc", 256<<20, cfg, nil)
		var live []Handle
		for i := 0; i < 5000; i++ {
			if len(live) > 0 && rng.IntN(100) < 45 {
				k := rng.IntN(len(live))
				a.Free(live[k])
				live[k] = live[len(live)-1]
				live = live[:len(live)-1]
			} else if h, ok := a.Allocate(1 + rng.Int64N(1<<uint(rng.IntN(25)))); ok {
				live = append(live, h)
			}
			if err := checkInvariants(a); err != nil {
				t.Fatalf("%+v: op %d: %v", cfg, i, err)
			}
		}
	}
}

// TestOOMRegionDump checks the pool layout an OOM carries: the dump's regions and chunks in
// its order, and the requested size of a chunk that was not split (a 1.5 MiB request served
// by a 2 MiB free chunk, which FindChunkPtr does not split below twice the request) so that
// the waste inside it shows.
func TestOOMRegionDump(t *testing.T) {
	a := NewBFC("GPU_0_bfc", 4<<20, DefaultBFCOptions(), nil)
	h1, _ := a.Allocate(2 << 20)
	h2, _ := a.Allocate(1 << 20)
	a.Free(h1)
	if _, ok := a.Allocate(3 << 19); !ok { // 1.5 MiB into the freed 2 MiB chunk, unsplit
		t.Fatal("Allocate(1.5MiB) failed")
	}
	a.Free(h2)
	if _, ok := a.Allocate(3 << 20); ok {
		t.Fatal("Allocate(3MiB) succeeded with 2 MiB free")
	}
	o := a.LastOOM()
	want := []RegionDump{{Size: 4 << 20, Chunks: []ChunkDump{
		{Size: 2 << 20, Requested: 3 << 19, InUse: true}, {Size: 2 << 20}}}}
	if !reflect.DeepEqual(o.Regions, want) {
		t.Errorf("OOM.Regions = %+v, want %+v", o.Regions, want)
	}
	for _, line := range []string{"Next region of size 4194304", "InUse at ", " of size 2097152 next 1", "Free  at "} {
		if !strings.Contains(o.Log, line) {
			t.Errorf("OOM log lacks %q", line)
		}
	}
	if got, want := a.RenderOccupancy(), strings.Repeat("*", 38)+strings.Repeat("x", 12)+strings.Repeat("_", 50); got != want {
		t.Errorf("RenderOccupancy() = %q, want %q", got, want)
	}
}
