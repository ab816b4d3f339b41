package allocator

import (
	"fmt"
	"math"
	"strconv"
)

// Async models TF_GPU_ALLOCATOR=cuda_malloc_async (TF's GpuCudaMallocAsyncAllocator over CUDA's
// stream-ordered memory pool, cuMemAllocFromPoolAsync). Modelled from CUDA's documented
// behaviour:
//   - the pool maps physical memory in 2 MiB pages and suballocates from them, remapping virtual
//     addresses as needed, so there is no BFC-style fragmentation: a request fits when the pages
//     for all live bytes fit;
//   - freed memory stays in the pool until it exceeds the release threshold, which TF sets to the
//     pool size (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = limit): the pool keeps its high-water mark;
//   - a request that the device cannot back fails after one stream synchronization (no 10 s wait).
//
// Approximations: live bytes are charged as pages(sum of live sizes) (CUDA packs small blocks
// into shared pages but may waste some), and the allocator enforces bytes_limit itself.
type Async struct {
	name, device string
	limit        int64
	dev          *Device
	sizes        []int64 // by handle; -1 = free slot
	freeSlots    []Handle
	stats        Stats
	lastOOM      *OOM
}

var _ Allocator = (*Async)(nil)

// NewAsync returns a cudaMallocAsync allocator named name with a limit, on dev (nil = unlimited).
func NewAsync(name, device string, limit int64, dev *Device) *Async {
	return &Async{name: name, device: device, limit: limit, dev: dev, stats: Stats{BytesLimit: limit}}
}

func (a *Async) Name() string  { return a.name }
func (a *Async) LastOOM() *OOM { return a.lastOOM }
func (a *Async) Stats() Stats {
	s := a.stats
	s.LargestFreeBlockBytes = max(0, a.limit-s.BytesInUse)
	return s
}

// Allocate is AllocateRaw: it grows the pool in pages when the live bytes need more.
func (a *Async) Allocate(size int64) (Handle, bool) {
	if size < 0 {
		panic("allocator: negative allocation size")
	}
	if size == 0 {
		return -1, true
	}
	ok := size <= a.limit-a.stats.BytesInUse // BytesInUse <= limit: no overflow
	if need := pages(a.stats.BytesInUse + size); ok && need > a.stats.PoolBytes {
		ok = a.dev == nil || a.dev.reserve(need-a.stats.PoolBytes)
		if ok {
			a.stats.PoolBytes = need
			a.stats.PeakPoolBytes = max(a.stats.PeakPoolBytes, need)
		}
	}
	if !ok {
		a.lastOOM = a.oom(size)
		return -1, false
	}
	a.stats.NumAllocs++
	a.stats.BytesInUse += size
	a.stats.PeakBytesInUse = max(a.stats.PeakBytesInUse, a.stats.BytesInUse)
	a.stats.LargestAllocSize = max(a.stats.LargestAllocSize, size)
	return allocSlot(&a.sizes, &a.freeSlots, size), true
}

func (a *Async) oom(size int64) *OOM {
	free, total := a.limit-a.stats.BytesInUse, a.limit
	if a.dev != nil {
		free, total = a.dev.FreeBytes(), a.dev.spec.TotalBytes
	}
	return &OOM{
		Requested: size, Rounded: size, Allocator: a.name, Device: a.device,
		// gpu_cudamallocasync_allocator.cc AllocateRaw.
		Log: fmt.Sprintf("%s cuMemAllocAsync failed to allocate %d bytes: CUDA error: out of memory (CUDA_ERROR_OUT_OF_MEMORY)\n Reported by CUDA: Free memory/Total memory: %d/%d\n",
			a.name, size, free, total),
		Message: TensorMessage("["+strconv.FormatInt(size, 10)+"]", "uint8", a.device, a.name),
	}
}

// Free is DeallocateRaw: the bytes return to the pool, which keeps its pages.
func (a *Async) Free(h Handle) {
	if h == -1 {
		return
	}
	a.stats.BytesInUse -= freeSlot(a.sizes, &a.freeSlots, h)
}

// Release gives the pool back to the device (process exit).
func (a *Async) Release() {
	if a.dev != nil {
		a.dev.release(a.stats.PoolBytes)
	}
	a.stats.PoolBytes = 0
}

// Platform models a cudaMalloc per tensor (TF_GPU_ALLOCATOR=cuda_malloc, GPUcudaMallocAllocator;
// JAX XLA_PYTHON_CLIENT_ALLOCATOR=platform): every allocation takes whole 2 MiB pages from the
// device and gives them back on free. There is no pool and no fragmentation inside the process;
// the limit is not enforced (TF's cuda_malloc allocator ignores it), only the device's free
// memory. Approximation: the driver packs small allocations into shared pages; we charge each
// call whole pages.
type Platform struct {
	name, device string
	dev          *Device
	sizes        []int64
	freeSlots    []Handle
	stats        Stats
	lastOOM      *OOM
}

var _ Allocator = (*Platform)(nil)

// NewPlatform returns a cudaMalloc-per-tensor allocator on dev (nil = unlimited).
func NewPlatform(name, device string, limit int64, dev *Device) *Platform {
	return &Platform{name: name, device: device, dev: dev, stats: Stats{BytesLimit: limit}}
}

func (p *Platform) Name() string  { return p.name }
func (p *Platform) LastOOM() *OOM { return p.lastOOM }
func (p *Platform) Stats() Stats {
	s := p.stats
	if p.dev != nil {
		s.LargestFreeBlockBytes = p.dev.FreeBytes()
	}
	return s
}

// Allocate is one cudaMalloc.
func (p *Platform) Allocate(size int64) (Handle, bool) {
	if size < 0 {
		panic("allocator: negative allocation size")
	}
	if size == 0 {
		return -1, true
	}
	// Without a device the pool is unbounded; a sum past int64 fails like a full card.
	if (p.dev != nil && !p.dev.reserve(size)) || (p.dev == nil && pages(size) > math.MaxInt64-p.stats.PoolBytes) {
		free := math.MaxInt64 - p.stats.PoolBytes
		if p.dev != nil {
			free = p.dev.FreeBytes()
		}
		p.lastOOM = &OOM{Requested: size, Rounded: pages(size), Allocator: p.name, Device: p.device,
			// stream_executor cuda_driver.cc DeviceAllocate.
			Log:     fmt.Sprintf("failed to alloc %d bytes on host: CUDA_ERROR_OUT_OF_MEMORY: out of memory (free %d)\n", size, free),
			Message: TensorMessage("["+strconv.FormatInt(size, 10)+"]", "uint8", p.device, p.name)}
		return -1, false
	}
	p.stats.NumAllocs++
	p.stats.BytesInUse += size
	p.stats.PeakBytesInUse = max(p.stats.PeakBytesInUse, p.stats.BytesInUse)
	p.stats.LargestAllocSize = max(p.stats.LargestAllocSize, size)
	p.stats.PoolBytes += pages(size)
	p.stats.PeakPoolBytes = max(p.stats.PeakPoolBytes, p.stats.PoolBytes)
	return allocSlot(&p.sizes, &p.freeSlots, size), true
}

// Free is one cudaFree: the pages go back to the device at once.
func (p *Platform) Free(h Handle) {
	if h == -1 {
		return
	}
	n := freeSlot(p.sizes, &p.freeSlots, h)
	p.stats.BytesInUse -= n
	p.stats.PoolBytes -= pages(n)
	if p.dev != nil {
		p.dev.release(n)
	}
}

// Release frees whatever is still allocated (process exit).
func (p *Platform) Release() {
	for h, n := range p.sizes {
		if n >= 0 {
			p.Free(Handle(h))
		}
	}
}

func allocSlot(sizes *[]int64, free *[]Handle, size int64) Handle {
	if n := len(*free); n > 0 {
		h := (*free)[n-1]
		*free = (*free)[:n-1]
		(*sizes)[h] = size
		return h
	}
	*sizes = append(*sizes, size)
	return Handle(len(*sizes) - 1)
}

func freeSlot(sizes []int64, free *[]Handle, h Handle) int64 {
	if h < 0 || int(h) >= len(sizes) || sizes[h] < 0 {
		panic(fmt.Sprintf("allocator: free of handle %d that is not in use", h))
	}
	n := sizes[h]
	sizes[h] = -1
	*free = append(*free, h)
	return n
}
