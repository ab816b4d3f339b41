package allocator

import "fmt"

// granularity is the unit in which the CUDA driver backs device allocations: cudaMalloc and the
// stream-ordered pool map physical memory in 2 MiB pages on current GPUs (CUDA Driver API,
// cuMemGetAllocationGranularity with CU_MEM_ALLOC_GRANULARITY_MINIMUM is 2 MiB on Ampere and
// Hopper). Approximation: the driver may pack several small cudaMalloc calls into one page; we
// charge every region or cudaMalloc call whole pages.
const granularity = 2 << 20

// DeviceSpec describes one physical GPU.
type DeviceSpec struct {
	Index int    // physical index (nvidia-smi order)
	Name  string // "H200"
	// TotalBytes is the memory NVML/cuMemGetInfo report as total.
	TotalBytes int64
	// DriverReservedBytes is used before any process starts (NVML "used" at idle; measured on the
	// H200: 644,939,776 B).
	DriverReservedBytes int64
	// ContextBytes is what each process's CUDA context takes (measured on the H200: JAX 528 MiB,
	// PyTorch 621 MiB).
	ContextBytes     int64
	CCMajor, CCMinor int
}

// H200Spec is the measured H200 of this project (NVML on the real card, REFERENCE.md).
func H200Spec(index int) DeviceSpec {
	return DeviceSpec{Index: index, Name: "H200", TotalBytes: 150_754_820_096,
		DriverReservedBytes: 644_939_776, ContextBytes: 528 << 20, CCMajor: 9, CCMinor: 0}
}

// Device is a physical GPU whose memory is shared by every simulated process: contexts, BFC
// regions, cudaMalloc calls and stream-ordered pools all draw from it.
type Device struct {
	spec     DeviceSpec
	used     int64
	nextAddr int64
}

// NewDevice returns an idle GPU: only the driver's reserve is used.
func NewDevice(spec DeviceSpec) *Device {
	if spec.TotalBytes <= 0 {
		panic("allocator: device with no memory")
	}
	// Device virtual addresses start at a CUDA-like base; they only order regions.
	return &Device{spec: spec, used: spec.DriverReservedBytes, nextAddr: 0x7f0000000000 + int64(spec.Index)<<40}
}

// Spec returns the device description.
func (d *Device) Spec() DeviceSpec { return d.spec }

// FreeBytes is what cuMemGetInfo would report as free now.
func (d *Device) FreeBytes() int64 { return d.spec.TotalBytes - d.used }

// UsedBytes is what nvidia-smi would report as used now.
func (d *Device) UsedBytes() int64 { return d.used }

func pages(n int64) int64 { return (n + granularity - 1) / granularity * granularity }

// reserve takes n bytes of physical memory (whole pages); false if the card has not enough.
func (d *Device) reserve(n int64) bool {
	n = pages(n)
	if n > d.FreeBytes() {
		return false
	}
	d.used += n
	return true
}

func (d *Device) release(n int64) {
	d.used -= pages(n)
	if d.used < d.spec.DriverReservedBytes {
		panic(fmt.Sprintf("allocator: device %d released more memory than it handed out", d.spec.Index))
	}
}

// Alloc is cudaMalloc of a region: the SubAllocator of a BFC allocator on this device
// (se::DeviceMemAllocator, which does not coalesce regions).
func (d *Device) Alloc(bytes int64) (int64, bool) {
	if !d.reserve(bytes) {
		return 0, false
	}
	addr := d.nextAddr
	d.nextAddr += pages(bytes)
	return addr, true
}

// Free is cudaFree of a region.
func (d *Device) Free(addr, bytes int64) { d.release(bytes) }

var _ SubAllocator = (*Device)(nil)
