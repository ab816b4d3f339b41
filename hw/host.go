package hw

import "fmt"

// Host is the machine around the GPUs: what the tf.data input pipeline runs on and what feeds
// the GPUs over PCIe.
type Host struct {
	// Name is the profile name.
	Name string `yaml:"name"`
	// Cores is the number of logical CPU cores tf.data may use (AUTOTUNE's CPU budget).
	Cores int `yaml:"cores"`
	// MemoryBytes is the host RAM (tf.data AUTOTUNE's RAM budget is half of it).
	MemoryBytes int64 `yaml:"memory_bytes"`
	// PCIeBandwidth is the host-to-device bandwidth per GPU per direction (B/s), the lower of
	// the GPU's link and the host's.
	PCIeBandwidth float64 `yaml:"pcie_bandwidth"`
	// DiskBandwidth is the sequential read rate of the dataset's storage (B/s).
	DiskBandwidth float64 `yaml:"disk_bandwidth"`
	// DecodeRate is how many bytes of JPEG one core decodes per second (tf.io.decode_jpeg).
	DecodeRate float64 `yaml:"decode_rate"`
}

// builtinHosts are host profiles matching the usual servers of the GPUs above.
var builtinHosts = []Host{
	{
		// The H200 machine lent here: 16 cores, 128 GiB (docs/sources.md); PCIe Gen5 x16
		// at 63 GB/s per direction, of which 55 GB/s pinned H2D was measured (docs/sources.md).
		Name: "h200-vm", Cores: 16, MemoryBytes: 128 * GiB, PCIeBandwidth: 63 * GBps,
		// NVMe Gen4 sequential read, 7 GB/s (typical datasheet figure).
		DiskBandwidth: 7 * GBps,
		// libjpeg-turbo decodes about 100 MB/s of JPEG per core (libjpeg-turbo project's
		// published decompression benchmarks, ImageNet-sized images).
		DecodeRate: 100e6,
	},
	{
		// NVIDIA DGX A100: 2x AMD EPYC 7742 (128 cores, 256 threads), 1 TB RAM, PCIe Gen4
		// (DGX A100 user guide, hardware overview).
		Name: "dgx-a100", Cores: 256, MemoryBytes: 1024 * GiB, PCIeBandwidth: 31.5 * GBps,
		DiskBandwidth: 25 * GBps, // DGX A100 datasheet: 15 TB internal NVMe, ~25 GB/s
		DecodeRate:    100e6,
	},
	{
		// NVIDIA DGX-1 (V100): 2x Xeon E5-2698 v4 (40 cores, 80 threads), 512 GB RAM, PCIe Gen3
		// (DGX-1 datasheet).
		Name: "dgx-1", Cores: 80, MemoryBytes: 512 * GiB, PCIeBandwidth: 15.75 * GBps,
		DiskBandwidth: 2 * GBps, // 4x 1.92 TB SSD RAID 0 (DGX-1 datasheet)
		DecodeRate:    100e6,
	},
	{
		// A typical workstation: 16 threads, 64 GiB, PCIe Gen4 x16.
		Name: "workstation", Cores: 16, MemoryBytes: 64 * GiB, PCIeBandwidth: 31.5 * GBps,
		DiskBandwidth: 3 * GBps, DecodeRate: 100e6,
	},
}

// HostNames returns the built-in host profile names in table order.
func HostNames() []string {
	n := make([]string, len(builtinHosts))
	for i, h := range builtinHosts {
		n[i] = h.Name
	}
	return n
}

// LookupHost returns a built-in host profile.
func LookupHost(name string) (Host, error) {
	for _, h := range builtinHosts {
		if h.Name == name {
			return h, nil
		}
	}
	return Host{}, fmt.Errorf("unknown host %q (known: %v)", name, HostNames())
}

// DefaultHost returns the host of the H200 machine the defaults were measured on.
func DefaultHost() Host { return builtinHosts[0] }
