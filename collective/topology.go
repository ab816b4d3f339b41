package collective

import (
	"errors"
	"fmt"
	"math"
)

// Interconnect kinds a Topology can describe.
const (
	// NVLink is a point-to-point NVLink mesh without a switch (NVLink bridges, DGX-1 cube mesh,
	// 4-GPU HGX boards). NCCL builds rings over the links, so the bus bandwidth is the per-GPU
	// NVLink total, as on a switch; the difference is the peer count a GPU can reach directly.
	NVLink = "nvlink"
	// NVSwitch connects every GPU to every other at the full per-GPU NVLink bandwidth (DGX/HGX
	// A100, H100, H200). NVLink SHARP (NVLS) is not modelled: the figures are NCCL_NVLS_ENABLE=0.
	NVSwitch = "nvswitch"
	// PCIe moves collective traffic over each GPU's PCIe link (P2P through a switch or the CPU
	// root complex).
	PCIe = "pcie"
)

// Topology is the interconnect that a collective runs over, in numbers the caller passes (the
// simulator takes them from its hardware profiles; this package knows no GPU by name).
type Topology struct {
	// GPUs is the number of ranks (one per replica).
	GPUs int
	// LinkBandwidth is the spec bandwidth of one GPU into the fabric, bytes/s per direction:
	// the NVLink total (A100: 12 links x 25 GB/s = 300e9; H100/H200: 18 x 25 GB/s = 450e9) for
	// nvlink/nvswitch, the PCIe link (Gen4 x16: 31.5e9) for pcie. NCCL reaches a fixed fraction
	// of it (see BusBandwidthOf).
	LinkBandwidth float64
	// Latency is a fixed extra cost per collective in seconds (e.g. a measured launch overhead);
	// 0 leaves NCCL's latency model alone.
	Latency float64
	// Kind is NVLink, NVSwitch or PCIe.
	Kind string

	// CCMajor and CCMinor are the GPUs' compute capability; NCCL picks per-architecture
	// constants by it (0.0 means Ampere's).
	CCMajor, CCMinor int
	// BusBandwidth, when > 0, is the bus bandwidth NCCL reaches (bytes/s, nccl-tests "busbw" of a
	// large all-reduce) and replaces the value derived from LinkBandwidth: use it for a measured
	// machine.
	BusBandwidth float64
	// Nodes is the number of hosts the GPUs are spread over (0 or 1 = one host). GPUs must be a
	// multiple of Nodes.
	Nodes int
	// NetBandwidth is what a ring gets across the network between hosts, bytes/s per
	// direction (needed when Nodes > 1): NCCL spreads its channels over every NIC of a node
	// (one ring per NIC), so it is the node's NICs together, 8 x 25 GB/s on a DGX A100.
	NetBandwidth float64
	// PCIePath is, for Kind PCIe, the worst hop of a ring as nvidia-smi topo -m names it:
	// "pix"/"pxb" (PCIe switches), "phb" (a CPU's root complex) or "sys" (across the
	// sockets); "" is "phb".
	PCIePath string
	// InterSocketBandwidth is NCCL's figure for the link between CPU sockets that a "sys"
	// ring crosses (src/graph/topo.h: SKL_QPI_BW 10, AMD_BW 16 GB/s), bytes/s.
	InterSocketBandwidth float64
	// SHM marks a PCIe ring between GPUs that cannot reach each other's memory (GeForce cards:
	// the driver disables peer-to-peer over PCIe): NCCL's P2P transport is unavailable and
	// each hop goes through NCCL's SHM transport, staged in pinned host memory (NCCL's
	// src/transport/shm.cc; NCCL_P2P_DISABLE=1 forces the same on any GPU).
	SHM bool
	// HostBandwidth, when > 0, is what the box's host memory path carries of those staged
	// copies for all its GPUs together, bytes/s: every hop writes its bytes into host memory
	// and its neighbour reads them back, so an all-reduce over n ranks moves 2(n-1) x its
	// bytes through the host, and the ring's bus bandwidth is at most HostBandwidth / n.
	HostBandwidth float64
	// MemBandwidth is device memory bandwidth in bytes/s, used by the copy-based reductions
	// (add_n on the reducing GPU, copies between logical devices of one physical GPU). 0 makes
	// those local steps free.
	MemBandwidth float64
	// Channels is the number of NCCL channels (0 = two per NVLink, as NCCL's channel duplication
	// gives: 24 on DGX A100, as its "Channel 23/24" log lines show; 2 on PCIe).
	Channels int
	// Physical maps each rank to its physical GPU when logical devices split one card
	// (tf.config.set_logical_device_configuration); nil means one physical GPU per rank. NCCL
	// refuses two ranks on one GPU; the copy-based reductions turn such copies into local
	// memory traffic.
	Physical []int
}

// Validate reports a topology that cannot be simulated, naming the field.
func (t Topology) Validate() error {
	var errs []error
	if t.GPUs < 1 {
		errs = append(errs, fmt.Errorf("gpus: %d, want >= 1", t.GPUs))
	}
	switch t.Kind {
	case NVLink, NVSwitch, PCIe:
	default:
		errs = append(errs, fmt.Errorf("kind: %q, want %s, %s or %s", t.Kind, NVLink, NVSwitch, PCIe))
	}
	if t.GPUs > 1 && !(t.LinkBandwidth > 0) && !(t.BusBandwidth > 0) {
		errs = append(errs, fmt.Errorf("link_bandwidth: %v, want > 0 bytes/s", t.LinkBandwidth))
	}
	if t.Latency < 0 || math.IsNaN(t.Latency) {
		errs = append(errs, fmt.Errorf("latency: %v, want >= 0 s", t.Latency))
	}
	if t.BusBandwidth < 0 || math.IsNaN(t.BusBandwidth) {
		errs = append(errs, fmt.Errorf("bus_bandwidth: %v, want >= 0 bytes/s", t.BusBandwidth))
	}
	if t.Nodes < 0 {
		errs = append(errs, fmt.Errorf("nodes: %d, want >= 0", t.Nodes))
	}
	if n := t.nodes(); n > 1 {
		if t.GPUs%n != 0 {
			errs = append(errs, fmt.Errorf("nodes: %d does not divide gpus %d", n, t.GPUs))
		}
		if !(t.NetBandwidth > 0) {
			errs = append(errs, fmt.Errorf("net_bandwidth: %v, want > 0 bytes/s with %d nodes", t.NetBandwidth, n))
		}
	}
	if t.MemBandwidth < 0 || math.IsNaN(t.MemBandwidth) {
		errs = append(errs, fmt.Errorf("mem_bandwidth: %v, want >= 0 bytes/s", t.MemBandwidth))
	}
	if t.Channels < 0 {
		errs = append(errs, fmt.Errorf("channels: %d, want >= 0", t.Channels))
	}
	if t.Physical != nil && len(t.Physical) != t.GPUs {
		errs = append(errs, fmt.Errorf("physical: %d entries for %d gpus", len(t.Physical), t.GPUs))
	}
	if len(errs) > 0 {
		return fmt.Errorf("collective: topology: %w", errors.Join(errs...))
	}
	return nil
}

func (t Topology) nodes() int {
	if t.Nodes < 1 {
		return 1
	}
	return t.Nodes
}

func (t Topology) cc() int {
	if t.CCMajor == 0 {
		return 80
	}
	return 10*t.CCMajor + t.CCMinor
}

// nvlinkEfficiency is the fraction of an NVLink's spec bandwidth that NCCL's topology model
// counts on: NCCL src/graph/topo.h SMxx_NVLINK_BW per link over the link's spec rate.
func nvlinkEfficiency(cc int) float64 {
	switch {
	case cc >= 100:
		return 40.1 / 50.0 // SM100_NVLINK_BW 40.1; NVLink 5: 50 GB/s per direction per link
	case cc >= 90:
		return 20.6 / 25.0 // SM90_NVLINK_BW 20.6; NVLink 4: 25 GB/s per direction per link
	case cc == 86 || cc == 87 || cc == 89:
		return 12.0 / 14.0625 // SM86_NVLINK_BW 12.0; GA102 NVLink bridge: 14.0625 GB/s per link
	case cc >= 70:
		return 20.0 / 25.0 // SM70/SM80_NVLINK_BW 20.0; NVLink 2/3: 25 GB/s per direction per link
	default:
		return 18.0 / 20.0 // SM60_NVLINK_BW 18.0; NVLink 1: 20 GB/s per direction per link
	}
}

// pcieEfficiency is NCCL's PCI_BW (12 GB/s, src/graph/topo.h, "PCI Gen3 x16") over the Gen3 x16
// spec rate of 15.754 GB/s; NCCL scales the same way with link width and speed for newer
// generations, so the ratio holds for Gen4 and Gen5.
const pcieEfficiency = 12.0 / 15.754

// SHMEfficiency is the fraction of a P2P PCIe ring's bus bandwidth that NCCL's SHM transport
// keeps: the sending GPU stores each chunk into pinned host memory and the receiving GPU loads
// it back across PCIe (NCCL_SHM_USE_CUDA_MEMCPY off by default: the kernels themselves read
// host memory), so every chunk makes two trips through the root complex and waits for the
// flag that says it landed. Fitted on the GeForce RTX 2080 Ti box of the shared
// tf_cnn_benchmarks logs (Xeon Gold 6230, PCIe Gen3, no NVLink bridges, XLA on: AlexNet and
// VGG16 step time over the 1-GPU one, 2 to 8 GPUs, gives 4-6 GB/s of bus bandwidth against
// NCCL's 12 GB/s PCI_BW): 0.45; the RTX 3090 boxes are held out.
const SHMEfficiency = 0.45

// a100BusBandwidthCap is NCCL 2.7's A100 refinement in ncclTopoTuneModel (src/graph/tuning.cc):
// "if (compCap80) busBw = std::min(busBw, 235.0f)" GB/s, the measured ceiling of DGX A100 rings.
const a100BusBandwidthCap = 235e9

// BusBandwidthOf returns the bus bandwidth (bytes/s) that NCCL's model gives a ring on t: the
// nccl-tests busbw of a large all-reduce. It is t.BusBandwidth when set; otherwise the per-GPU
// link bandwidth times NCCL's per-link efficiency (0.8 for NVLink 3, giving 240 GB/s on A100,
// capped at 235; 0.824 for NVLink 4, giving 370.8 GB/s on H100), and across hosts the lower of
// that and the network share.
func BusBandwidthOf(t Topology) float64 {
	if t.BusBandwidth > 0 {
		return t.BusBandwidth
	}
	var bw float64
	switch t.Kind {
	case NVLink, NVSwitch:
		bw = t.LinkBandwidth * nvlinkEfficiency(t.cc())
		if t.cc() == 80 {
			bw = math.Min(bw, a100BusBandwidthCap)
		}
	default:
		bw = t.LinkBandwidth * pcieEfficiency
		if t.PCIePath == "sys" && t.InterSocketBandwidth > 0 {
			// The ring leaves one socket and comes back through the SMP link: NCCL's search
			// (ncclTopoCompute) caps the ring at the slowest link on its path.
			bw = math.Min(bw, t.InterSocketBandwidth)
		}
		if t.SHM {
			bw *= SHMEfficiency
			if t.HostBandwidth > 0 && t.GPUs > 1 {
				bw = math.Min(bw, t.HostBandwidth/float64(t.GPUs))
			}
		}
	}
	if t.nodes() > 1 {
		bw = math.Min(bw, t.NetBandwidth)
	}
	return bw
}

func (t Topology) channels() int {
	if t.Channels > 0 {
		return t.Channels
	}
	if t.Kind == PCIe {
		return 2
	}
	// Two channels per NVLink: the search finds one ring per link and NCCL duplicates them.
	links := int(math.Round(t.LinkBandwidth / 25e9))
	if links < 1 {
		links = 1
	}
	return 2 * links
}
