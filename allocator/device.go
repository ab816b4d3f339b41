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

// Region placement by the CUDA driver, measured: testdata/traces-ptr holds four growth traces
// recorded on the H200 (driver 580.159.04, JAX 0.11.2) with every buffer's device address; the
// alloc that grows the pool gets the new region's first chunk, so its address is the region's
// base. The bases (README.md there):
//
//	growth-a        2 MiB at X, 4 MiB at X+4 MiB;              64, 128, ..., 8192 MiB from 0x302000000 up
//	growth-small-b  2 MiB at X;                                 16, 32, 32, 64, ..., 186 MiB from 0x302000000 up
//	growth-ties-a   2 MiB at X, 8 MiB at X+4 MiB, 16 MiB at X-2152 MiB;  32, 32, 64, ..., 382 MiB from 0x302000000 up
//	growth-tiny-ptr 2 MiB at X;                                 714 MiB at 0x302000000
//
// with X near 0x7f0000000000 (0x7f1165000000, 0x7f89b9000000, ...). Every low-range base is a
// multiple of 32 MiB (growth-small-b leaves a 16 MiB hole after its 16 MiB region).
const (
	// lowBase is where the low range starts in every trace (0x302000000).
	lowBase = 0x302000000
	// lowAlign aligns low-range bases (all measured bases are multiples of 32 MiB).
	lowAlign = 32 << 20
	// highBase stands for X, the first region's address (0x7f1165000000 in growth-small-b,
	// 0x7f89b9000000 in growth-ties-a, 0x7f5581000000 in growth-a): only the order matters.
	highBase = 0x7f0000000000
	// smallRegion: regions of 32 MiB and more always went to the low range; smaller ones to the
	// high range, except a 16 MiB region that followed a 2 MiB one (growth-small-b).
	smallRegion = 32 << 20
	// highUpRegion: high-range regions under 16 MiB went above X (4 MiB in growth-a, 8 MiB in
	// growth-ties-a), the 16 MiB one below it (growth-ties-a).
	highUpRegion = 16 << 20
	// jumpFactor: a small region more than 4x the previous one went low (16 MiB after 2 MiB,
	// growth-small-b), one of 4x or less high (8 MiB after 2 MiB and 16 after 8, growth-ties-a;
	// 4 after 2, growth-a). The threshold lies in (4, 8]; one observation decides it.
	jumpFactor = 4
)

// vaSpace places regions in a device's virtual address space, as an approximation of the CUDA
// driver fitted to the traces above. Only the order of addresses matters to BFC (equal-size
// free chunks are taken lowest address first). Rule: a region under 32 MiB that is at most 4x
// the previous region placed (or the first) goes to the high range, above X if under 16 MiB
// (each above the last), below X otherwise (each below the last); every other region goes to
// the low range, each above the last at the next multiple of 32 MiB. It reproduces the measured
// order of every region in the four traces, and the addresses of every low-range region, so it
// replays all 10,072 rows of the growth traces without addresses (testdata/traces). Not
// modelled: the driver's reuse of address space after cudaFree (a region garbage-collected and
// grown again gets fresh addresses), separate address spaces per process (processes sharing a
// Device share one vaSpace), and whatever decides the 16 MiB case beyond the 4x rule (the
// driver's heuristic is not documented).
type vaSpace struct {
	low, highUp, highDown int64 // next address of the low range, above and below X
	last                  int64 // size of the last region placed; 0 before the first
}

func newVASpace() vaSpace { return vaSpace{low: lowBase, highUp: highBase, highDown: highBase} }

func (v *vaSpace) place(n int64) int64 {
	p := pages(n)
	prev := v.last
	v.last = p
	if p < smallRegion && (prev == 0 || p <= jumpFactor*prev) {
		if p < highUpRegion {
			a := v.highUp
			v.highUp += p
			return a
		}
		v.highDown -= p
		return v.highDown
	}
	a := v.low
	v.low = (a + p + lowAlign - 1) / lowAlign * lowAlign
	return a
}

// NewDevice returns an idle GPU: only the driver's reserve is used.
func NewDevice(spec DeviceSpec) *Device {
	if spec.TotalBytes <= 0 {
		panic("allocator: device with no memory")
	}
	// Each device has its own placement; addresses of different devices are never compared.
	return &Device{spec: spec, used: spec.DriverReservedBytes, va: newVASpace()}
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
