package train

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/collective"
	"github.com/gpusim/gpusim/framework"
	"github.com/gpusim/gpusim/hw"
)

// machine is the run's hardware and the training process's place on it: the GPU and host
// profiles, the host's physical GPUs (allocator.Devices) with the other processes started on
// them first, and TF's device setup of the training process (CUDA_VISIBLE_DEVICES, visible and
// logical devices) with an allocator per logical GPU. It is built once (setupDevices) and only
// read after.
type machine struct {
	gpu        hw.GPU
	others     []ProcessResult
	host       hw.Host // the host profile (hw.DefaultHost when the scenario names none)
	hostSet    bool    // the scenario named a host profile
	configs    []allocator.LogicalConfig
	allocs     []allocator.Allocator // every logical GPU of the process, replicas first
	devs       []*allocator.Device   // the host's physical GPUs
	visibleIdx []int                 // nvidia-smi index of each GPU the process sees
	tfd        *tfDevices            // TF's device setup of the training process
	visible    int                   // GPUs the training process sees
}

// env returns the training process's environment with cuda_visible_devices applied.
func (r *runner) env() map[string]string {
	env := map[string]string{}
	for k, v := range r.cfg.Env {
		env[k] = v
	}
	if r.cfg.CUDAVisibleDevices != nil {
		if v, ok := env["CUDA_VISIBLE_DEVICES"]; ok && v != *r.cfg.CUDAVisibleDevices {
			r.notes = append(r.notes, fmt.Sprintf("cuda_visible_devices=%q replaces env CUDA_VISIBLE_DEVICES=%q", *r.cfg.CUDAVisibleDevices, v))
		}
		env["CUDA_VISIBLE_DEVICES"] = *r.cfg.CUDAVisibleDevices
	}
	return env
}

// memoryOptions turns a process's memory settings into the TF calls allocator.StartProcess
// applies. Mode, when set, decides which call is made: "preallocate" none (TF's default),
// "growth" set_memory_growth(True), "limit" a logical device of LimitMiB; the other call's
// fields are then left out (so one --set memory.limit_mib serves a comparison of the modes).
func memoryOptions(m Memory, framework string, visible int, env map[string]string) (allocator.Options, string) {
	o := allocator.Options{
		Framework:          framework,
		Growth:             m.Growth,
		GrowthAfterLogical: m.GrowthAfterLimit && m.Growth != nil, // no set_memory_growth call, nothing to order
		Fraction:           m.Fraction,
		Allocator:          m.Allocator,
		GarbageCollection:  m.GC,
		Env:                env,
	}
	logical := m.LimitMiB > 0 || len(m.LogicalMiB) > 0
	var note string
	switch m.Mode {
	case "preallocate", "growth":
		if m.Mode == "growth" {
			t := true
			o.Growth = &t
		}
		if logical {
			note = fmt.Sprintf("memory.mode=%s: the logical device limit (memory.limit_mib / logical_devices_mib) is not applied", m.Mode)
			logical = false
		}
	}
	if logical && note == "" {
		note = growthDroppedNote(m)
	}
	if logical {
		limits := m.LogicalMiB
		if len(limits) == 0 {
			limits = []int64{m.LimitMiB}
		}
		o.LogicalDevices = map[int][]int64{}
		for i := 0; i < visible; i++ {
			o.LogicalDevices[i] = limits
		}
	}
	return o, note
}

func (r *runner) setupDevices() error {
	devs := make([]*allocator.Device, r.cfg.GPUCount*r.cfg.NodeCount())
	r.mach.devs = devs
	for i := range devs {
		devs[i] = allocator.NewDevice(allocator.DeviceSpec{
			Index: i, Name: r.mach.gpu.Name, TotalBytes: r.mach.gpu.MemoryBytes,
			ContextBytes: r.mach.gpu.ContextBytes, CCMajor: r.mach.gpu.CCMajor, CCMinor: r.mach.gpu.CCMinor,
		})
	}
	// Other processes start first and keep what they allocate.
	for i, p := range r.cfg.Processes {
		r.mach.others = append(r.mach.others, startOther(i, p, devs))
	}
	env := r.env()
	tfd, err := r.setupTFDevices(env, logicalLimits(r.cfg.Memory))
	if err != nil {
		return err
	}
	r.mach.tfd = tfd
	r.checkMixedPrecision()
	visible := tfd.physicalGPUs()
	r.mach.visibleIdx = visible
	vd := make([]*allocator.Device, len(visible))
	for i, v := range visible {
		vd[i] = devs[v]
	}
	proc, err := r.startTrain(vd, env)
	if err != nil || proc == nil {
		return err
	}
	allocs := proc.Allocators()
	r.mach.allocs = allocs
	r.mach.configs = proc.Configs()
	onGPU, err := r.replicaGPUs(tfd, len(allocs))
	if err != nil {
		return err
	}
	for id, i := range onGPU {
		r.replicas = append(r.replicas, r.newReplica(id, i, onGPU))
	}
	if err := r.setupTopology(onGPU); err != nil {
		return err
	}
	r.mach.visible = len(visible)
	return nil
}

// startOther starts the other process p (processes[i]) on its GPUs of devs and allocates what
// it holds; a process that cannot start or allocate reports why in its result.
func startOther(i int, p Process, devs []*allocator.Device) ProcessResult {
	pr := ProcessResult{Name: p.Name}
	var pd []*allocator.Device
	if p.GPUs == nil {
		pd = devs
	} else {
		for _, g := range p.GPUs {
			pd = append(pd, devs[g])
		}
	}
	fw := p.Framework
	if fw == "" {
		fw = "tensorflow"
	}
	opts, _ := memoryOptions(p.Memory, fw, len(pd), p.Env)
	proc, err := allocator.StartProcess(p.Name, pd, opts)
	if err != nil {
		pr.Err = err.Error()
		return pr
	}
	for _, a := range proc.Allocators() {
		if p.UsedBytes > 0 {
			if _, ok := a.Allocate(p.UsedBytes); !ok {
				pr.Err = fmt.Sprintf("processes[%d] could not allocate its %s on %s", i, allocator.HumanReadableNumBytes(p.UsedBytes), a.Name())
			}
		}
		pr.PoolBytes = append(pr.PoolBytes, a.Stats().PoolBytes)
	}
	return pr
}

// startTrain starts the training process's allocators on the visible devices vd. A nil
// process with a nil error is a run that ended there: the CUDA context did not fit (r.oom).
func (r *runner) startTrain(vd []*allocator.Device, env map[string]string) (*allocator.Process, error) {
	opts, note := memoryOptions(r.cfg.Memory, "tensorflow", len(vd), env)
	opts.TF1 = !r.fw.Has(framework.MinSystemMemoryByCC)
	if note != "" {
		r.notes = append(r.notes, note)
	}
	opts.LogicalDevices = r.mach.tfd.ctx.LogicalLimits()
	proc, err := allocator.StartProcess("train", vd, opts)
	var ce *allocator.ConfigError
	if errors.As(err, &ce) && ce.Type == "InternalError" {
		// The card is full before the first tensor: creating the CUDA context fails. TF raises
		// at GPU initialization; a simulated outcome, not a bad scenario.
		r.oom = &OOM{Op: "GPU initialization (CUDA context)", Device: "/physical_device:GPU:0", Message: err.Error()}
		r.mach.visible = len(vd)
		return nil, nil
	}
	if err != nil {
		return nil, &FieldError{Field: memoryErrorField(r.cfg.Memory, err), Err: err}
	}
	return proc, nil
}

// setupTopology finds the interconnect of the replicas on logical devices onGPU.
func (r *runner) setupTopology(onGPU []int) error {
	n := len(onGPU)
	h, hostSet := withTopology(r.mach.host, r.mach.hostSet, r.cfg.Topology)
	phys := make([]int, 0, n)
	for _, i := range onGPU {
		phys = append(phys, r.mach.visibleIdx[r.mach.configs[i].Physical])
	}
	topo, err := topologyOf(r.mach.gpu, h, hostSet, n, r.cfg.NodeCount(), phys)
	if fe, ok := err.(*FieldError); ok && fe.Field == "Host" && r.cfg.Topology != "" {
		fe.Field = "Topology"
	}
	if err != nil {
		return err
	}
	r.sync.topo = topo
	if r.sync.topo.Kind == collective.PCIe && r.mach.gpu.NVLinkBandwidth > 0 && n > 2 && !hostSet {
		r.notes = append(r.notes, fmt.Sprintf("NVLink bridges join %s cards in pairs: a ring over %d GPUs crosses PCIe, so NCCL runs at PCIe speed", r.mach.gpu.Name, n))
	}
	return nil
}

// topologyOf is the interconnect of n replicas on nodes hosts: the host profile's box when it
// describes one (hardware.host.profile dgx-a100, pcie-8x, @file), else the usual server of
// GPU g (topology). A box holds at most its GPUs; more need hardware.nodes. phys are the
// nvidia-smi indices of one host's replicas (Horovod's local ranks take GPUs 0..n-1:
// run_squad.py's visible_device_list = hvd.local_rank()); on a box without a switch their
// rings use only the links between them (hw.Host.NVLinkShare).
func topologyOf(g hw.GPU, h hw.Host, hostSet bool, n, nodes int, phys []int) (collective.Topology, error) {
	t := topology(g, n)
	if hostSet && h.Interconnect != "" {
		t.Kind = h.Interconnect
		switch h.Interconnect {
		case hw.InterconnectNVSwitch, hw.InterconnectNVLink:
			t.LinkBandwidth = h.NVLinkBandwidth
			if t.LinkBandwidth == 0 {
				t.LinkBandwidth = g.NVLinkBandwidth
			}
			if h.Interconnect == hw.InterconnectNVLink {
				t.LinkBandwidth *= h.NVLinkShare(phys[:min(len(phys), n/nodes)])
			}
		default:
			t.LinkBandwidth = g.PCIeBandwidth
			if h.PCIeBandwidth > 0 {
				t.LinkBandwidth = math.Min(t.LinkBandwidth, h.PCIeBandwidth)
			}
			t.PCIePath, t.InterSocketBandwidth = h.PCIePath, h.InterSocketBandwidth
			t.SHM, t.HostBandwidth = !g.PCIeP2P(), h.HostCopyBandwidth
			if bridgedPair(g, h, n, nodes, phys) {
				// Two cards on one bridge: NCCL's P2P transport over NVLink.
				t.Kind, t.LinkBandwidth, t.SHM = collective.NVLink, g.NVLinkBandwidth, false
			}
		}
		if !(t.LinkBandwidth > 0) {
			return t, &FieldError{Field: "Host", Err: fmt.Errorf("host %s: %s interconnect without a link bandwidth (nvlink_bandwidth), and GPU %s has none", h.Name, h.Interconnect, g.Name)}
		}
	}
	if hostSet && h.GPUs > 0 && n/nodes > h.GPUs {
		return t, &FieldError{Field: "GPUCount", Err: fmt.Errorf("%d GPUs per host: a %s box holds %d; more GPUs need Nodes (multi_worker_mirrored or horovod)", n/nodes, h.Name, h.GPUs), Mentions: []string{"Nodes"}}
	}
	if nodes > 1 {
		if !(h.NICBandwidth > 0) {
			return t, &FieldError{Field: "Nodes", Err: fmt.Errorf("%d hosts: host %s has no network (nic_bandwidth); pick a host profile with one (dgx-a100, hgx-h100, ...)", nodes, h.Name)}
		}
		// NCCL runs one ring per NIC, so a ring crossing hosts gets every NIC of the host.
		t.Nodes, t.NetBandwidth = nodes, h.NICBandwidth*float64(n/nodes)
	}
	return t, nil
}

// bridgedPair reports whether the ring is one bridged pair of host h: two replicas on one
// host, on GPUs 2k and 2k+1 of a box whose pairs carry NVLink bridges (hw.Host.NVLinkBridges),
// of a GPU with a bridge link.
func bridgedPair(g hw.GPU, h hw.Host, n, nodes int, phys []int) bool {
	if !h.NVLinkBridges || g.NVLinkBandwidth <= 0 || n != 2 || nodes > 1 {
		return false
	}
	return len(phys) < 2 || phys[0]/2 == phys[1]/2
}

// withTopology is host h with its interconnect replaced by Config.Topology (its other
// fields, the box size and the network, kept); without a host profile the host only carries
// the interconnect. "" leaves h as it is.
func withTopology(h hw.Host, hostSet bool, topo string) (hw.Host, bool) {
	if topo == "" {
		return h, hostSet
	}
	if !hostSet {
		// Only the interconnect comes from the host here; the box size and the network stay
		// unset, as without a host profile.
		h = hw.Host{Name: h.Name, PCIeBandwidth: h.PCIeBandwidth}
	}
	kind, path, _ := strings.Cut(topo, "-")
	h.Interconnect, h.PCIePath = kind, ""
	if kind == hw.InterconnectPCIe {
		h.PCIePath = path
		if path == "sys" && h.InterSocketBandwidth == 0 {
			// NCCL's figure for the SMP link a SYS ring crosses on Intel Skylake and later
			// (src/graph/topo.h SKL_QPI_BW), when the host profile names none.
			h.InterSocketBandwidth = hw.NCCLIntelInterSocketBandwidth
		}
	}
	return h, true
}

// topology describes the interconnect of n GPUs of profile g as the usual servers wire them:
// A100/H100/H200 SXM parts sit on HGX boards behind NVSwitch (DGX A100, DGX H100); older NVLink
// parts (V100, P100: DGX-1's hybrid cube mesh) and bridged consumer cards (RTX 3090) have
// point-to-point NVLink (bridged cards in pairs only: beyond two, the ring crosses PCIe);
// everything else talks over PCIe.
func topology(g hw.GPU, n int) collective.Topology {
	t := collective.Topology{GPUs: n, Kind: collective.PCIe, LinkBandwidth: g.PCIeBandwidth,
		CCMajor: g.CCMajor, CCMinor: g.CCMinor, MemBandwidth: g.MemBandwidth, SHM: !g.PCIeP2P()}
	switch {
	case g.NVLinkBandwidth >= 300e9 && g.CCMajor >= 8: // 12+ NVLink3/4 links: SXM on NVSwitch
		t.Kind, t.LinkBandwidth = collective.NVSwitch, g.NVLinkBandwidth
	case bridgedNVLink(g) && n > 2:
		// A bridge joins two cards; NCCL's ring through more of them takes PCIe hops, and the
		// ring runs at its slowest link.
	case g.NVLinkBandwidth > 0:
		t.Kind, t.LinkBandwidth, t.SHM = collective.NVLink, g.NVLinkBandwidth, false
	}
	return t
}

// physicalOf returns the nvidia-smi index of logical GPU i of the training process.
func (m *machine) physicalOf(i int) int { return m.visibleIdx[m.configs[i].Physical] }
