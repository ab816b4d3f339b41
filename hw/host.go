package hw

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/gpusim/gpusim/internal/limitread"
	"github.com/gpusim/gpusim/internal/suggest"
	"go.yaml.in/yaml/v3"
)

// Host is the machine around the GPUs: what the tf.data input pipeline runs on, what feeds
// the GPUs over PCIe, how the GPUs of one box talk to each other (the topology NCCL's search
// finds) and how boxes talk over the network.
type Host struct {
	// Name is the profile name.
	Name string `yaml:"name"`
	// Cores is the number of logical CPU cores tf.data may use (AUTOTUNE's CPU budget):
	// hardware threads, ThreadsPerCore to a physical core.
	Cores int `yaml:"cores"`
	// ThreadsPerCore is 2 where the CPUs run two hardware threads per core (Intel
	// Hyper-Threading, AMD SMT), 0 or 1 where each logical core is a physical one.
	ThreadsPerCore int `yaml:"threads_per_core"`
	// SMTGain is what a core's second thread adds: a core with both threads busy does
	// 1+SMTGain times the work of one thread (SMTGain2Way where the CPU's maker publishes
	// no figure of its own).
	SMTGain float64 `yaml:"smt_gain"`
	// MemoryBytes is the host RAM (tf.data AUTOTUNE's RAM budget is half of it).
	MemoryBytes int64 `yaml:"memory_bytes"`
	// PCIeBandwidth is the host-to-device bandwidth per GPU per direction (B/s), the lower of
	// the GPU's link and the host's.
	PCIeBandwidth float64 `yaml:"pcie_bandwidth"`
	// DiskBandwidth is the sequential read rate of the dataset's storage (B/s).
	DiskBandwidth float64 `yaml:"disk_bandwidth"`

	// GPUs is how many GPUs one box holds (8 on a DGX A100, 16 on a DGX-2); 0 means the box
	// takes any count (the interconnect is then guessed from the GPU, as without a host).
	GPUs int `yaml:"gpus"`
	// Interconnect is how the box's GPUs reach each other: "nvswitch", "nvlink" (point to
	// point, DGX-1's hybrid cube mesh) or "pcie"; "" guesses from the GPU profile.
	Interconnect string `yaml:"interconnect"`
	// NVLinkBandwidth is one GPU's NVLink bandwidth into the fabric, B/s per direction (links
	// x 25 GB/s for NVLink 2-4); 0 takes the GPU profile's.
	NVLinkBandwidth float64 `yaml:"nvlink_bandwidth"`
	// NVLinks, for an "nvlink" box without a switch, is how many NVLinks join GPU i and GPU j
	// (nvidia-smi topo -m's NV# matrix, by nvidia-smi index); a GPU's row sums to its links,
	// which NVLinkBandwidth counts. nil: every GPU reaches every other at NVLinkBandwidth.
	// Built-in profiles only (DGX-1); a file based on one keeps it.
	NVLinks [][]int `yaml:"-"`
	// PCIePath is, for a "pcie" box, the worst path of a ring between two GPUs, as
	// nvidia-smi topo -m names it: "pix"/"pxb" (through PCIe switches only), "phb" (through
	// the CPU's root complex, one socket) or "sys" (across the sockets' SMP link).
	PCIePath string `yaml:"pcie_path"`
	// InterSocketBandwidth is what NCCL's topology model gives the SMP link a "sys" ring
	// crosses, B/s (NVIDIA/nccl src/graph/topo.h: QPI_BW 6.0, SKL_QPI_BW 10.0 for Intel
	// Skylake and later, AMD_BW 16.0 GB/s).
	InterSocketBandwidth float64 `yaml:"inter_socket_bandwidth"`
	// NVLinkBridges says the box's cards are bridged in pairs (GPUs 0-1, 2-3, ...: the
	// two-slot NVLink bridge of GeForce RTX 2080 Ti/3090 and RTX A-series cards) on an
	// otherwise "pcie" box: a pair reaches each other over the bridge at the GPU profile's
	// NVLinkBandwidth, and a ring over more GPUs takes PCIe hops between the pairs.
	NVLinkBridges bool `yaml:"nvlink_bridges,omitempty"`
	// HostCopyBandwidth is, for GPUs without PCIe peer-to-peer (GeForce), what the box's host
	// memory path carries of NCCL's staged copies for all its GPUs together, B/s
	// (collective.Topology.HostBandwidth); 0: only each GPU's own link binds.
	HostCopyBandwidth float64 `yaml:"host_copy_bandwidth,omitempty"`
	// Network is the fabric between boxes: "ib" (InfiniBand), "roce" or "ethernet" (NCCL's
	// socket transport over TCP).
	Network string `yaml:"network"`
	// NICBandwidth is each GPU's share of the network, B/s per direction (DGX A100: one
	// 200 Gb/s HDR NIC per GPU, 25e9).
	NICBandwidth float64 `yaml:"nic_bandwidth"`
}

// Interconnect kinds of Host.Interconnect.
const (
	InterconnectNVSwitch = "nvswitch"
	InterconnectNVLink   = "nvlink"
	InterconnectPCIe     = "pcie"
)

// NCCL's topology figures (NVIDIA/nccl src/graph/topo.h, v2.19) for the links between CPU
// sockets, in bytes/s.
const (
	ncclSKLQPIBW = 10e9 // SKL_QPI_BW: Intel Skylake and later UPI
	ncclAMDBW    = 16e9 // AMD_BW: AMD Infinity Fabric between sockets
	ncclQPIBW    = 6e9  // QPI_BW: older Intel QPI (Broadwell, DGX-1)
)

// NCCLIntelInterSocketBandwidth is NCCL's SKL_QPI_BW (src/graph/topo.h), the inter-socket
// figure for a PCIe ring crossing Intel Skylake-or-later sockets, bytes/s.
const NCCLIntelInterSocketBandwidth = ncclSKLQPIBW

// SMTGain2Way is Intel's published throughput gain of Hyper-Threading, two threads on one
// core against one: "up to 30%" on server benchmarks (D. Marr et al., "Hyper-Threading
// Technology Architecture and Microarchitecture", Intel Technology Journal 6(1), 2002). It is
// an upper figure; JPEG decoding's SIMD-heavy loops leave a second thread less to use. AMD
// publishes no figure for its SMT, so its EPYC hosts use the same.
const SMTGain2Way = 0.3

// builtinHosts are host profiles matching the usual servers of the GPUs above.
var builtinHosts = []Host{
	{
		// The H200 machine lent here: 16 cores, 128 GiB (docs/sources.md); PCIe Gen5 x16
		// at 63 GB/s per direction, of which 55 GB/s pinned H2D was measured (docs/sources.md).
		Name: "h200-vm", Cores: 16, MemoryBytes: 128 * GiB, PCIeBandwidth: 63 * GBps,
		// NVMe Gen4 sequential read, 7 GB/s (typical datasheet figure).
		DiskBandwidth: 7 * GBps,
	},
	{
		// NVIDIA DGX A100: 2x AMD EPYC 7742 (128 cores, 256 threads), 1 TB RAM, PCIe Gen4
		// (DGX A100 user guide, hardware overview). 8 A100 SXM4 on six NVSwitches, 12 NVLink 3
		// links per GPU (300 GB/s per direction); eight 200 Gb/s HDR InfiniBand NICs for
		// compute traffic, one per GPU (DGX A100 datasheet).
		Name: "dgx-a100", Cores: 256, ThreadsPerCore: 2, SMTGain: SMTGain2Way, MemoryBytes: 1024 * GiB, PCIeBandwidth: 31.5 * GBps,
		DiskBandwidth: 25 * GBps, // DGX A100 datasheet: 15 TB internal NVMe, ~25 GB/s
		GPUs:          8, Interconnect: InterconnectNVSwitch, NVLinkBandwidth: 300 * GBps,
		Network: "ib", NICBandwidth: 25 * GBps,
	},
	{
		// NVIDIA DGX-1 (V100): 2x Xeon E5-2698 v4 (40 cores, 80 threads), 512 GB RAM, PCIe Gen3
		// (DGX-1 datasheet). 8 V100 SXM2 in a hybrid cube mesh: 6 NVLink 2 links per GPU
		// (150 GB/s per direction); four 100 Gb/s EDR InfiniBand NICs for 8 GPUs.
		Name: "dgx-1", Cores: 80, ThreadsPerCore: 2, SMTGain: SMTGain2Way, MemoryBytes: 512 * GiB, PCIeBandwidth: 15.75 * GBps,
		DiskBandwidth: 2 * GBps, // 4x 1.92 TB SSD RAID 0 (DGX-1 datasheet)
		GPUs:          8, Interconnect: InterconnectNVLink, NVLinkBandwidth: 150 * GBps,
		Network: "ib", NICBandwidth: 4 * 12.5 * GBps / 8,
		// nvidia-smi topo -m of a DGX-1 V100 (the NV1/NV2 matrix that microsoft/msccl-tools
		// tests/test_topologies.py, test_nvlink_only, parses as its dgx1 topology): the cube's
		// twelve edges plus the diagonals of the faces {0,1,2,3} and {4,5,6,7}, eight of the
		// sixteen doubled (the DGX-1 V100 white paper's hybrid cube mesh).
		NVLinks: [][]int{
			{0, 1, 1, 2, 2, 0, 0, 0},
			{1, 0, 2, 1, 0, 2, 0, 0},
			{1, 2, 0, 2, 0, 0, 1, 0},
			{2, 1, 2, 0, 0, 0, 0, 1},
			{2, 0, 0, 0, 0, 1, 1, 2},
			{0, 2, 0, 0, 1, 0, 2, 1},
			{0, 0, 1, 0, 1, 2, 0, 2},
			{0, 0, 0, 1, 2, 1, 2, 0},
		},
	},
	{
		// NVIDIA DGX-2: 2x Xeon Platinum 8168 (48 cores, 96 threads), 1.5 TB RAM, PCIe Gen3;
		// 16 V100 SXM3 on twelve NVSwitches, 6 NVLink 2 links per GPU (150 GB/s per
		// direction); eight 100 Gb/s EDR InfiniBand NICs for 16 GPUs (DGX-2 datasheet).
		Name: "dgx-2", Cores: 96, ThreadsPerCore: 2, SMTGain: SMTGain2Way, MemoryBytes: 1536 * GiB, PCIeBandwidth: 15.75 * GBps,
		DiskBandwidth: 8 * GBps, // 30 TB NVMe (DGX-2 datasheet)
		GPUs:          16, Interconnect: InterconnectNVSwitch, NVLinkBandwidth: 150 * GBps,
		Network: "ib", NICBandwidth: 8 * 12.5 * GBps / 16,
	},
	{
		// NVIDIA DGX H100 / HGX H100 8-GPU: 2x Xeon Platinum 8480C (112 cores, 224 threads),
		// 2 TB RAM, PCIe Gen5; 8 H100 SXM5 on four NVSwitches, 18 NVLink 4 links per GPU
		// (450 GB/s per direction); eight 400 Gb/s NDR InfiniBand NICs, one per GPU (DGX H100
		// datasheet).
		Name: "hgx-h100", Cores: 224, ThreadsPerCore: 2, SMTGain: SMTGain2Way, MemoryBytes: 2048 * GiB, PCIeBandwidth: 63 * GBps,
		DiskBandwidth: 25 * GBps,
		GPUs:          8, Interconnect: InterconnectNVSwitch, NVLinkBandwidth: 450 * GBps,
		Network: "ib", NICBandwidth: 50 * GBps,
	},
	{
		// An 8-GPU PCIe server without NVLink or PCIe switches: 2x AMD EPYC (64 cores, 128
		// threads), 512 GB, four GPUs on each socket's root complex (PCIe Gen4 x16), so a ring
		// crosses the sockets (nvidia-smi topo: SYS) at NCCL's AMD_BW; 100 Gb/s Ethernet.
		Name: "pcie-8x", Cores: 128, ThreadsPerCore: 2, SMTGain: SMTGain2Way, MemoryBytes: 512 * GiB, PCIeBandwidth: 31.5 * GBps,
		DiskBandwidth: 7 * GBps,
		GPUs:          8, Interconnect: InterconnectPCIe, PCIePath: "sys", InterSocketBandwidth: ncclAMDBW,
		Network: "roce", NICBandwidth: 12.5 * GBps / 8,
	},
	{
		// An 8-GPU GeForce training box as Lambda's tf_cnn_benchmarks logs of the RTX
		// 2080 Ti ran on it (the shared calibration CSV's Gold_6230 system): 2x Intel Xeon
		// Gold 6230 (20 cores, 40 threads each: Intel ARK), PCIe Gen3 x16 to every GPU; the
		// cards on both sockets, so a ring over all of them crosses UPI (nvidia-smi topo:
		// SYS, NCCL's SKL_QPI_BW). The RAM is not in the logs: 384 GiB, six 32 GB DIMMs per
		// socket, the Gold 6230's six channels filled.
		Name: "xeon-gold-6230-8x", Cores: 80, ThreadsPerCore: 2, SMTGain: SMTGain2Way, MemoryBytes: 384 * GiB,
		PCIeBandwidth: 15.75 * GBps, DiskBandwidth: 3 * GBps,
		GPUs: 8, Interconnect: InterconnectPCIe, PCIePath: "sys", InterSocketBandwidth: ncclSKLQPIBW,
	},
	{
		// The same box with a two-slot NVLink bridge on each pair of cards (the logs'
		// Gold_6230-..._NVLink systems).
		Name: "xeon-gold-6230-8x-nvlink", Cores: 80, ThreadsPerCore: 2, SMTGain: SMTGain2Way, MemoryBytes: 384 * GiB,
		PCIeBandwidth: 15.75 * GBps, DiskBandwidth: 3 * GBps,
		GPUs: 8, Interconnect: InterconnectPCIe, PCIePath: "sys", InterSocketBandwidth: ncclSKLQPIBW, NVLinkBridges: true,
	},
	{
		// A 3-GPU workstation: AMD Ryzen Threadripper 3970X (32 cores, 64 threads: AMD's
		// product page), PCIe Gen4 x16 slots on the CPU's root ports (nvidia-smi topo: PHB),
		// as the shared 3970X-GeForce_RTX_3090 logs ran; 128 GiB (eight 16 GB DIMMs; the logs
		// do not say).
		Name: "threadripper-3970x-3x", Cores: 64, ThreadsPerCore: 2, SMTGain: SMTGain2Way, MemoryBytes: 128 * GiB,
		PCIeBandwidth: 31.5 * GBps, DiskBandwidth: 3 * GBps,
		GPUs: 4, Interconnect: InterconnectPCIe, PCIePath: "phb",
	},
	{
		// The 8-GPU AMD EPYC 7662 box of the shared 7662-GeForce_RTX_3090 logs: 64 cores,
		// 128 threads (AMD's product page), PCIe Gen4 x16 per GPU, no peer-to-peer between
		// the GeForce cards. Its all-reduce is bound by the host: over 2, 4 and 8 GPUs the
		// logs' step time beyond the 1-GPU one (AlexNet and VGG16, fp32 and fp16) moves
		// 2(n-1) x the gradients through host memory at 5.7-9 GB/s whatever n, so the host
		// path, not a GPU's link, sets the rate: HostCopyBandwidth 6.5 GB/s, fitted on those
		// rows. 512 GiB (the logs do not say).
		Name: "epyc-7662-8x", Cores: 128, ThreadsPerCore: 2, SMTGain: SMTGain2Way, MemoryBytes: 512 * GiB,
		PCIeBandwidth: 31.5 * GBps, DiskBandwidth: 3 * GBps,
		GPUs: 8, Interconnect: InterconnectPCIe, PCIePath: "phb", HostCopyBandwidth: 6.5 * GBps,
	},
	{
		// A typical workstation: 16 threads, 64 GiB, PCIe Gen4 x16.
		Name: "workstation", Cores: 16, MemoryBytes: 64 * GiB, PCIeBandwidth: 31.5 * GBps,
		DiskBandwidth: 3 * GBps,
	},
}

// NVLinkShare is the fraction of one GPU's NVLink bandwidth a ring over gpus (nvidia-smi
// indices) can use on a box whose NVLinks matrix says which GPUs each link joins: NCCL builds
// its rings over the links between the ranks (src/graph/search.cc), and each ring through a
// GPU takes one of its links out and one in, so the rings are at most the fewest links a rank
// has to the other ranks, of the links a GPU has. On a DGX-1, GPUs 0-3 have 4 of their 6
// links to each other (4/6), all 8 GPUs 6 of 6, GPUs 0 and 1 one link (1/6). 1 without a
// matrix, for a single GPU, or for an index the matrix lacks.
func (h Host) NVLinkShare(gpus []int) float64 {
	if len(h.NVLinks) == 0 || len(gpus) < 2 {
		return 1
	}
	per := 0
	for _, row := range h.NVLinks {
		s := 0
		for _, l := range row {
			s += l
		}
		per = max(per, s)
	}
	least := per
	for _, i := range gpus {
		if i < 0 || i >= len(h.NVLinks) {
			return 1
		}
		within := 0
		for _, j := range gpus {
			if j != i && j >= 0 && j < len(h.NVLinks[i]) {
				within += h.NVLinks[i][j]
			}
		}
		least = min(least, within)
	}
	if per == 0 {
		return 1
	}
	return float64(least) / float64(per)
}

// HostNames returns the built-in host profile names in table order.
func HostNames() []string {
	n := make([]string, len(builtinHosts))
	for i, h := range builtinHosts {
		n[i] = h.Name
	}
	return n
}

// LookupHost returns a built-in host profile, or with "@FILE" the profile in a YAML file.
func LookupHost(name string) (Host, error) {
	if path, ok := strings.CutPrefix(name, "@"); ok {
		return LoadHost(path)
	}
	for _, h := range builtinHosts {
		if h.Name == name {
			return h, nil
		}
	}
	return Host{}, fmt.Errorf("unknown host %q (%s, or @file)", name, suggest.Hint(name, HostNames(), "gpusim list hosts"))
}

// DefaultHost returns the host of the H200 machine the defaults were measured on.
func DefaultHost() Host { return builtinHosts[0] }

// LoadHost reads a host profile file (YAML): Host's yaml keys, and an optional `base: NAME`
// that starts from a built-in host, so a file sets only what differs:
//
//	base: dgx-a100
//	name: my-box
//	interconnect: pcie
//	pcie_path: phb
//
// Errors name the file, line and key.
func LoadHost(path string) (Host, error) {
	data, err := limitread.ReadFile(path, maxProfileBytes)
	if err != nil {
		return Host{}, fmt.Errorf("load host profile: %w", err)
	}
	return ParseHost(path, data)
}

// removedHostKeys are keys a host profile does not take, each with where what it would
// describe is set. A host has no JPEG decode rate: decoding is part of the map function's CPU
// time per element (pipeline.Config.MapCost, input.map.cost_ms; on the H200 host's cores
// 2.0 ms of the 2.4 ms a decode, crop, resize and flip of one ImageNet-sized JPEG took:
// pipeline/testdata/h200/jpeg), which pipeline.CPU spreads over the host's cores and their
// SMT threads; a per-byte decode rate beside it would price the decode twice.
var removedHostKeys = map[string]string{
	"decode_rate": "a JPEG's decode is part of the map function's CPU time per element: input.map.cost_ms",
}

// ParseHost parses host profile data; name is used in error messages.
func ParseHost(name string, data []byte) (Host, error) {
	doc, err := oneDocument(name, data)
	if err != nil {
		return Host{}, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return Host{}, fmt.Errorf("%s:%d: a host profile is a mapping of keys to values", name, max(doc.Line, 1))
	}
	root := doc.Content[0]
	h := DefaultHost()
	h.Name = ""
	baseLine, baseName, err := baseKey(name, root)
	if err != nil {
		return Host{}, err
	}
	if baseLine > 0 {
		// Refused before any lookup, as in ParseProfile: an @file base could name itself.
		if strings.HasPrefix(baseName, "@") {
			return Host{}, fmt.Errorf("%s:%d: base: %q is not a built-in host (a host file extends a built-in host, not another file)", name, baseLine, baseName)
		}
		b, err := LookupHost(baseName)
		if err != nil {
			return Host{}, fmt.Errorf("%s:%d: base: %q is not a built-in host", name, baseLine, baseName)
		}
		h = b
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; removedHostKeys[k.Value] != "" {
			return Host{}, fmt.Errorf("%s:%d: %s: unknown key (%s)", name, k.Line, k.Value, removedHostKeys[k.Value])
		}
	}
	lines := map[string]int{}
	if err := decodeInto(name, root, reflect.ValueOf(&h).Elem(), "", lines, map[string]bool{"base": true}); err != nil {
		return Host{}, err
	}
	if err := h.Validate(); err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			return Host{}, fe.at(name, lines, baseLine, baseName, root.Line, "from the default host "+DefaultHost().Name)
		}
		return Host{}, fmt.Errorf("%s: %w", name, err)
	}
	if h.Name == "" {
		h.Name = name
	}
	return h, nil
}

// Bounds of a host profile's numbers, as scenarios bounds the keys that override them
// (hardware.host.cores, input.host.memory_gib, hardware.count, input.storage_bandwidth).
const (
	// maxHostCores: Linux's largest NR_CPUS (8192, arch/x86/Kconfig MAXSMP).
	maxHostCores = 8192
	// maxHostMemory: 64 TiB, twice the largest x86 server's RAM.
	maxHostMemory = 1 << 46
	// maxHostGPUs: an NVLink Switch System joins up to 256 GPUs in one NVLink domain (NVIDIA
	// DGX GH200), the most one simulated box can stand for.
	maxHostGPUs = 256
	// minHostRate: 100 kB/s, the slowest storage input.storage_bandwidth takes; a link slower
	// than that turns a batch's copy into days of simulated time.
	minHostRate = 1e5
)

// Validate reports the first field of h that cannot describe a host. A check that reads two
// fields names the other too (fieldError.also), so a profile file's error can stand on the
// line of whichever of them the file sets.
func (h Host) Validate() error {
	bad := func(field, format string, a ...any) error {
		return &fieldError{field: field, msg: fmt.Sprintf(format, a...)}
	}
	switch {
	case h.Cores <= 0:
		return bad("cores", "%d: want > 0", h.Cores)
	case h.Cores > maxHostCores:
		return bad("cores", "%d: want at most %d (Linux's largest NR_CPUS)", h.Cores, maxHostCores)
	case h.ThreadsPerCore < 0 || h.ThreadsPerCore > 2:
		return bad("threads_per_core", "%d: want 0, 1 or 2", h.ThreadsPerCore)
	case h.ThreadsPerCore == 2 && h.Cores%2 != 0:
		return &fieldError{field: "threads_per_core", msg: fmt.Sprintf("2 threads per core on %d cores: want an even count", h.Cores),
			also: []fieldError{{field: "cores", msg: fmt.Sprintf("%d with threads_per_core 2: want an even count", h.Cores)}}}
	case !(h.SMTGain >= 0 && h.SMTGain <= 1):
		return bad("smt_gain", "%v: want 0 <= smt_gain <= 1", h.SMTGain)
	case h.MemoryBytes <= 0:
		return bad("memory_bytes", "%d: want > 0", h.MemoryBytes)
	case h.MemoryBytes > maxHostMemory:
		return bad("memory_bytes", "%d: want at most %d (64 TiB)", h.MemoryBytes, int64(maxHostMemory))
	case h.GPUs < 0:
		return bad("gpus", "%d: want >= 0", h.GPUs)
	case h.GPUs > maxHostGPUs:
		return bad("gpus", "%d: want at most %d (the largest NVLink domain)", h.GPUs, maxHostGPUs)
	}
	switch h.Interconnect {
	case "", InterconnectNVSwitch, InterconnectNVLink, InterconnectPCIe:
	default:
		return bad("interconnect", "%q: want nvswitch, nvlink or pcie", h.Interconnect)
	}
	switch h.PCIePath {
	case "", "pix", "pxb", "phb", "sys":
	default:
		return bad("pcie_path", "%q: want pix, pxb, phb or sys", h.PCIePath)
	}
	switch h.Network {
	case "", "ib", "roce", "ethernet":
	default:
		return bad("network", "%q: want ib, roce or ethernet", h.Network)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"pcie_bandwidth", h.PCIeBandwidth}, {"disk_bandwidth", h.DiskBandwidth},
		{"nvlink_bandwidth", h.NVLinkBandwidth}, {"inter_socket_bandwidth", h.InterSocketBandwidth}, {"nic_bandwidth", h.NICBandwidth},
		{"host_copy_bandwidth", h.HostCopyBandwidth}} {
		if !(f.v >= 0) || f.v > 1e15 {
			return bad(f.name, "%v: want a finite value >= 0", f.v)
		}
		if f.v > 0 && f.v < minHostRate {
			return bad(f.name, "%v: want 0 or at least %g B/s", f.v, float64(minHostRate))
		}
	}
	if h.PCIePath == "sys" && h.InterSocketBandwidth == 0 {
		const nccl = "(NCCL: 10e9 Intel, 16e9 AMD)"
		return &fieldError{field: "inter_socket_bandwidth", msg: "0: a sys path crosses the sockets' link; give its bandwidth " + nccl,
			also: []fieldError{{field: "pcie_path", msg: "sys needs inter_socket_bandwidth, the bandwidth of the sockets' link a sys path crosses " + nccl}}}
	}
	return nil
}
