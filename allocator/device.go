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
	// ContextBytes is what each process's CUDA context takes (measured on the H200: JAX 0.11.2
	// 562,888,704 B for the first process and 559,480,832 B for a second one, NVML used after
	// jax.devices() minus before; PyTorch 621 MiB).
	ContextBytes     int64
	CCMajor, CCMinor int
}

// H200Spec is the measured H200 of this project (NVML on the real card, 2026-11-29; see
// allocator/testdata/traces/README.md).
func H200Spec(index int) DeviceSpec {
	return DeviceSpec{Index: index, Name: "H200", TotalBytes: 150_754_820_096,
		DriverReservedBytes: 644_939_776, ContextBytes: 562_888_704, CCMajor: 9, CCMinor: 0}
}

// CUDATotalBytes is the total that cuMemGetInfo reports, which TF and XLA use as "total memory":
// NVML's total less the driver's reserve (measured on the H200: 150,109,880,320 B = 143,156 MiB,
// which is also what NVML reports free at idle).
func (s DeviceSpec) CUDATotalBytes() int64 { return s.TotalBytes - s.DriverReservedBytes }

// Device is a physical GPU whose memory is shared by every simulated process: contexts, BFC
// regions, cudaMalloc calls and stream-ordered pools all draw from it.
type Device struct {
	spec DeviceSpec
	used int64
	va   vaSpace
}

// smallRegion is the size below which the driver's address placement differs (vaSpace).
const smallRegion = 32 << 20

// vaSpace places regions in a device's virtual address space. Only the order of addresses
// matters to BFC (equal-size free chunks are taken lowest address first), and the CUDA driver's
// placement is not documented. The model is an empirical fit to the growth traces recorded with
// JAX 0.11.2 on the H200 (testdata/traces): regions under 32 MiB are stacked downward from a
// high address, larger ones upward from a lower one. It reproduces 9,092 of the 10,072 rows of
// the growth traces exactly; placing every region above the previous one reproduces 4,587.
type vaSpace struct{ top, bottom int64 }

func newVASpace(base int64) vaSpace { return vaSpace{top: base + 1<<44, bottom: base} }

func (v *vaSpace) place(n int64) int64 {
	p := pages(n)
	if p < smallRegion {
		v.top -= p
		return v.top
	}
	a := v.bottom
	v.bottom += p
	return a
}

// NewDevice returns an idle GPU: only the driver's reserve is used.
func NewDevice(spec DeviceSpec) *Device {
	if spec.TotalBytes <= 0 {
		panic("allocator: device with no memory")
	}
	// Device virtual addresses start at a CUDA-like base; they only order regions.
	return &Device{spec: spec, used: spec.DriverReservedBytes, va: newVASpace(int64(spec.Index+1) << 45)}
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
	d.check()
}

// reserveContext takes a CUDA context's bytes (not rounded: the measured sizes are not whole
// pages).
func (d *Device) reserveContext(n int64) bool {
	if n > d.FreeBytes() {
		return false
	}
	d.used += n
	return true
}

func (d *Device) releaseContext(n int64) {
	d.used -= n
	d.check()
}

func (d *Device) check() {
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
	return d.va.place(bytes), true
}

// Free is cudaFree of a region.
func (d *Device) Free(addr, bytes int64) { d.release(bytes) }

var _ SubAllocator = (*Device)(nil)
