package allocator

import "time"

// Handle names one live allocation of an Allocator.
type Handle int64

// Stats are an allocator's memory statistics, named as tsl::AllocatorStats and
// jax.Device.memory_stats() name them.
type Stats struct {
	NumAllocs             int64 // successful allocations so far
	BytesInUse            int64 // bytes of chunks in use (chunk sizes, not requested sizes)
	PeakBytesInUse        int64
	LargestAllocSize      int64 // largest chunk handed out
	BytesLimit            int64 // the allocator's memory limit
	BytesReserved         int64 // always 0 for BFC
	PeakBytesReserved     int64
	LargestFreeBlockBytes int64 // largest free chunk (bins or central gap)
	PoolBytes             int64 // bytes of all regions taken from the device
	PeakPoolBytes         int64
}

// Allocator is one logical device's memory allocator.
type Allocator interface {
	Name() string                       // "GPU_0_bfc"
	Allocate(size int64) (Handle, bool) // false = OOM (a result, not an error)
	Free(h Handle)
	Stats() Stats
	LastOOM() *OOM // nil until an Allocate failed
}

// OOM describes a failed allocation as TensorFlow reports it.
type OOM struct {
	Requested, Rounded int64
	// Log is TF's WARNING "Allocator (GPU_0_bfc) ran out of memory trying to allocate ..." followed
	// by the allocator dump (bins, chunks per region, in-use summary, stats) and the occupancy map.
	Log string
	// Message is the user-facing ResourceExhaustedError text for a uint8 tensor of the requested
	// size; callers that know the tensor's shape and dtype can rebuild it with TensorMessage.
	Message string
	// Fragmentation is (free in pool - largest free chunk) / free in pool at the time of failure.
	Fragmentation float64
	// Wait is how long the allocator waited for frees before failing (TF: kMaxMillisToWait, 10 s).
	Wait time.Duration
	// Allocator and Device name where it happened.
	Allocator, Device string
	// Regions is the pool at the failure, region by region in the dump's order, with what
	// each chunk in use was asked for (the dump prints chunk sizes only; TF keeps the
	// requested size per chunk, bfc_allocator.h Chunk::requested_size, and RenderOccupancy
	// draws the difference as 'x'). Nil where Log is not built (BFCOptions.NoOOMLog).
	Regions []RegionDump
}

// RegionDump is one region of a BFC pool (one cudaMalloc) and its chunks in address order.
type RegionDump struct {
	Size   int64
	Chunks []ChunkDump
}

// ChunkDump is one chunk of a region. Requested is what the client asked for while the chunk
// is in use (0 when free): the rest of Size is rounding and the unsplit tail of the free
// chunk it was cut from (BFCAllocator::FindChunkPtr splits only when the remainder is at least
// the request or kMaxInternalFragmentation), memory that serves nobody until it is freed.
type ChunkDump struct {
	Size, Requested int64
	InUse           bool
}
