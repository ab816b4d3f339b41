package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/gpusim/gpusim/allocator"
	"github.com/gpusim/gpusim/collective"
	"github.com/gpusim/gpusim/framework"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
	"github.com/gpusim/gpusim/sim"
	"github.com/gpusim/gpusim/train/visibility"
)

// Step-time categories of Result.Breakdown, in display order.
const (
	CatInput     = "input"     // waiting for the next batch from tf.data
	CatForward   = "forward"   // forward-pass kernels
	CatBackward  = "backward"  // backward-pass kernels (and gradient accumulation)
	CatLaunch    = "launch"    // GPU idle while the host issues kernels (host-bound)
	CatSync      = "sync"      // waiting for the slowest replica
	CatAllReduce = "allreduce" // NCCL all-reduce of the gradients
	CatOptimizer = "optimizer" // optimizer update kernels
	CatCompile   = "compile"   // XLA compiling the step (first step, and each new input shape)
)

var categories = []string{CatInput, CatForward, CatBackward, CatLaunch, CatSync, CatAllReduce, CatOptimizer, CatCompile}

const (
	catInput = iota
	catForward
	catBackward
	catLaunch
	catSync
	catAllReduce
	catOptimizer
	catCompile
	numCats
)

// Run simulates cfg once and returns what it measured. It returns an error for a
// configuration TF itself would reject (bad option combinations, unknown model or GPU);
// running out of memory is a result (Result.OOM). Comparisons with other runs (one GPU,
// float32) and the diagnosis are package analysis's. It returns ctx's error soon after ctx
// is done (within MaxEventsPerCheck events), and an error wrapping ErrTooManyEvents when the
// run would take more than MaxEvents events.
func Run(ctx context.Context, cfg Config) (*Result, error) { return runCapped(ctx, cfg, MaxEvents) }

// runCapped is Run with a cap of maxEvents events.
func runCapped(ctx context.Context, cfg Config, maxEvents uint64) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	res, r, err := runOnce(ctx, cfg, maxEvents, true)
	if err == nil && res.OOM != nil && len(r.active) < len(r.replicas) {
		// Out of memory: the replicas are not copies of replica 0 at the failure (symmetric.go).
		res, _, err = runOnce(ctx, cfg, maxEvents, false)
	}
	return res, err
}

// runOnce runs cfg, simulating symmetric replicas once when symmetric is set and the proof
// holds.
func runOnce(ctx context.Context, cfg Config, maxEvents uint64, symmetric bool) (*Result, *runner, error) {
	r, err := newRunner(cfg, symmetric)
	if err != nil {
		return nil, nil, err
	}
	r.eng.SetInterrupt(MaxEventsPerCheck, func() bool {
		if err := ctx.Err(); err != nil {
			r.abort = err
		} else if n := r.eng.Processed(); n >= maxEvents {
			r.abort = fmt.Errorf("%w: stopped at %d events in step %d of %d (fewer steps, a smaller batch or fewer GPUs simulate in fewer events)", ErrTooManyEvents, n, r.step, cfg.Steps)
		}
		return r.abort != nil
	})
	res, err := r.run()
	if err == nil && r.abort != nil {
		return nil, nil, r.abort
	}
	return res, r, err
}

// MaxEvents caps the events one run simulates, so that a configuration too large to simulate
// ends with an error instead of running for hours: about a minute of simulation at the
// engine's tens of millions of events per second (docs/design.md's budget), far above a 1M-step
// ResNet-50 run on 8 GPUs with fast-forward.
const MaxEvents = 1 << 30

// MaxEventsPerCheck is how often (in events) a run looks at its context and at MaxEvents.
const MaxEventsPerCheck = 1 << 12

// ErrTooManyEvents is the error of a run stopped at MaxEvents.
var ErrTooManyEvents = errors.New("too many simulated events")

// MaxSimulatedTime caps the simulated time of one run: 1,000,000 s (11.6 days), several times
// a 90-epoch ImageNet training, while the per-replica utilization samples (5 a second,
// pipeline.NVMLSamplePeriod) stay within 40 MB.
const MaxSimulatedTime = 1_000_000 * sim.Second

// ErrTooLong is the error of a run stopped at MaxSimulatedTime.
var ErrTooLong = errors.New("simulated run too long")

// CheckCatalog checks the names that need the model zoo and the GPU table. Errors are
// *FieldError.
func CheckCatalog(cfg *Config) error {
	var errs []error
	if cfg.Model != "" {
		if err := models.Known(cfg.Model); err != nil {
			errs = append(errs, &FieldError{Field: "Model", Err: err})
		}
	}
	if _, err := models.LookupOptimizer(cfg.Optimizer); err != nil {
		errs = append(errs, &FieldError{Field: "Optimizer", Err: err})
	}
	if cfg.GPU != "" && cfg.GPUProfile == nil {
		if _, err := hw.LookupGPU(cfg.GPU); err != nil {
			errs = append(errs, &FieldError{Field: "GPU", Err: err})
		}
	}
	return errors.Join(errs...)
}

// opCost is a plan op priced once: device time, host issue time, category.
type opCost struct {
	exec, issue sim.Time
	cat         int
	kind        int // index into hw.Kinds
}

// plan is a models.Plan with its ops priced for one GPU.
type plan struct {
	*models.Plan
	batch    int
	costs    []opCost
	optStart int    // index of the first Optimizer-phase op (len(Ops) if none)
	isPers   []bool // tensor is a variable or slot: allocated once per replica
}

type replica struct {
	id      int    // replica index
	logical int    // its logical GPU: index into runner.mach.allocs and runner.mach.configs
	device  string // "/device:GPU:0"
	alloc   allocator.Allocator
	plans   []*plan // one per micro-step of an update
	share   int     // replicas on this replica's physical GPU (virtual devices)
	onStart func()  // r.opStart(rep), allocated once
	onEnd   func()  // r.opEnd(rep), allocated once
	// the replica's seeded stream and this step's kernel time factor (0 = none, one
	// replica): replicas.go
	rng    *rand.Rand
	jitter float64

	exec  replicaExec   // where it is in its step, and the step's times (exec.go)
	mem   replicaMemory // the tensors and buffers it holds (memory.go)
	stats memStats      // what its memory did (memory.go)
	proof stepProof     // what proves its steps repeat (replay.go)
}

type memEvent struct {
	at          sim.Time // offset from the step start
	inUse, pool int64
}

// profilePoints is the resolution of Device.StepProfile.
const profilePoints = 120

// maxGrowth caps Device.Growth so that a run that regrows its pool every step (garbage
// collection returning regions) stays O(1) in memory.
const maxGrowth = 64

// runner is one run: the configuration, the engine, the replicas and the step being run,
// with the parts that own the rest of the run's state (doc.go names each part's files).
type runner struct {
	cfg Config
	// fw is the run's framework and releases: every release-dependent rule reads it.
	fw  framework.Profile
	eng *sim.Engine

	mach     machine  // the hardware and TF's devices (machine.go)
	plans    runPlans // the priced step plans (plans.go)
	feed     feed     // the host input (feed.go)
	sync     gradSync // the all-reduce and the barriers (sync.go)
	sched    schedule // the loss-scale skips and XLA compiles drawn for every step (schedule.go)
	replay   replay   // what may be replayed instead of simulated (replay.go)
	rec      records  // what the steps measured (steprecord.go)
	replicas []*replica
	// active are the replicas simulated: all, or replica 0 alone when the others are proven
	// to be its copies (symmetric.go)
	active []*replica

	step      int // optimizer update being run, 1-based
	stepStart sim.Time
	end       sim.Time // when the last step ended or the OOM happened
	oom       *OOM
	abort     error // why the engine was interrupted: ctx done, or MaxEvents reached
	notes     []string
	warnings  []string
}

// batchKey names batch k of process proc's pipeline.
type batchKey struct{ proc, k int }

// batch is one (micro-)batch of a process's input pipeline.
type batch struct {
	ready   bool
	takers  int // replicas that asked for it
	waiters []func()
}

// newRunner prepares a run of cfg; symmetric lets it simulate symmetric replicas once
// (symmetric.go).
func newRunner(cfg Config, symmetric bool) (*runner, error) {
	rv, err := resolve(&cfg)
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, fw: rv.fw, eng: sim.NewEngine()}
	r.mach.gpu, r.plans.model, r.mach.host, r.mach.hostSet = rv.gpu, rv.model, rv.host, rv.hostSet
	r.feed.batches = map[batchKey]*batch{}
	r.plans.convNHWC = cfg.XLA && xlaConvNHWC(rv.gpu, rv.fw) ||
		!cfg.XLA && cfg.LayoutOptimizer != nil && !*cfg.LayoutOptimizer
	if err := r.setupDevices(); err != nil {
		return nil, err
	}
	r.active = r.replicas
	if r.oom != nil {
		return r, nil // the process could not start: nothing to plan
	}
	if err := r.setupPlans(); err != nil {
		return nil, err
	}
	if r.feed.inputs, r.feed.perProcess, err = newInputs(r.eng, cfg, r.mach.host, r.plans.replicaBatches); err != nil {
		return nil, err
	}
	if p := r.replicas[0].plans; len(p) > 0 {
		r.plans.stateArrays = stateArrays(p[0].Plan, cfg.Precision)
	}
	if cfg.FitFromArrays && r.feed.inputs == nil {
		r.feed.inputs, r.feed.perProcess = []inputSource{newArrayFeed(r.eng, r.plans.model, cfg, r.fw, r.plans.stateArrays, r.mach.gpu.DispatchScale())}, len(r.replicas)
	}
	if r.feed.inputs != nil {
		r.feed.input = r.feed.inputs[0]
	}
	if err := r.setupLossScale(); err != nil {
		return nil, err
	}
	r.setupXLA()
	if err := r.setupAllReduce(); err != nil {
		return nil, err
	}
	if err := r.setupReplicas(); err != nil {
		return nil, err
	}
	r.setupReplay(symmetric)
	return r, nil
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

// newReplica is replica id on logical device i; onGPU are every replica's logical devices
// (replicas sharing i's card count in its share).
func (r *runner) newReplica(id, i int, onGPU []int) *replica {
	rep := &replica{id: id, logical: i, device: r.mach.configs[i].Device, alloc: r.mach.allocs[i]}
	rep.stats.sampler = newSampler(r.cfg.TimelinePoints)
	rep.exec.meter = busyMeter{MaxSamples: r.cfg.UtilizationSamples}
	for k := range rep.stats.profiles {
		rep.stats.profiles[k] = newSampler(profilePoints)
	}
	for _, j := range onGPU {
		if r.mach.configs[j].Physical == r.mach.configs[i].Physical {
			rep.share++
		}
	}
	rep.onStart = func() { r.opStart(rep) }
	rep.onEnd = func() { r.opEnd(rep) }
	return rep
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

// splitBatch splits n as tf.distribute splits a global batch over k replicas (floor(n/k)
// each, the first n mod k one more: visibility.SplitBatch).
func splitBatch(n, k int) []int {
	out, err := visibility.SplitBatch(n, k)
	if err != nil {
		panic("train: " + err.Error()) // n > 0 and k >= 1 hold after Validate
	}
	return out
}

func (r *runner) setupPlans() error {
	replicaBatches := splitBatch(r.cfg.Batch, len(r.replicas))
	r.plans.replicaBatches = replicaBatches
	cache := map[int]*plan{}
	for i, rep := range r.replicas {
		for _, mb := range splitBatch(replicaBatches[i], r.cfg.AccumulationSteps) {
			if mb == 0 {
				// Name the key that pushes the product over the batch: the accumulation when
				// each replica has a sample of its own.
				field := "Batch"
				if replicaBatches[i] > 0 && r.cfg.AccumulationSteps > 1 {
					field = "AccumulationSteps"
				}
				return &FieldError{Field: field, Err: fmt.Errorf("batch %d is smaller than replicas (%d) x AccumulationSteps (%d)", r.cfg.Batch, len(r.replicas), r.cfg.AccumulationSteps), Mentions: []string{"AccumulationSteps"}}
			}
			p, ok := cache[mb]
			if !ok {
				var err error
				if p, err = r.makePlan(mb, rep.alloc.Stats().BytesLimit); err != nil {
					return err
				}
				cache[mb] = p
			}
			rep.plans = append(rep.plans, p)
		}
		n := len(rep.plans[0].Tensors)
		for _, p := range rep.plans {
			n = max(n, len(p.Tensors))
		}
		rep.mem.live = make([]allocator.Handle, n)
		rep.mem.isLive = make([]bool, n)
		rep.exec.tuned = map[string]bool{}
	}
	r.plans.gradBytes = r.replicas[0].plans[0].GradientBytes()
	if r.cfg.AccumulationSteps > 1 && r.plans.model.HasBatchNorm {
		// Seed guide, gradient accumulation: BatchNormalization normalizes each micro-batch.
		r.warnings = append(r.warnings, fmt.Sprintf("BatchNorm statistics see only the micro-batch: %s has BatchNormalization, and with %d accumulation steps it normalizes micro-batches of %d samples, not the global batch of %d",
			r.cfg.Model, r.cfg.AccumulationSteps, r.replicas[0].plans[0].batch, r.cfg.Batch))
	}
	return nil
}

// packStage is one stage of the packed all-reduce: buffers (indices into gradSync.packBufs) to
// allocate, then to free (-1 = the gradients).
type packStage struct {
	name        string
	alloc, free []int
}

// setupAllReduce prices the gradient all-reduce once (every update moves the same bytes) with
// the cross-device ops MirroredStrategy selects.
func (r *runner) setupAllReduce() error {
	if len(r.replicas) < 2 {
		return nil
	}
	p := r.replicas[0].plans[0]
	grads := make([]int64, len(p.Gradients))
	elem := 4
	for i, ti := range p.Gradients {
		grads[i] = p.Tensors[ti].Bytes
		if r.mirroredCompression() && p.Tensors[ti].DType == models.Float32 {
			// tf_cnn_benchmarks' compact gradient transfer: the NCCL all-reduce (and the
			// packs) carry each float32 gradient's float16 cast (Config.HorovodCompression).
			grads[i], elem = grads[i]/2, 2
		}
	}
	impl, warn, err := r.mach.tfd.crossDeviceOps(r.cfg.CrossDeviceOps)
	if err != nil {
		return err
	}
	if warn != "" {
		r.notes = append(r.notes, "tf.distribute: "+warn)
	}
	t := r.sync.topo
	for _, rep := range r.replicas {
		t.Physical = append(t.Physical, r.mach.tfd.logical[rep.logical].GPU)
	}
	packs := r.cfg.NumPacks
	if r.cfg.Strategy == "horovod" {
		// Horovod reduces the gradients in place, fused in its own persistent buffer
		// (replicas.go), not through TF's concat-and-split packer.
		packs = 0
	}
	ar, err := collective.PlanGradientAllReduce(t, grads, collective.GradientOptions{Impl: impl,
		Pack: collective.PackOptions{NumPacks: packs, ElemBytes: elem}})
	if err != nil {
		return fmt.Errorf("plan all-reduce: %w", err)
	}
	outOfPlace(&ar, grads, r.cfg.AccumulationSteps > 1)
	r.sync.gradSizes = grads
	r.sync.allReduce = ar
	index := map[string]int{collective.GradientsName: -1}
	for _, st := range ar.Pack.Stages {
		ps := packStage{name: st.Name}
		for _, b := range st.Alloc {
			index[b.Name] = len(r.sync.packBufs)
			ps.alloc = append(ps.alloc, len(r.sync.packBufs))
			r.sync.packBufs = append(r.sync.packBufs, b)
		}
		for _, name := range st.Free {
			i, ok := index[name]
			if !ok {
				return fmt.Errorf("plan all-reduce: stage %s frees unknown buffer %q", st.Name, name)
			}
			ps.free = append(ps.free, i)
		}
		r.sync.packStages = append(r.sync.packStages, ps)
	}
	for _, w := range ar.Warnings {
		r.notes = append(r.notes, "all-reduce: "+w)
	}
	return nil
}

// makePlan builds and prices the step of one micro-batch; limit is the replica's allocator
// limit (XLA's rematerialization aims below it). The priced plan is shared by every run of the
// process that asks for the same one (memo.go).
func (r *runner) makePlan(batch int, limit int64) (*plan, error) {
	mp, err := r.plans.model.Plan(planOptions(&r.cfg, r.fw, r.mach.gpu, batch))
	if err != nil {
		return nil, &FieldError{Field: "Model", Err: err}
	}
	if r.plans.gpuKey == "" {
		r.plans.gpuKey = gpuKey(r.mach.gpu)
	}
	k := pricedKey{mp: mp, gpu: r.plans.gpuKey, tf32: r.tf32(), cudnn: r.fw.CuDNN, xla: r.cfg.XLA, noAutotune: !cudnnAutotune(r.cfg.Env),
		splitRows: !r.fw.Has(framework.XLATritonNormalization), splitEpi: !r.fw.Has(framework.XLAGEMMEpilogues), convNHWC: r.plans.convNHWC, onDevice: r.inputOnDevice()}
	if r.cfg.XLA {
		k.keepGrads, k.limit = len(r.replicas) > 1 || r.cfg.AccumulationSteps > 1, limit
		k.keras = r.fw.Keras
	}
	p, x, err := pricedPlan(k, func() (*plan, *models.XLATemp, error) { return r.pricePlan(mp, batch, k) })
	if err != nil {
		return nil, err
	}
	if note := xlaMemoryNote(x); note != "" && r.plans.xlaTemp == nil {
		r.notes = append(r.notes, note)
		r.plans.xlaTemp = x
	}
	return p, nil
}

// pricePlan applies XLA's buffer assignment to mp (under XLA) and prices its ops on r's GPU.
func (r *runner) pricePlan(mp *models.Plan, batch int, k pricedKey) (*plan, *models.XLATemp, error) {
	var x *models.XLATemp
	if k.xla {
		mp, x = models.XLAAssign(mp, k.limit, k.keepGrads)
	}
	p := &plan{Plan: mp, batch: batch, costs: make([]opCost, len(mp.Ops)), optStart: len(mp.Ops), isPers: make([]bool, len(mp.Tensors))}
	for _, i := range mp.Persistent {
		p.isPers[i] = true
	}
	for _, i := range mp.Slots {
		p.isPers[i] = true
	}
	for i, op := range mp.Ops {
		w := r.opWork(op)
		extra := 0.0
		if w.Graph && w.Kind == hw.KindNorm && op.NormBytes > 0 && op.Bytes > op.NormBytes {
			// XLA's batch norm moves its own bytes at its measured rate; what the fused
			// activation and the outputs kept for backward add streams at the loop fusions'
			// rate (a ReLU fused into the normalizing pass costs nothing more:
			// testdata/h200/memkinds, bn_relu_fwd against bn_fwd).
			extra = op.Bytes - op.NormBytes
			w.Bytes = op.NormBytes
		}
		var epilogue hw.Work
		if w.Graph && k.splitEpi && op.EpilogueBytes > 0 && op.EpilogueBytes < w.Bytes {
			// The bias add, activation and casts after a GEMM run as a loop fusion of their own
			// (without framework.XLAGEMMEpilogues): their bytes do not hide behind the GEMM's math.
			epilogue = hw.Work{Kind: hw.KindFusion, Bytes: op.EpilogueBytes, Kernels: 1, Graph: true, DType: w.DType}
			w.Bytes -= op.EpilogueBytes
		}
		if r.inputOnDevice() && op.Kind == models.HostToDevice {
			// The batch is on the GPU already: no copy, no kernel.
			p.costs[i] = opCost{cat: catForward, kind: kindIndex(w.Kind)}
			continue
		}
		c, err := r.mach.gpu.Cost(w)
		if err != nil {
			return nil, nil, fmt.Errorf("price op %s: %w", op.Name, err)
		}
		if extra > 0 {
			c.Exec += extra / r.mach.gpu.ByteRate(hw.Work{Kind: hw.KindFusion, Graph: true, DType: w.DType})
		}
		if epilogue.Bytes > 0 {
			e, err := r.mach.gpu.Cost(epilogue)
			if err != nil {
				return nil, nil, fmt.Errorf("price op %s: %w", op.Name, err)
			}
			c.Exec, c.Issue = c.Exec+e.Exec, c.Issue+e.Issue
		}
		cat := catForward
		switch op.Phase {
		case models.Backward:
			cat = catBackward
		case models.Optimizer:
			cat = catOptimizer
			if i < p.optStart {
				p.optStart = i
			}
		}
		p.costs[i] = opCost{exec: sim.FromSeconds(c.Exec), issue: sim.FromSeconds(c.Issue), cat: cat, kind: kindIndex(w.Kind)}
	}
	return p, x, nil
}

// envTrue reads a TF boolean environment variable as tsl's ReadBoolFromEnvVar does: "1" or
// "true" (any case) is true.
func envTrue(v string) bool { return v == "1" || strings.EqualFold(v, "true") }

// tf32 reports whether float32 matmuls and convolutions may run as TF32: the run allows it
// (Config.TF32) and its release has it (framework.Release.TF32: TF 2.4+, NVIDIA's 1.15, cuDNN 8+).
func (r *runner) tf32() bool { return r.cfg.TF32 && r.fw.TF32 }

// cudnnAutotune reads TF_CUDNN_USE_AUTOTUNE as TF does (conv_ops_gpu.cc CudnnUseAutotune:
// tsl's ReadBoolFromEnvVar with default true, so only "0" or "false", any case, turn it off).
// Off, a TF convolution runs cuDNN's heuristic's first algorithm (hw.Work.NoAutotune).
func cudnnAutotune(env map[string]string) bool {
	v := env["TF_CUDNN_USE_AUTOTUNE"]
	return !(v == "0" || strings.EqualFold(v, "false"))
}

// autoJit reports whether env's TF_XLA_FLAGS turn on TF's XLA auto-clustering
// (--tf_xla_auto_jit=1, 2 or single-gpu(N); 0 and -1 leave it to the session: flags.cc,
// SetterForXlaAutoJitFlag), which is what tf.config.optimizer.set_jit(True) and TF1's
// global_jit_level ON_1 do from the API: xla is then auto-clustering, not jit_compile.
func autoJit(env map[string]string) bool {
	for _, f := range strings.Fields(env["TF_XLA_FLAGS"]) {
		if v, ok := strings.CutPrefix(f, "--tf_xla_auto_jit="); ok && v != "0" && v != "-1" {
			return true
		}
	}
	return false
}

// graphRewriteAMP reports whether env turns on TF1's automatic mixed precision graph rewrite:
// TF_ENABLE_AUTO_MIXED_PRECISION (NGC containers and TF 1.14+) or its alias
// TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE (grappler/optimizers/meta_optimizer.cc,
// AutoMixedPrecisionEnabled). A mixed_float16 step then gets each op's dtype from grappler's
// lists instead of from a Keras policy.
func graphRewriteAMP(env map[string]string) bool {
	return envTrue(env["TF_ENABLE_AUTO_MIXED_PRECISION"]) || envTrue(env["TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE"])
}

// work maps a plan op to the cost model's Work.
func work(op models.Op, tf32 bool) hw.Work {
	kind := op.Kind.String()
	if op.Kind == models.Recurrent {
		kind = hw.KindMatMul // an LSTM/GRU step is a pair of GEMMs plus element-wise gates
	}
	dtype := hw.Float32
	switch op.DType {
	case models.Float16:
		dtype = hw.Float16
	case models.BFloat16:
		dtype = hw.BFloat16
	}
	g := op.GEMM
	return hw.Work{Kind: kind, FLOPs: op.FLOPs, Bytes: op.Bytes, Kernels: op.Kernels, DType: dtype, TF32: tf32, Grad: op.Phase == models.Backward,
		ClassBytes: op.ClassBytes, ClassElems: op.ClassElems,
		Shape: hw.Shape{M: g.M, N: g.N, K: g.K, Batch: g.Batch, FilterH: g.FilterH, FilterW: g.FilterW, Stride: g.Stride, InC: g.InC, Spatial: g.Spatial}}
}

// blasWorkspace is the cuBLAS workspace XLA passes each GEMM (models.PlanOptions.BlasWorkspace):
// 32 MiB from compute capability 9.0 (Hopper), 4 MiB before.
func blasWorkspace(ccMajor int) int64 {
	if ccMajor >= 9 {
		return 32 << 20
	}
	return 4 << 20
}

// inputOnDevice reports whether the step finds its batch in GPU memory: InputOnDevice; Keras 3
// on JAX fitting from numpy arrays, whose iterator puts each batch on the device one batch
// ahead (JAXEpochIterator._one_batch_ahead_iterator, keras/src/backend/jax/trainer.py:
// jax.device_put runs while the step before it does), so the copy is the feed's (arrays.go),
// not the step's; or a tf.data pipeline, which times the batch's copy itself
// (pipeline.Pipeline.serve: as the step takes the batch, the step waiting for it; with
// PrefetchToDevice as the batch enters the buffer, while earlier steps run), so the step's
// own input op would copy the same bytes a second time.
func (r *runner) inputOnDevice() bool {
	return r.cfg.InputOnDevice || r.cfg.Input != nil || (r.fw.Framework == framework.JAX && r.cfg.FitFromArrays)
}
