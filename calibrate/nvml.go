//go:build cgo

package calibrate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NVML reads GPUs through go-nvml. Create it with [OpenNVML].
type NVML struct {
	lib  nvml.Interface
	devs []nvml.Device
	// lastUtil is the last NVML utilization sample timestamp seen per device (µs), so that each
	// Sample returns only the utilization samples NVML took since the previous one.
	lastUtil []uint64
}

var _ Reader = (*NVML)(nil)

// OpenNVML initializes lib (nvml.New() in production, a go-nvml mock in tests) and finds the
// visible devices. Without a driver the error wraps [ErrNoDriver].
func OpenNVML(lib nvml.Interface) (*NVML, error) {
	switch ret := lib.Init(); ret {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_DRIVER_NOT_LOADED, nvml.ERROR_NO_PERMISSION:
		return nil, fmt.Errorf("%w (nvml init: %v)", ErrNoDriver, ret)
	default:
		return nil, fmt.Errorf("nvml init: %w", ret)
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		lib.Shutdown()
		return nil, fmt.Errorf("nvml device count: %w", ret)
	}
	r := &NVML{lib: lib, lastUtil: make([]uint64, n)}
	for i := 0; i < n; i++ {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			lib.Shutdown()
			return nil, fmt.Errorf("nvml device %d handle: %w", i, ret)
		}
		r.devs = append(r.devs, d)
	}
	return r, nil
}

// Close shuts NVML down.
func (r *NVML) Close() error {
	if ret := r.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml shutdown: %w", ret)
	}
	return nil
}

// notes collects the NVML queries a device does not support, so an inventory says what it lacks
// instead of printing zeros that look like measurements.
type notes []string

func (n *notes) check(what string, ret nvml.Return) bool {
	if ret == nvml.SUCCESS {
		return true
	}
	*n = append(*n, fmt.Sprintf("%s: %v", what, ret))
	return false
}

// Inventory reads every visible GPU. Queries a device does not support are listed in its Notes.
func (r *NVML) Inventory() (*Inventory, error) {
	inv := &Inventory{}
	var sys notes
	if v, ret := r.lib.SystemGetDriverVersion(); sys.check("driver version", ret) {
		inv.DriverVersion = v
	}
	if v, ret := r.lib.SystemGetNVMLVersion(); sys.check("nvml version", ret) {
		inv.NVMLVersion = v
	}
	if v, ret := r.lib.SystemGetCudaDriverVersion(); sys.check("cuda version", ret) {
		// NVML encodes the CUDA driver API version as 1000*major + 10*minor
		// (nvml.h, nvmlSystemGetCudaDriverVersion; NVML_CUDA_DRIVER_VERSION_MAJOR/MINOR).
		inv.CUDAVersion = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	inv.Notes = sys
	busToIndex := map[string]int{}
	for i, d := range r.devs {
		g, err := r.gpu(i, d)
		if err != nil {
			return nil, err
		}
		busToIndex[normalizeBusID(g.PCIBusID)] = i
		inv.GPUs = append(inv.GPUs, g)
	}
	// NVLink peers: the remote end's PCI bus ID names a visible GPU, or an NVSwitch.
	for gi := range inv.GPUs {
		for li := range inv.GPUs[gi].NVLinks {
			l := &inv.GPUs[gi].NVLinks[li]
			l.PeerIndex = -1
			if p, ok := busToIndex[normalizeBusID(l.RemoteBusID)]; ok {
				l.PeerIndex = p
			}
		}
	}
	return inv, nil
}

func (r *NVML) gpu(i int, d nvml.Device) (GPUInfo, error) {
	g := GPUInfo{Index: i}
	var n notes
	name, ret := d.GetName()
	if ret != nvml.SUCCESS {
		return g, fmt.Errorf("nvml device %d name: %w", i, ret)
	}
	g.Name = name
	if v, ret := d.GetUUID(); n.check("uuid", ret) {
		g.UUID = v
	}
	if p, ret := d.GetPciInfo(); n.check("pci info", ret) {
		g.PCIBusID = cString(p.BusId[:])
	}
	if m, ret := d.GetMemoryInfo_v2(); ret == nvml.SUCCESS {
		g.Memory = MemoryInfo{Total: m.Total, Reserved: m.Reserved, Free: m.Free, Used: m.Used}
	} else if m1, ret1 := d.GetMemoryInfo(); n.check("memory info v2", ret) && n.check("memory info", ret1) {
		g.Memory = MemoryInfo{Total: m1.Total, Free: m1.Free, Used: m1.Used}
	}
	if ma, mi, ret := d.GetCudaComputeCapability(); n.check("compute capability", ret) {
		g.CCMajor, g.CCMinor = ma, mi
	}
	// NVML has no multiprocessor count for a whole GPU: nvmlDeviceGetAttributes answers for MIG
	// handles only (nvml.h). Ask it first, then derive the count from the CUDA core count.
	if a, ret := d.GetAttributes(); ret == nvml.SUCCESS && a.MultiprocessorCount > 0 {
		g.SMs, g.SMSource = int(a.MultiprocessorCount), "nvml attributes"
	}
	if c, ret := d.GetNumGpuCores(); n.check("gpu cores", ret) {
		g.CUDACores = c
		if g.SMs == 0 {
			if per := FP32LanesPerSM(g.CCMajor, g.CCMinor); per > 0 && c%per == 0 {
				g.SMs, g.SMSource = c/per, fmt.Sprintf("cuda cores / %d per SM", per)
			}
		}
	}
	clk := func(what string, f func(nvml.ClockType) (uint32, nvml.Return), t nvml.ClockType) int {
		v, ret := f(t)
		if !n.check(what, ret) {
			return 0
		}
		return int(v)
	}
	g.Clocks = Clocks{
		SMMHz:     clk("sm clock", d.GetClockInfo, nvml.CLOCK_SM),
		MemoryMHz: clk("memory clock", d.GetClockInfo, nvml.CLOCK_MEM),
		MaxSMMHz:  clk("max sm clock", d.GetMaxClockInfo, nvml.CLOCK_SM),
		MaxMemMHz: clk("max memory clock", d.GetMaxClockInfo, nvml.CLOCK_MEM),
	}
	if w, ret := d.GetMemoryBusWidth(); n.check("memory bus width", ret) {
		g.MemoryBusWidthBits = int(w)
	}
	if v, ret := d.GetCurrPcieLinkGeneration(); n.check("pcie generation", ret) {
		g.PCIe.Generation = v
	}
	if v, ret := d.GetMaxPcieLinkGeneration(); n.check("pcie max generation", ret) {
		g.PCIe.MaxGeneration = v
	}
	if v, ret := d.GetCurrPcieLinkWidth(); n.check("pcie width", ret) {
		g.PCIe.Width = v
	}
	if v, ret := d.GetMaxPcieLinkWidth(); n.check("pcie max width", ret) {
		g.PCIe.MaxWidth = v
	}
	if v, ret := d.GetPowerManagementLimit(); n.check("power limit", ret) {
		g.PowerLimitW = float64(v) / 1000 // NVML reports milliwatts
	}
	g.NVLinks = nvlinks(d, &n)
	procs, err := r.processes(d)
	if err != nil {
		n = append(n, err.Error())
	}
	for _, p := range procs {
		name, ret := r.lib.SystemGetProcessName(int(p.PID))
		if ret == nvml.SUCCESS {
			p.Name = name
		}
		g.Processes = append(g.Processes, p)
	}
	g.Notes = n
	return g, nil
}

// nvlinks lists the active NVLink links of d. A GPU without NVLink (or a VM that hides it)
// answers NOT_SUPPORTED for link 0: one note says so.
func nvlinks(d nvml.Device, n *notes) []NVLink {
	var links []NVLink
	for l := 0; l < nvml.NVLINK_MAX_LINKS; l++ {
		st, ret := d.GetNvLinkState(l)
		if ret == nvml.ERROR_INVALID_ARGUMENT && l > 0 {
			break // past the device's last link
		}
		if ret == nvml.ERROR_NOT_SUPPORTED && l == 0 {
			n.check("nvlink", ret)
			break
		}
		if !n.check(fmt.Sprintf("nvlink %d state", l), ret) {
			break
		}
		if st != nvml.FEATURE_ENABLED {
			continue
		}
		link := NVLink{Link: l}
		if v, ret := d.GetNvLinkVersion(l); n.check(fmt.Sprintf("nvlink %d version", l), ret) {
			link.Version = int(v)
		}
		if p, ret := d.GetNvLinkRemotePciInfo(l); n.check(fmt.Sprintf("nvlink %d remote", l), ret) {
			link.RemoteBusID = cString(p.BusId[:])
		}
		if t, ret := d.GetNvLinkRemoteDeviceType(l); ret == nvml.SUCCESS {
			link.RemoteType = nvlinkDeviceType(t)
		}
		links = append(links, link)
	}
	return links
}

func nvlinkDeviceType(t nvml.IntNvLinkDeviceType) string {
	switch t {
	case nvml.NVLINK_DEVICE_TYPE_GPU:
		return "gpu"
	case nvml.NVLINK_DEVICE_TYPE_IBMNPU:
		return "ibmnpu"
	case nvml.NVLINK_DEVICE_TYPE_SWITCH:
		return "switch"
	}
	return "unknown"
}

// processes lists the compute processes on d with the memory NVML charges to each. NVML returns
// NOT_SUPPORTED or NO_PERMISSION in some containers; the device total is still sampled.
func (r *NVML) processes(d nvml.Device) ([]Process, error) {
	ps, ret := d.GetComputeRunningProcesses()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("processes: %v", ret)
	}
	out := make([]Process, 0, len(ps))
	for _, p := range ps {
		out = append(out, Process{PID: int(p.Pid), UsedBytes: p.UsedGpuMemory})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}

// Sample reads the dynamic state of every device. A query a device does not support leaves its
// field zero; an error is returned only when no device could be read at all.
func (r *NVML) Sample() ([]DeviceSample, error) {
	out := make([]DeviceSample, 0, len(r.devs))
	var firstErr error
	for i, d := range r.devs {
		s := DeviceSample{Index: i}
		if m, ret := d.GetMemoryInfo_v2(); ret == nvml.SUCCESS {
			s.MemUsed, s.MemFree, s.MemReserved = m.Used, m.Free, m.Reserved
		} else if m1, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
			s.MemUsed, s.MemFree = m1.Used, m1.Free
		} else if firstErr == nil {
			firstErr = fmt.Errorf("nvml device %d memory: %w", i, ret)
		}
		if u, ret := d.GetUtilizationRates(); ret == nvml.SUCCESS {
			s.GPUUtil, s.MemUtil = int(u.Gpu), int(u.Memory)
		}
		if v, ret := d.GetClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
			s.SMClockMHz = int(v)
		}
		if v, ret := d.GetPowerUsage(); ret == nvml.SUCCESS {
			s.PowerW = float64(v) / 1000 // milliwatts
		}
		// NVML's PCIe counters are KB/s over a 20 ms window (nvml.h, nvmlDeviceGetPcieThroughput).
		if v, ret := d.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES); ret == nvml.SUCCESS {
			s.PCIeTxBytesPerSec = float64(v) * 1000
		}
		if v, ret := d.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES); ret == nvml.SUCCESS {
			s.PCIeRxBytesPerSec = float64(v) * 1000
		}
		if typ, samples, ret := d.GetSamples(nvml.GPU_UTILIZATION_SAMPLES, r.lastUtil[i]); ret == nvml.SUCCESS {
			for _, sm := range samples {
				if sm.TimeStamp <= r.lastUtil[i] {
					continue
				}
				s.UtilSamples = append(s.UtilSamples, UtilSample{TimeUnixMicro: int64(sm.TimeStamp), Percent: sampleValue(typ, sm.SampleValue)})
			}
			sort.Slice(s.UtilSamples, func(a, b int) bool { return s.UtilSamples[a].TimeUnixMicro < s.UtilSamples[b].TimeUnixMicro })
			if k := len(s.UtilSamples); k > 0 {
				r.lastUtil[i] = uint64(s.UtilSamples[k-1].TimeUnixMicro)
			}
		}
		if ps, err := r.processes(d); err == nil {
			s.Processes = ps
		}
		out = append(out, s)
	}
	if firstErr != nil && len(r.devs) == 1 {
		return nil, firstErr
	}
	return out, nil
}

// sampleValue decodes an NVML sample value (a C union, little-endian on every NVML platform).
func sampleValue(t nvml.ValueType, b [8]byte) float64 {
	u := uint64(0)
	for k := 7; k >= 0; k-- {
		u = u<<8 | uint64(b[k])
	}
	switch t {
	case nvml.VALUE_TYPE_UNSIGNED_INT, nvml.VALUE_TYPE_SIGNED_INT:
		return float64(uint32(u))
	case nvml.VALUE_TYPE_UNSIGNED_SHORT:
		return float64(uint16(u))
	case nvml.VALUE_TYPE_SIGNED_LONG_LONG:
		return float64(int64(u))
	case nvml.VALUE_TYPE_DOUBLE:
		return math.Float64frombits(u)
	}
	return float64(u)
}

func cString(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

// OpenSystem opens the machine's NVML: libnvidia-ml.so.1, or the library at libraryPath if not
// empty. Without a driver the error wraps [ErrNoDriver].
func OpenSystem(libraryPath string) (Reader, error) {
	var opts []nvml.LibraryOption
	if libraryPath != "" {
		opts = append(opts, nvml.WithLibraryPath(libraryPath))
	}
	r, err := OpenNVML(nvml.New(opts...))
	if err != nil {
		return nil, err
	}
	return r, nil
}

// normalizeBusID makes "00000000:1B:00.0" and "0000:1b:00.0" compare equal (NVML pads the
// domain to 8 hex digits in nvmlPciInfo_t.busId, 4 in busIdLegacy).
func normalizeBusID(s string) string {
	s = strings.ToLower(s)
	if dom, rest, ok := strings.Cut(s, ":"); ok {
		dom = strings.TrimLeft(dom, "0")
		return dom + ":" + rest
	}
	return s
}
