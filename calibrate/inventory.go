package calibrate

import (
	"fmt"
	"io"
	"strings"
)

// Inventory is every visible GPU and the driver, as NVML reports them.
type Inventory struct {
	DriverVersion string    `json:"driver_version" yaml:"driver_version"`
	CUDAVersion   string    `json:"cuda_version" yaml:"cuda_version"` // the driver's CUDA API version, "13.0"
	NVMLVersion   string    `json:"nvml_version" yaml:"nvml_version"`
	GPUs          []GPUInfo `json:"gpus" yaml:"gpus"`
	Notes         []string  `json:"notes,omitempty" yaml:"notes,omitempty"` // system queries NVML refused
}

// GPUInfo is one GPU. Fields NVML could not read stay zero and are named in Notes.
type GPUInfo struct {
	Index    int    `json:"index" yaml:"index"`
	Name     string `json:"name" yaml:"name"`
	UUID     string `json:"uuid" yaml:"uuid"`
	PCIBusID string `json:"pci_bus_id" yaml:"pci_bus_id"`
	// Memory comes from nvmlDeviceGetMemoryInfo_v2: Reserved is what the driver keeps for itself.
	Memory  MemoryInfo `json:"memory" yaml:"memory"`
	CCMajor int        `json:"cc_major" yaml:"cc_major"`
	CCMinor int        `json:"cc_minor" yaml:"cc_minor"`
	SMs     int        `json:"sms" yaml:"sms"`
	// SMSource says how SMs was obtained (NVML has no direct query for a whole GPU).
	SMSource           string    `json:"sm_source,omitempty" yaml:"sm_source,omitempty"`
	CUDACores          int       `json:"cuda_cores" yaml:"cuda_cores"`
	Clocks             Clocks    `json:"clocks" yaml:"clocks"`
	MemoryBusWidthBits int       `json:"memory_bus_width_bits" yaml:"memory_bus_width_bits"`
	PCIe               PCIe      `json:"pcie" yaml:"pcie"`
	PowerLimitW        float64   `json:"power_limit_w" yaml:"power_limit_w"`
	NVLinks            []NVLink  `json:"nvlinks" yaml:"nvlinks"`
	Processes          []Process `json:"processes" yaml:"processes"`
	Notes              []string  `json:"notes,omitempty" yaml:"notes,omitempty"`
}

// MemoryInfo is NVML's v2 memory struct, in bytes.
type MemoryInfo struct {
	Total    uint64 `json:"total" yaml:"total"`
	Reserved uint64 `json:"reserved" yaml:"reserved"`
	Free     uint64 `json:"free" yaml:"free"`
	Used     uint64 `json:"used" yaml:"used"`
}

// Clocks are the current and maximum SM and memory clocks in MHz.
type Clocks struct {
	SMMHz     int `json:"sm_mhz" yaml:"sm_mhz"`
	MemoryMHz int `json:"memory_mhz" yaml:"memory_mhz"`
	MaxSMMHz  int `json:"max_sm_mhz" yaml:"max_sm_mhz"`
	MaxMemMHz int `json:"max_memory_mhz" yaml:"max_memory_mhz"`
}

// PCIe is the host link, current and maximum.
type PCIe struct {
	Generation    int `json:"generation" yaml:"generation"`
	MaxGeneration int `json:"max_generation" yaml:"max_generation"`
	Width         int `json:"width" yaml:"width"`
	MaxWidth      int `json:"max_width" yaml:"max_width"`
}

// NVLink is one active NVLink link.
type NVLink struct {
	Link        int    `json:"link" yaml:"link"`
	Version     int    `json:"version" yaml:"version"`
	RemoteBusID string `json:"remote_bus_id" yaml:"remote_bus_id"`
	RemoteType  string `json:"remote_type,omitempty" yaml:"remote_type,omitempty"` // gpu, switch, ibmnpu
	PeerIndex   int    `json:"peer_index" yaml:"peer_index"`                       // visible GPU at the other end, -1 if none
}

// Process is a compute process on a GPU and the memory NVML charges to it.
type Process struct {
	PID       int    `json:"pid" yaml:"pid"`
	Name      string `json:"name,omitempty" yaml:"name,omitempty"`
	UsedBytes uint64 `json:"used_bytes" yaml:"used_bytes"`
}

// FP32LanesPerSM is the number of FP32 lanes (CUDA cores) per SM for a compute capability, or 0
// if unknown. Source: CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table
// (32-bit floating-point add, multiply, multiply-add: 64 results per clock per SM for 6.0, 7.x
// and 8.0; 128 for 5.x, 6.1, 6.2, 8.6, 8.7, 8.9, 9.0, 10.0, 12.0).
func FP32LanesPerSM(major, minor int) int {
	switch {
	case major == 6 && minor == 0, major == 7, major == 8 && minor == 0:
		return 64
	case major == 5, major == 6, major == 8, major >= 9:
		return 128
	}
	return 0
}

// WriteText writes the inventory as an aligned, human-readable summary.
func (inv *Inventory) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "driver %s, CUDA %s, NVML %s, %d GPU(s)\n", inv.DriverVersion, inv.CUDAVersion, inv.NVMLVersion, len(inv.GPUs))
	for _, g := range inv.GPUs {
		fmt.Fprintf(&b, "\nGPU %d: %s  %s  %s\n", g.Index, g.Name, g.UUID, g.PCIBusID)
		fmt.Fprintf(&b, "  memory      total %s, reserved %s, free %s, used %s\n", mib(g.Memory.Total), mib(g.Memory.Reserved), mib(g.Memory.Free), mib(g.Memory.Used))
		fmt.Fprintf(&b, "  compute     cc %d.%d, %d SMs (%s), %d CUDA cores\n", g.CCMajor, g.CCMinor, g.SMs, g.SMSource, g.CUDACores)
		fmt.Fprintf(&b, "  clocks      SM %d MHz (max %d), memory %d MHz (max %d), bus %d bits\n", g.Clocks.SMMHz, g.Clocks.MaxSMMHz, g.Clocks.MemoryMHz, g.Clocks.MaxMemMHz, g.MemoryBusWidthBits)
		fmt.Fprintf(&b, "  pcie        gen %d x%d (max gen %d x%d), power limit %.0f W\n", g.PCIe.Generation, g.PCIe.Width, g.PCIe.MaxGeneration, g.PCIe.MaxWidth, g.PowerLimitW)
		fmt.Fprintf(&b, "  nvlink      %d active link(s)", len(g.NVLinks))
		for _, l := range g.NVLinks {
			peer := l.RemoteType
			if l.PeerIndex >= 0 {
				peer = fmt.Sprintf("GPU %d", l.PeerIndex)
			}
			fmt.Fprintf(&b, "; %d v%d -> %s", l.Link, l.Version, peer)
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "  processes   %d", len(g.Processes))
		for _, p := range g.Processes {
			fmt.Fprintf(&b, "; pid %d %s %s", p.PID, p.Name, mib(p.UsedBytes))
		}
		b.WriteString("\n")
		for _, n := range g.Notes {
			fmt.Fprintf(&b, "  unsupported %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mib(b uint64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
