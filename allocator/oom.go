package allocator

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// HumanReadableNumBytes formats n as tsl's strings::HumanReadableNumBytes (tsl/platform/numbers.cc):
// bytes below 1 KiB as "123B", KiB with one decimal, larger units with two ("3.07GiB").
func HumanReadableNumBytes(n int64) string {
	if n == -1<<63 {
		return "-8E"
	}
	neg := ""
	if n < 0 {
		neg = "-"
		n = -n
	}
	if n < 1024 {
		return neg + strconv.FormatInt(n, 10) + "B"
	}
	const units = "KMGTPE"
	u := 0
	for n >= 1024*1024 {
		n /= 1024
		u++
	}
	if units[u] == 'K' {
		return fmt.Sprintf("%s%.1f%ciB", neg, float64(n)/1024.0, units[u])
	}
	return fmt.Sprintf("%s%.2f%ciB", neg, float64(n)/1024.0, units[u])
}

// TensorMessage is the ResourceExhausted text TF's OpKernelContext gives when a tensor cannot be
// allocated: shape in TensorShape::DebugString form ("[32,224,224,3]"), dtype as DataTypeString
// ("float", "half", "uint8").
func TensorMessage(shape, dtype, device, allocatorName string) string {
	return "OOM when allocating tensor with shape" + shape + " and type " + dtype + " on " + device +
		" by allocator " + allocatorName
}

// UserError is the exception a Keras/TF user sees for this OOM.
func (o *OOM) UserError() string {
	// The hint is appended by TF's executor to every ResourceExhausted status (tensorflow/core/
	// common_runtime/executor.cc: "Hint: If you want to see a list of allocated tensors ...").
	return "ResourceExhaustedError: " + o.Message +
		"\nHint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to RunOptions for current allocation info. This isn't available when running in Eager mode."
}

func (a *BFC) newOOM(size int64, wait time.Duration) *OOM {
	rounded := roundedBytes(size)
	o := &OOM{
		Requested:     size,
		Rounded:       rounded,
		Fragmentation: a.Fragmentation(),
		Wait:          wait,
		Allocator:     a.name,
		Device:        a.Device,
	}
	o.Message = TensorMessage("["+strconv.FormatInt(size, 10)+"]", "uint8", a.Device, a.name)
	if a.opts.NoOOMLog {
		return o
	}
	var b strings.Builder
	// BFCAllocator::AllocateRawInternal (TF 2.x text, including its missing space and doubled line).
	fmt.Fprintf(&b, "Allocator (%s) ran out of memory trying to allocate %s (rounded to %d)requested by op \n",
		a.name, HumanReadableNumBytes(size), rounded)
	b.WriteString("If the cause is memory fragmentation maybe the environment variable 'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the situation. \n")
	b.WriteString("Current allocation summary follows.\nCurrent allocation summary follows.\n")
	a.dumpMemoryLog(&b, rounded)
	b.WriteString(a.RenderOccupancy())
	b.WriteString("\n")
	o.Log = b.String()
	o.Regions = a.regionDump()
	return o
}

// regionDump is the pool's layout as dumpMemoryLog walks it, with each chunk's requested size.
func (a *BFC) regionDump() []RegionDump {
	out := make([]RegionDump, 0, len(a.regions))
	for _, r := range a.regions {
		d := RegionDump{Size: r.size}
		for h := r.first; h != noChunk; h = a.chunks[h].next {
			c := &a.chunks[h]
			ch := ChunkDump{Size: c.size, InUse: c.inUse}
			if c.inUse {
				ch.Requested = c.requested
			}
			d.Chunks = append(d.Chunks, ch)
		}
		out = append(out, d)
	}
	return out
}

type binDebugInfo struct {
	bytesInBin, bytesInUse, requestedInUse int64
	chunksInBin, chunksInUse               int
}

// dumpMemoryLog is BFCAllocator::DumpMemoryLog (TF 2.x).
func (a *BFC) dumpMemoryLog(w *strings.Builder, rounded int64) {
	var infos [numBins]binDebugInfo
	a.walk(func(h int32, c *chunk) {
		in := &infos[binNumForSize(c.size)]
		in.bytesInBin += c.size
		in.chunksInBin++
		if c.inUse {
			in.bytesInUse += c.size
			in.requestedInUse += c.requested
			in.chunksInUse++
		}
	})
	fmt.Fprintf(w, "BFCAllocator dump for %s\n", a.name)
	for b := 0; b < numBins; b++ {
		in := infos[b]
		fmt.Fprintf(w, "Bin (%d): \tTotal Chunks: %d, Chunks in use: %d. %s allocated for chunks. %s in use in bin. %s client-requested in use in bin.\n",
			binSize(b), in.chunksInBin, in.chunksInUse, HumanReadableNumBytes(in.bytesInBin),
			HumanReadableNumBytes(in.bytesInUse), HumanReadableNumBytes(in.requestedInUse))
	}
	bn := binNumForSize(rounded)
	fmt.Fprintf(w, "Bin for %s was %s, Chunk State: \n", HumanReadableNumBytes(rounded), HumanReadableNumBytes(binSize(bn)))
	for _, e := range a.bins[bn].e {
		w.WriteString(a.chunkDebugString(e.h, true))
		w.WriteString("\n")
	}
	inUseBySize := map[int64]int{}
	for _, r := range a.regions {
		fmt.Fprintf(w, "Next region of size %d\n", r.size)
		for h := r.first; h != noChunk; h = a.chunks[h].next {
			c := &a.chunks[h]
			state := "Free "
			if c.inUse {
				state = "InUse"
				inUseBySize[c.size]++
			}
			fmt.Fprintf(w, "%s at %x of size %d next %d\n", state, c.addr, c.size, c.next)
		}
	}
	w.WriteString("     Summary of in-use Chunks by size: \n")
	sizes := make([]int64, 0, len(inUseBySize))
	for s := range inUseBySize {
		sizes = append(sizes, s)
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	var total int64
	for _, s := range sizes {
		n := inUseBySize[s]
		fmt.Fprintf(w, "%d Chunks of size %d totalling %s\n", n, s, HumanReadableNumBytes(s*int64(n)))
		total += s * int64(n)
	}
	fmt.Fprintf(w, "Sum Total of in-use chunks: %s\n", HumanReadableNumBytes(total))
	fmt.Fprintf(w, "total_region_allocated_bytes_: %d memory_limit_: %d available bytes: %d curr_region_allocation_bytes_: %d\n",
		a.stats.PoolBytes, a.limit, a.limit-a.stats.PoolBytes, a.currRegion)
	s := a.Stats()
	// AllocatorStats::DebugString.
	fmt.Fprintf(w, "Stats: \nLimit:            %20d\nInUse:            %20d\nMaxInUse:         %20d\nNumAllocs:        %20d\nMaxAllocSize:     %20d\nReserved:         %20d\nPeakReserved:     %20d\nLargestFreeBlock: %20d\n\n",
		s.BytesLimit, s.BytesInUse, s.PeakBytesInUse, s.NumAllocs, s.LargestAllocSize, s.BytesReserved, s.PeakBytesReserved, s.LargestFreeBlockBytes)
}

// chunkDebugString is BFCAllocator::Chunk::DebugString.
func (a *BFC) chunkDebugString(h int32, recurse bool) string {
	c := &a.chunks[h]
	inUse := 0
	if c.inUse {
		inUse = 1
	}
	s := fmt.Sprintf("  Size: %s | Requested Size: %s | in_use: %d | bin_num: %d",
		HumanReadableNumBytes(c.size), HumanReadableNumBytes(c.requested), inUse, c.bin)
	if recurse && c.prev != noChunk {
		s += ", prev: " + a.chunkDebugString(c.prev, false)
	}
	if recurse && c.next != noChunk {
		s += ", next: " + a.chunkDebugString(c.next, false)
	}
	return s
}

// walk visits every chunk of every region in address order.
func (a *BFC) walk(fn func(h int32, c *chunk)) {
	for _, r := range a.regions {
		for h := r.first; h != noChunk; h = a.chunks[h].next {
			fn(h, &a.chunks[h])
		}
	}
}

// RenderOccupancy is BFCAllocator::RenderOccupancy: 100 characters over all regions, '*' for
// requested bytes in use, 'x' for the rounding waste of in-use chunks, '_' for free.
func (a *BFC) RenderOccupancy() string {
	const resolution = 100
	var total int64
	for _, r := range a.regions {
		total += r.size
	}
	if total == 0 {
		return "<allocator contains no memory>"
	}
	out := []byte(strings.Repeat("_", resolution))
	render := func(offset, base, ptr, size int64, ch byte) {
		start := (ptr - base + offset) * resolution / total
		end := (ptr + size - 1 - base + offset) * resolution / total
		for i := start; i <= end && i < resolution; i++ {
			out[i] = ch
		}
	}
	var off int64
	for _, r := range a.regions {
		for h := r.first; h != noChunk; h = a.chunks[h].next {
			c := &a.chunks[h]
			if !c.inUse {
				continue
			}
			if wasted := c.size - c.requested; wasted > 0 {
				render(off+c.requested, r.addr, c.addr, wasted, 'x')
			}
			render(off, r.addr, c.addr, c.requested, '*')
		}
		off += r.size
	}
	return string(out)
}
