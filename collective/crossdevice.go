package collective

import (
	"fmt"
	"math"
)

// tf.distribute cross-device ops that MirroredStrategy can use on one host.
const (
	// ImplNCCL is tf.distribute.NcclAllReduce: packed gradients, one NCCL all-reduce per pack.
	ImplNCCL = "nccl"
	// ImplHierarchicalCopy is tf.distribute.HierarchicalCopyAllReduce: packed gradients reduced
	// by device-to-device copies in two groups (built for DGX-1), then copied back.
	ImplHierarchicalCopy = "hierarchical_copy"
	// ImplReductionToOneDevice is tf.distribute.ReductionToOneDevice: every gradient copied to
	// the first device, summed with add_n, and copied back; no packing.
	ImplReductionToOneDevice = "reduction_to_one_device"
)

// copyOpSeconds is the cost of one small device-to-device copy op, measured on an H200 through
// PyTorch 2.11 (testdata/copies_h200.json, d2d_4096: 9.2 us per copy back to back; the same
// 9.0 us at 1 MiB, so it is per-op overhead, not bandwidth). TF launches one copy op per tensor
// per peer in its copy-based reductions, and one add_n per tensor.
const copyOpSeconds = 9.2e-6

// Selection is what tf.distribute's select_cross_device_ops looks at
// (tensorflow/python/distribute/cross_device_ops.py) when MirroredStrategy gets no
// cross_device_ops argument.
type Selection struct {
	// LogicalGPUs is len(tf.config.list_logical_devices("GPU")).
	LogicalGPUs int
	// PhysicalGPUs is len(tf.config.list_physical_devices("GPU")): every GPU CUDA shows the
	// process, hidden by set_visible_devices or not.
	PhysicalGPUs int
	// NonGPUDevice is true when the strategy's device list holds a CPU.
	NonGPUDevice bool
	// NoNCCLKernel is true where TF was built without NCCL (Windows).
	NoNCCLKernel bool
}

// SelectCrossDeviceOps returns the implementation TF picks and the warning it logs ("" if none).
// The count comparison is TF's own: any difference between logical and physical GPUs — virtual
// devices, or a GPU hidden with set_visible_devices — falls back to ReductionToOneDevice.
func SelectCrossDeviceOps(s Selection) (impl, warning string) {
	if s.LogicalGPUs != s.PhysicalGPUs {
		return ImplReductionToOneDevice, "NCCL is not supported when using virtual GPUs, fallingback to reduction to one device"
	}
	if s.NonGPUDevice {
		return ImplReductionToOneDevice, "There are non-GPU devices in `tf.distribute.Strategy`, not using nccl allreduce."
	}
	if s.NoNCCLKernel {
		return ImplReductionToOneDevice, "Nccl kernel is not found, not using nccl allreduce."
	}
	return ImplNCCL, ""
}

// GradientOptions configure PlanGradientAllReduce.
type GradientOptions struct {
	// Impl is ImplNCCL (default), ImplHierarchicalCopy or ImplReductionToOneDevice.
	Impl string
	// Pack is num_packs and the element size (NumPacks 1 is Keras' default NcclAllReduce).
	// ReductionToOneDevice ignores it: it reduces tensor by tensor.
	Pack PackOptions
	// Algo forces NCCL's algorithm/protocol ("" = NCCL's choice); see Collective.
	Algo string
}

// DefaultGradientOptions is what MirroredStrategy() uses on several GPUs: NcclAllReduce with
// num_packs=1 and float32 gradients.
func DefaultGradientOptions() GradientOptions {
	return GradientOptions{Impl: ImplNCCL, Pack: PackOptions{NumPacks: 1, ElemBytes: 4}}
}

// GradientAllReduce is the cost of reducing one step's gradients across the replicas.
type GradientAllReduce struct {
	Impl string
	// Pack is the packing plan (every replica does the same): its Stages are the buffers to
	// allocate and free around the all-reduce, its ExtraBytes the memory beyond the gradients.
	Pack PackPlan
	// Calls are the NCCL all-reduces in launch order (ImplNCCL only); they run one after the
	// other on each GPU's NCCL stream.
	Calls []Result
	// Seconds is the time from the first pack being ready to the last reduced gradient.
	Seconds float64
	// ReduceDeviceExtraBytes is the copy-based reductions' extra memory on a reducing device
	// (the received copies and the sum of the largest unit in flight), beyond Pack.ExtraBytes.
	ReduceDeviceExtraBytes int64
	// BusBW is nccl-tests' bus bandwidth of the whole operation: TotalBytes/Seconds x 2(n-1)/n.
	BusBW float64
	// Warnings are what TF would log, or where the model knows TF misbehaves.
	Warnings []string
}

// PlanGradientAllReduce returns what all-reducing gradients of the given sizes (bytes, per
// replica, in the optimizer's variable order) costs on t: the pack buffers each replica
// allocates and the time. It is the helper the training loop calls once per optimizer update
// (after the whole backward pass, as Keras' fit does).
func PlanGradientAllReduce(t Topology, gradientBytes []int64, o GradientOptions) (GradientAllReduce, error) {
	if err := t.Validate(); err != nil {
		return GradientAllReduce{}, err
	}
	impl := o.Impl
	if impl == "" {
		impl = ImplNCCL
	}
	g := GradientAllReduce{Impl: impl}
	var err error
	switch impl {
	case ImplNCCL, ImplHierarchicalCopy:
		g.Pack, err = Pack(gradientBytes, o.Pack)
	case ImplReductionToOneDevice:
		g.Pack, err = Pack(gradientBytes, PackOptions{NumPacks: 0, ElemBytes: o.Pack.ElemBytes})
	default:
		return g, fmt.Errorf("collective: cross-device ops %q: want %s, %s or %s", impl, ImplNCCL, ImplHierarchicalCopy, ImplReductionToOneDevice)
	}
	if err != nil {
		return g, err
	}
	n := t.GPUs
	if n == 1 || g.Pack.TotalBytes == 0 {
		g.Seconds = 0
		return g, nil
	}
	switch impl {
	case ImplNCCL:
		if dup := duplicatePhysical(t); dup >= 0 {
			// NCCL refuses two ranks on one device (init.cc: "Duplicate GPU detected").
			return g, fmt.Errorf("collective: nccl: duplicate GPU detected: ranks share physical GPU %d (virtual devices need ReductionToOneDevice)", dup)
		}
		for _, b := range g.Pack.Packs {
			r, err := Collective(t, OpAllReduce, b, o.Algo)
			if err != nil {
				return g, err
			}
			g.Calls = append(g.Calls, r)
			g.Seconds += r.Seconds
		}
	case ImplHierarchicalCopy:
		if n%2 != 0 {
			g.Warnings = append(g.Warnings, fmt.Sprintf("hierarchical copy splits %d GPUs into two groups of %d: GPU %d's gradients are left out of the sum (TF assumes a DGX-1's 8 GPUs)", n, n/2, n-1))
		}
		units := hierarchicalUnits(n, g.Pack.Packs)
		g.Seconds, g.ReduceDeviceExtraBytes = copyPlanCost(t, units)
	case ImplReductionToOneDevice:
		units := make([]copyUnit, 0, len(gradientBytes))
		for _, b := range gradientBytes {
			units = append(units, reduceToOneUnit(n, b))
		}
		g.Seconds, g.ReduceDeviceExtraBytes = copyPlanCost(t, units)
	}
	if g.Seconds > 0 {
		g.BusBW = float64(g.Pack.TotalBytes) / g.Seconds * busFactor(OpAllReduce, n)
	}
	return g, nil
}

// physical returns the physical GPU of rank r.
func (t Topology) physical(r int) int {
	if len(t.Physical) == 0 {
		return r
	}
	return t.Physical[r]
}

func duplicatePhysical(t Topology) int {
	seen := map[int]bool{}
	for r := 0; r < t.GPUs; r++ {
		p := t.physical(r)
		if seen[p] {
			return p
		}
		seen[p] = true
	}
	return -1
}

// A copyUnit is one tensor's copy-based reduction: phases run one after another; the copies of
// a phase run in parallel; an add_n sums `inputs` tensors of `bytes` on device `on`.
type copyUnit struct {
	bytes  int64
	phases [][]copyStep
}

type copyStep struct {
	src, dst int // copy src -> dst; src == dst with inputs > 0 is an add_n on dst
	inputs   int
}

// reduceToOneUnit is ReductionToOneDevice for one tensor: _simple_reduce copies every replica's
// value to the first device and add_n's them there; _simple_broadcast copies the sum back.
func reduceToOneUnit(n int, b int64) copyUnit {
	u := copyUnit{bytes: b}
	var in, out []copyStep
	for i := 1; i < n; i++ {
		in = append(in, copyStep{src: i, dst: 0})
		out = append(out, copyStep{src: 0, dst: i})
	}
	u.phases = [][]copyStep{in, {{src: 0, dst: 0, inputs: n}}, out}
	return u
}

// hierarchicalUnits follows cross_device_utils.aggregate_gradients_using_hierarchical_copy:
// pack i's group-0 root is GPU i % n, group-1's root is (root0 + n/2) % n; each group sums on
// its root, root0 adds root1's sum, sends the total back to root1, and each root copies it to
// the members of its group.
func hierarchicalUnits(n int, packs []int64) []copyUnit {
	gs := n / 2
	var units []copyUnit
	for i, b := range packs {
		m0 := i % n
		m1 := (m0 + gs) % n
		b0, b1 := 0, gs
		if m0 >= gs {
			b0, b1 = gs, 0
		}
		var gather []copyStep
		for j := b0; j < b0+gs; j++ {
			if j != m0 {
				gather = append(gather, copyStep{src: j, dst: m0})
			}
		}
		for j := b1; j < b1+gs; j++ {
			if j != m1 {
				gather = append(gather, copyStep{src: j, dst: m1})
			}
		}
		sums := []copyStep{{src: m0, dst: m0, inputs: gs}, {src: m1, dst: m1, inputs: gs}}
		var bcast []copyStep
		for j := 0; j < n; j++ {
			root := m1
			if (m0 < gs) == (j < gs) {
				root = m0
			}
			if j != root {
				bcast = append(bcast, copyStep{src: root, dst: j})
			}
		}
		units = append(units, copyUnit{bytes: b, phases: [][]copyStep{
			gather, sums, {{src: m1, dst: m0}}, {{src: m0, dst: m0, inputs: 2}}, {{src: m0, dst: m1}}, bcast,
		}})
	}
	return units
}

// copyPlanCost times copy-based reductions: the larger of the busiest device's load (link
// bytes in or out at the bus bandwidth, local memory traffic at MemBandwidth, and per-op
// overhead) and the longest single unit's chain of phases. Copies between ranks on one physical
// GPU are local memory traffic (read + write). It also returns the extra memory on the busiest
// reducing device: the received copies plus the sum of the largest unit.
func copyPlanCost(t Topology, units []copyUnit) (seconds float64, extra int64) {
	bw := BusBandwidthOf(t)
	type load struct {
		in, out, local float64
		ops            int
	}
	loads := map[int]*load{}
	get := func(p int) *load {
		if loads[p] == nil {
			loads[p] = &load{}
		}
		return loads[p]
	}
	memTime := func(bytes float64) float64 {
		if t.MemBandwidth > 0 {
			return bytes / t.MemBandwidth
		}
		return 0
	}
	var critical float64
	for _, u := range units {
		b := float64(u.bytes)
		received := map[int]int64{}
		var chain float64
		for _, ph := range u.phases {
			// A phase's copies run in parallel; each device's link in and link out are
			// separate (full duplex), local memory traffic adds to its own time.
			in, out, local := map[int]float64{}, map[int]float64{}, map[int]float64{}
			for _, s := range ph {
				ps, pd := t.physical(s.src), t.physical(s.dst)
				switch {
				case s.inputs > 0:
					traffic := float64(s.inputs+1) * b
					get(pd).local += traffic
					local[pd] += traffic
				case ps == pd:
					get(pd).local += 2 * b
					local[pd] += 2 * b
					received[s.dst] += u.bytes
				default:
					get(ps).out += b
					get(pd).in += b
					out[ps] += b
					in[pd] += b
					received[s.dst] += u.bytes
				}
				get(pd).ops++
			}
			var m float64
			for _, d := range []map[int]float64{in, out, local} {
				for p := range d {
					m = max(m, math.Max(in[p], out[p])/bw+memTime(local[p]))
				}
			}
			chain += m + copyOpSeconds
		}
		critical = max(critical, chain)
		for _, r := range received {
			extra = max(extra, r+u.bytes)
		}
	}
	var busiest float64
	for _, l := range loads {
		busiest = max(busiest, math.Max(l.in, l.out)/bw+memTime(l.local)+float64(l.ops)*copyOpSeconds)
	}
	return max(busiest, critical) + t.Latency, extra
}
