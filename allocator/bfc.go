package allocator

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// Constants of tsl's BFCAllocator (xla/tsl/framework/bfc_allocator.h and .cc).
const (
	// minAllocationSize is kMinAllocationSize: every request is rounded up to a multiple of it.
	minAllocationSize = 256
	minAllocationBits = 8
	// numBins is kNumBins: bin b holds free chunks of [256<<b, 256<<(b+1)); the last takes the rest.
	numBins = 21
	// defaultMaxInternalFragmentation is the 128 MiB default of max_internal_fragmentation_bytes_
	// (BFCAllocator constructor: "If the user did not set a fraction, default to 128MB").
	defaultMaxInternalFragmentation = 128 << 20
	// initialGrowthRegion is the first region size with allow_growth: "2MiB smallest initial
	// allocation, unless total memory available is less" (BFCAllocator constructor).
	initialGrowthRegion = 2 << 20
	// MaxWait is kMaxMillisToWait of BFCAllocator::AllocateRawInternalWithRetry: a failing
	// allocation waits this long for another thread to free memory before it reports OOM.
	MaxWait = 10 * time.Second
)

// backpedalFactor is kBackpedalFactor (Extend): a float, so the product is computed in single
// precision, as C++ does for size_t * float.
const backpedalFactor float32 = 0.9

// Variant selects the BFC code generation being modelled.
type Variant int

const (
	// Classic is TensorFlow 2.x's BFC: every free chunk lives in a size bin.
	Classic Variant = iota
	// XLASpatial is newer XLA's spatial partitioning for a fixed (preallocated) pool: the untouched
	// top of the region is a central gap kept outside the bins, requests reuse holes from the bins
	// first, then carve the gap's low end with the split rule; a freed chunk bordering the gap
	// rejoins it (bfc_allocator.cc FindChunkPtr, FindChunkPtrInCentralGap,
	// AllocateChunkFromLowEnd, ReturnBoundaryChunkToGap).
	XLASpatial
	// XLASpatialExact is the later revision of the spatial mode in which a carve from the central
	// gap always splits off exactly the rounded request (AllocateChunkFromLowEnd, split_exactly).
	XLASpatialExact
)

func (v Variant) String() string {
	switch v {
	case Classic:
		return "classic"
	case XLASpatial:
		return "xla-spatial"
	case XLASpatialExact:
		return "xla-spatial-exact"
	}
	return fmt.Sprintf("Variant(%d)", int(v))
}

// ParseVariant maps the CLI spelling to a Variant.
func ParseVariant(s string) (Variant, error) {
	switch s {
	case "classic", "":
		return Classic, nil
	case "xla-spatial":
		return XLASpatial, nil
	case "xla-spatial-exact":
		return XLASpatialExact, nil
	}
	return Classic, fmt.Errorf("unknown variant %q (want classic, xla-spatial or xla-spatial-exact)", s)
}

// BFCOptions are tsl::BFCAllocator::Options plus the knobs of the code generation.
type BFCOptions struct {
	// AllowGrowth grows the pool region by region; false reserves the whole limit as one region
	// at the first allocation (curr_region_allocation_bytes_ = RoundedBytes(total_memory)).
	AllowGrowth bool
	// GarbageCollection frees whole unused regions before declaring OOM
	// (DeallocateFreeRegions). TF turns it on by default (TF_ENABLE_GPU_GARBAGE_COLLECTION),
	// the bare BFCAllocator and JAX leave it off.
	GarbageCollection bool
	// FragmentationFraction, when > 0, sets max_internal_fragmentation_bytes_ to fraction * limit
	// (GPUOptions.Experimental.internal_fragmentation_fraction); 0 means 128 MiB.
	FragmentationFraction float64
	// AllowRetryOnFailure makes a failing allocation wait MaxWait before it fails
	// (allow_retry_on_failure, default true).
	AllowRetryOnFailure bool
	// Variant selects classic or XLA spatial partitioning (spatial needs AllowGrowth false).
	Variant Variant
	// BackpedalOnce is TF 2.x's Extend: after the device first refuses a region, it backs off by
	// 0.9x only once in the allocator's lifetime (started_backpedal_). Newer tsl backs off every
	// time and forces strict progress.
	BackpedalOnce bool
	// RegionGranularity, when > 0, is the unit in which the sub-allocator hands out regions
	// (bytes_received rounded up to it). XLA's CUDA device allocator in JAX 0.11.2 rounds to
	// 2 MiB: a second process's backed-off region of 35,329,884,160 B came back as
	// 35,330,719,744 B (pool_bytes, measured on the H200). TF's DeviceMemAllocator returns the
	// bytes asked for (0).
	RegionGranularity int64
	// NoOOMLog skips building OOM.Log (the dump walks every chunk); replays that only need the
	// statistics set it.
	NoOOMLog bool
}

// DefaultBFCOptions are TF's defaults for a GPU allocator: preallocate, garbage collection on,
// retry on failure, classic BFC.
func DefaultBFCOptions() BFCOptions {
	return BFCOptions{GarbageCollection: true, AllowRetryOnFailure: true, BackpedalOnce: true}
}

// SubAllocator hands whole regions to a BFC allocator (tsl::SubAllocator). Alloc returns the
// region's base address; ok=false when the device cannot supply the bytes.
type SubAllocator interface {
	Alloc(bytes int64) (addr int64, ok bool)
	Free(addr, bytes int64)
}

// chunk tags (BFCAllocator::ChunkTag); only the lower end is modelled: TF and JAX allocate
// buffers from the low end, the upper end serves collective buffers in newer XLA only.
const (
	tagLower uint8 = iota
	tagCentralGap
)

const noChunk = int32(-1)

type chunk struct {
	addr      int64
	size      int64
	requested int64 // bytes the client asked for; valid while in use
	prev      int32
	next      int32 // also links unused chunk records (unused_chunk_handle_head_)
	bin       int8  // -1 when not in a bin
	inUse     bool
	tag       uint8
}

type region struct {
	addr, size int64
	first      int32 // handle of the chunk at addr (never changes while the region lives)
}

// BFC is tsl::BFCAllocator, single-threaded and byte-exact in its decisions and statistics.
// Addresses are simulated; they only decide the order of equal-size chunks in a bin and the
// order of regions. The zero value is not usable: call NewBFC.
type BFC struct {
	name    string
	opts    BFCOptions
	sub     SubAllocator
	limit   int64
	maxFrag int64

	currRegion      int64
	startedBackpeal bool

	chunks     []chunk
	unusedHead int32
	bins       [numBins]bin
	nonEmpty   uint32 // bit b set when bins[b] has chunks
	centralGap int32
	regions    []region

	stats   Stats
	nextID  int64
	lastOOM *OOM
	// Device is the TF device string of this allocator's logical device, for OOM messages.
	Device string
	gcRuns int
}

var _ Allocator = (*BFC)(nil)

// NewBFC returns an allocator named name (TF: "GPU_0_bfc") with a byte limit (memory_limit_),
// drawing regions from sub. A nil sub is an unlimited device.
func NewBFC(name string, limit int64, opts BFCOptions, sub SubAllocator) *BFC {
	if limit < 0 {
		panic("allocator: negative limit")
	}
	if opts.Variant != Classic && opts.AllowGrowth {
		// BFCAllocator constructor: CHECK(!opts.enable_spatial_partitioning || !opts.allow_growth)
		panic("allocator: spatial partitioning requires a single fixed address range (allow_growth=false)")
	}
	if sub == nil {
		sub = &unlimitedSub{va: newVASpace()}
	}
	a := &BFC{name: name, opts: opts, sub: sub, limit: limit, unusedHead: noChunk, centralGap: noChunk, nextID: 1}
	if opts.AllowGrowth {
		a.currRegion = roundedBytes(min(limit, initialGrowthRegion))
	} else {
		a.currRegion = roundedBytes(limit)
	}
	a.maxFrag = defaultMaxInternalFragmentation
	if opts.FragmentationFraction > 0 {
		// opts.fragmentation_fraction * memory_limit_: a double converted to int64 (truncation).
		a.maxFrag = int64(opts.FragmentationFraction * float64(limit))
	}
	a.stats.BytesLimit = limit
	a.Device = "/job:localhost/replica:0/task:0/device:GPU:0"
	return a
}

// addr is the address of the chunk behind h; 0 for the 0-byte allocation and failed ones.
func (a *BFC) addr(h Handle) int64 {
	if h < 0 || int(h) >= len(a.chunks) {
		return 0
	}
	return a.chunks[h].addr
}

// Name is the allocator's name, e.g. "GPU_0_bfc".
func (a *BFC) Name() string { return a.name }

// Limit is memory_limit_.
func (a *BFC) Limit() int64 { return a.limit }

// Options returns the options the allocator was built with.
func (a *BFC) Options() BFCOptions { return a.opts }

// LastOOM describes the last failed allocation, nil if none failed.
func (a *BFC) LastOOM() *OOM { return a.lastOOM }

// Usage returns Stats().BytesInUse and Stats().PoolBytes without the rest (a simulator
// samples them after every request).
func (a *BFC) Usage() (inUse, pool int64) { return a.stats.BytesInUse, a.stats.PoolBytes }

// Stats returns memory_stats as GetStats computes them: largest_free_block_bytes is the largest
// free chunk in the bins or the central gap.
func (a *BFC) Stats() Stats {
	s := a.stats
	s.LargestFreeBlockBytes = a.largestFreeChunk()
	return s
}

// Fragmentation is GetFragmentation: (free in pool - largest free chunk) / free in pool; 0 when
// nothing in the pool is free.
func (a *BFC) Fragmentation() float64 {
	free := a.stats.PoolBytes - a.stats.BytesInUse
	if free <= 0 {
		return 0
	}
	return float64(free-a.largestFreeChunk()) / float64(free)
}

// roundedBytes is RoundedBytes. TF computes it in size_t; a request within 255 bytes of
// int64's maximum saturates at math.MaxInt64, still more than any pool holds, so it fails as
// TF's rounded 2^63 would.
func roundedBytes(n int64) int64 {
	if n > math.MaxInt64-(minAllocationSize-1) {
		return math.MaxInt64
	}
	return (n + minAllocationSize - 1) / minAllocationSize * minAllocationSize
}

// binNumForSize is BinNumForSize: min(kNumBins-1, Log2Floor(max(bytes,256) >> 8)).
func binNumForSize(n int64) int {
	v := uint64(max(n, minAllocationSize)) >> minAllocationBits
	b := 63 - bits.LeadingZeros64(v)
	return min(b, numBins-1)
}

// binSize is BinNumToSize: 256 << b.
func binSize(b int) int64 { return int64(minAllocationSize) << b }

func (a *BFC) largestFreeChunk() int64 {
	var largest int64
	if a.nonEmpty != 0 {
		b := 31 - bits.LeadingZeros32(a.nonEmpty)
		largest = a.bins[b].last().size
	}
	if a.centralGap != noChunk && a.chunks[a.centralGap].size > largest {
		largest = a.chunks[a.centralGap].size
	}
	return largest
}

// Allocate is AllocateRaw for size bytes. ok=false is an OOM: LastOOM says why and how long TF
// would have waited. A 0-byte request succeeds with handle -1 and changes nothing (TF never
// passes 0 bytes to the allocator: AllocateRawInternal would return nullptr).
func (a *BFC) Allocate(size int64) (Handle, bool) {
	if size < 0 {
		panic("allocator: negative allocation size")
	}
	if size == 0 {
		return -1, true
	}
	if h := a.allocateInternal(size); h != noChunk {
		return Handle(h), true
	}
	var wait time.Duration
	if a.opts.AllowRetryOnFailure {
		// AllocatorRetry::AllocateRaw waits for frees until the deadline; in a simulation nothing
		// else runs meanwhile, so the wait always runs to kMaxMillisToWait and the final attempt
		// (with verbose_failure) fails the same way.
		wait = MaxWait
		if h := a.allocateInternal(size); h != noChunk {
			return Handle(h), true
		}
	}
	a.lastOOM = a.newOOM(size, wait)
	return -1, false
}

func (a *BFC) allocateInternal(size int64) int32 {
	rounded := roundedBytes(size)
	binNum := binNumForSize(rounded)
	if h := a.findChunk(binNum, rounded, size); h != noChunk {
		return h
	}
	if a.extend(rounded) {
		if h := a.findChunk(binNum, rounded, size); h != noChunk {
			return h
		}
	}
	if a.deallocateFreeRegions(rounded) && a.extend(rounded) {
		if h := a.findChunk(binNum, rounded, size); h != noChunk {
			return h
		}
	}
	return noChunk
}

// findChunk is FindChunkPtr: first fit from the request's bin in (size, address) order, then
// (spatial) the central gap.
func (a *BFC) findChunk(binNum int, rounded, size int64) int32 {
	// Bins below binNum hold only smaller chunks; in binNum the first fit is the lower bound of
	// (rounded, 0); in any higher bin every chunk fits, so the first one is taken.
	if mask := a.nonEmpty >> binNum << binNum; mask != 0 {
		b := bits.TrailingZeros32(mask)
		bn := &a.bins[b]
		i := 0
		if b == binNum {
			i = bn.lowerBound(rounded)
			if i == len(bn.e) {
				mask &^= 1 << b
				if mask == 0 {
					goto gap
				}
				b = bits.TrailingZeros32(mask)
				bn = &a.bins[b]
				i = 0
			}
		}
		h := bn.e[i].h
		a.removeAt(b, i)
		return a.allocateFromLowEnd(h, rounded, size)
	}
gap:
	if a.centralGap != noChunk && a.chunks[a.centralGap].size >= rounded {
		h := a.centralGap
		a.centralGap = noChunk
		return a.allocateFromLowEnd(h, rounded, size)
	}
	return noChunk
}

// allocateFromLowEnd is AllocateChunkFromLowEnd without alignment padding (every chunk address
// is a multiple of 256, which is TF's alignment).
func (a *BFC) allocateFromLowEnd(h int32, rounded, size int64) int32 {
	c := &a.chunks[h]
	var split bool
	if c.tag == tagCentralGap && a.opts.Variant == XLASpatialExact {
		split = c.size > rounded
	} else {
		// "If we can break the size of the chunk into two reasonably large pieces, don't waste
		// more than max_internal_fragmentation_bytes on padding."
		split = c.size >= rounded*2 || c.size-rounded >= a.maxFrag
	}
	if split {
		a.splitChunk(h, rounded)
		c = &a.chunks[h]
	}
	c.tag = tagLower
	c.requested = size
	c.inUse = true
	a.nextID++
	a.stats.NumAllocs++
	a.stats.BytesInUse += c.size
	a.stats.PeakBytesInUse = max(a.stats.PeakBytesInUse, a.stats.BytesInUse)
	a.stats.LargestAllocSize = max(a.stats.LargestAllocSize, c.size)
	return h
}

func (a *BFC) newChunk() int32 {
	if a.unusedHead != noChunk {
		h := a.unusedHead
		a.unusedHead = a.chunks[h].next
		return h
	}
	a.chunks = append(a.chunks, chunk{})
	return int32(len(a.chunks) - 1)
}

func (a *BFC) deleteChunk(h int32) {
	c := &a.chunks[h]
	*c = chunk{bin: -1, next: a.unusedHead, prev: noChunk}
	a.unusedHead = h
}

// splitChunk is SplitChunk: h keeps the first n bytes, the rest becomes a free chunk with h's tag.
func (a *BFC) splitChunk(h int32, n int64) {
	nh := a.newChunk()
	c := &a.chunks[h]
	nc := &a.chunks[nh]
	*nc = chunk{addr: c.addr + n, size: c.size - n, prev: h, next: c.next, bin: -1, tag: c.tag}
	c.size = n
	if c.next != noChunk {
		a.chunks[c.next].prev = nh
	}
	c.next = nh
	a.insertFree(nh)
}

// insertFree is InsertFreeChunk: the central gap is kept apart, everything else goes to its bin.
func (a *BFC) insertFree(h int32) {
	c := &a.chunks[h]
	if c.tag == tagCentralGap {
		if a.centralGap != noChunk {
			panic("allocator: spatial partitioning expects one central gap")
		}
		a.centralGap = h
		return
	}
	b := binNumForSize(c.size)
	c.bin = int8(b)
	a.bins[b].insert(binEntry{size: c.size, addr: c.addr, h: h})
	a.nonEmpty |= 1 << b
}

// removeFree is RemoveFreeChunk.
func (a *BFC) removeFree(h int32) {
	c := &a.chunks[h]
	if c.tag == tagCentralGap && c.bin < 0 {
		a.centralGap = noChunk
		return
	}
	b := int(c.bin)
	i := a.bins[b].find(c.size, c.addr)
	a.removeAt(b, i)
}

func (a *BFC) removeAt(b, i int) {
	bn := &a.bins[b]
	a.chunks[bn.e[i].h].bin = -1
	bn.removeAt(i)
	if len(bn.e) == 0 {
		a.nonEmpty &^= 1 << b
	}
}

// Free is DeallocateRaw: mark free, return a chunk bordering the gap to it (spatial), coalesce
// with the next then the previous chunk of the same region, insert.
func (a *BFC) Free(hd Handle) {
	if hd == -1 {
		return // the 0-byte allocation
	}
	h := int32(hd)
	if hd < 0 || int(h) >= len(a.chunks) || !a.chunks[h].inUse {
		panic(fmt.Sprintf("allocator: free of handle %d that is not in use", hd))
	}
	c := &a.chunks[h]
	c.inUse = false
	a.stats.BytesInUse -= c.size
	if a.opts.Variant != Classic && c.tag == tagLower {
		// ReturnBoundaryChunkToGap
		if c.next == noChunk || a.chunks[c.next].tag != tagLower {
			c.tag = tagCentralGap
		}
	}
	a.insertFree(a.coalesce(h))
}

// coalesce is TryToCoalesce: merge the next chunk into h, then h into the previous one.
func (a *BFC) coalesce(h int32) int32 {
	c := &a.chunks[h]
	if n := c.next; n != noChunk && !a.chunks[n].inUse {
		a.removeFree(n)
		a.merge(h, n)
	}
	if p := a.chunks[h].prev; p != noChunk && !a.chunks[p].inUse {
		a.removeFree(p)
		a.merge(p, h)
		return p
	}
	return h
}

// merge is MergeChunks: h2 (the next chunk) joins h1.
func (a *BFC) merge(h1, h2 int32) {
	c1, c2 := &a.chunks[h1], &a.chunks[h2]
	c1.next = c2.next
	if c2.next != noChunk {
		a.chunks[c2.next].prev = h1
	}
	c1.size += c2.size
	if c1.tag != c2.tag {
		// MergedChunkTag: a hole meeting the gap (or the other end) becomes the gap.
		c1.tag = tagCentralGap
	}
	a.deleteChunk(h2)
}

// extend is Extend: ask the sub-allocator for a new region big enough for rounded.
func (a *BFC) extend(rounded int64) bool {
	available := (a.limit - a.stats.PoolBytes) / minAllocationSize * minAllocationSize
	if rounded > available {
		return false
	}
	increased := false
	for rounded > a.currRegion {
		// Doubling past int64 (a limit near 2^63 in a replay) saturates instead of wrapping.
		if a.currRegion > math.MaxInt64/2 {
			a.currRegion = math.MaxInt64
		} else {
			a.currRegion *= 2
		}
		increased = true
	}
	bytes := min(a.currRegion, available)
	addr, ok := a.sub.Alloc(a.received(bytes))
	if !ok {
		if a.opts.BackpedalOnce {
			if a.startedBackpeal {
				return false
			}
			a.startedBackpeal = true
		}
		for !ok {
			back := roundedBytes(int64(float32(bytes) * backpedalFactor))
			if !a.opts.BackpedalOnce && back >= bytes {
				back = bytes - minAllocationSize // newer tsl: force strict progress
			}
			bytes = back
			if bytes < rounded {
				return false
			}
			addr, ok = a.sub.Alloc(a.received(bytes))
		}
	}
	bytes = a.received(bytes)
	if !increased {
		a.currRegion *= 2
	}
	a.stats.PoolBytes += bytes
	a.stats.PeakPoolBytes = max(a.stats.PeakPoolBytes, a.stats.PoolBytes)

	h := a.newChunk()
	tag := tagLower
	if a.opts.Variant != Classic {
		tag = tagCentralGap
	}
	a.chunks[h] = chunk{addr: addr, size: bytes, prev: noChunk, next: noChunk, bin: -1, tag: tag}
	// AddAllocationRegion keeps regions sorted by end address.
	i := len(a.regions)
	for i > 0 && a.regions[i-1].addr > addr {
		i--
	}
	a.regions = append(a.regions, region{})
	copy(a.regions[i+1:], a.regions[i:])
	a.regions[i] = region{addr: addr, size: bytes, first: h}
	// A new region from a non-coalescing sub-allocator has no neighbours: insert it whole.
	a.insertFree(h)
	return true
}

// received is the region size the sub-allocator hands back for a request of n bytes.
func (a *BFC) received(n int64) int64 {
	if g := a.opts.RegionGranularity; g > 0 {
		return (n + g - 1) / g * g
	}
	return n
}

// deallocateFreeRegions is DeallocateFreeRegions: with garbage collection on, give every region
// without a chunk in use back to the device, if that could make room for rounded.
func (a *BFC) deallocateFreeRegions(rounded int64) bool {
	if !a.opts.GarbageCollection {
		return false
	}
	var total int64
	for _, r := range a.regions {
		if !a.regionInUse(r) {
			total += r.size
		}
	}
	if total == 0 {
		return false
	}
	if rounded > a.limit-a.stats.PoolBytes+total {
		return false
	}
	a.gcRuns++
	kept := a.regions[:0]
	for _, r := range a.regions {
		if a.regionInUse(r) {
			kept = append(kept, r)
			continue
		}
		for h := r.first; h != noChunk; {
			next := a.chunks[h].next
			a.removeFree(h)
			a.deleteChunk(h)
			h = next
		}
		a.sub.Free(r.addr, r.size)
		a.stats.PoolBytes -= r.size
	}
	a.regions = kept
	return true
}

func (a *BFC) regionInUse(r region) bool {
	for h := r.first; h != noChunk; h = a.chunks[h].next {
		if a.chunks[h].inUse {
			return true
		}
	}
	return false
}

// GCRuns counts how often garbage collection gave regions back ("Garbage collection: deallocate
// free memory regions" warnings).
func (a *BFC) GCRuns() int { return a.gcRuns }

// Release gives every region back to the sub-allocator (the allocator's destructor); the
// allocator must not be used afterwards.
func (a *BFC) Release() {
	for _, r := range a.regions {
		a.sub.Free(r.addr, r.size)
	}
	a.regions = nil
	a.stats.PoolBytes = 0
}

// unlimitedSub is a device with no memory limit, placing regions as Device does.
type unlimitedSub struct{ va vaSpace }

func (u *unlimitedSub) Alloc(bytes int64) (int64, bool) { return u.va.place(bytes), true }

func (u *unlimitedSub) Free(addr, bytes int64) {}
