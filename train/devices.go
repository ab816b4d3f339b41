package train

import (
	"fmt"
	"strings"

	"github.com/gpusim/gpusim/collective"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/train/visibility"
)

// tfDevices is the training process's device setup as TF performs it (train/visibility):
// CUDA applies CUDA_DEVICE_ORDER and CUDA_VISIBLE_DEVICES, the program calls
// set_visible_devices and set_logical_device_configuration, the first op initializes the
// devices, and the model's tf.device scope (default strategy) picks its GPU.
type tfDevices struct {
	ctx *visibility.Context
	// used are the physical devices TF created devices on, in TF order (the allocator's
	// device list); logical are TF's logical GPUs.
	used    []visibility.PhysicalDevice
	logical []visibility.LogicalDevice
	// place is where the default strategy's single replica runs (logical GPU index).
	place int
}

// setupTFDevices runs the device setup of the training process on the host's GPUs. memLimits
// are the set_logical_device_configuration limits applied to every visible GPU (nil: none).
// Errors are *FieldError: TF's exceptions, or no GPU left (TF would fall back to the CPU,
// which gpusim does not simulate).
func (r *runner) setupTFDevices(env map[string]string, memLimits []int64) (*tfDevices, error) {
	g := r.mach.gpu
	host := visibility.UniformHost(r.cfg.GPUCount*r.cfg.NodeCount(), visibility.GPU{Name: g.Description, CCMajor: g.CCMajor, CCMinor: g.CCMinor, SMs: g.SMs, MemoryBytes: g.MemoryBytes})
	ctx := visibility.NewContext(host, visibility.Options{Env: env})
	d := &tfDevices{ctx: ctx}
	cvdField := "Env"
	if r.cfg.CUDAVisibleDevices != nil {
		cvdField = "CUDAVisibleDevices"
	}
	phys := ctx.PhysicalDevices()
	if len(phys) == 0 {
		why := ""
		if n := ctx.Notes(); len(n) > 0 {
			why = " (" + strings.Join(n, "; ") + ")"
		}
		return nil, &FieldError{Field: cvdField, Err: fmt.Errorf("no GPU visible with CUDA_VISIBLE_DEVICES=%q%s: TensorFlow would run on the CPU, which gpusim does not simulate", env["CUDA_VISIBLE_DEVICES"], why)}
	}
	visible := make([]int, len(phys))
	for i := range visible {
		visible[i] = i
	}
	if v := r.cfg.VisibleDevices; v != nil {
		if err := ctx.SetVisibleDevices(v); err != nil {
			return nil, &FieldError{Field: "VisibleDevices", Err: err}
		}
		visible = v
	}
	if len(memLimits) > 0 {
		for _, i := range visible {
			if err := ctx.SetLogicalDeviceConfiguration(i, memLimits); err != nil {
				return nil, &FieldError{Field: "Memory.LogicalMiB", Err: err}
			}
		}
	}
	d.used = ctx.UsedPhysical()
	d.logical = ctx.LogicalDevices()
	for _, n := range ctx.Notes() {
		r.notes = append(r.notes, "devices: "+n)
	}
	if len(d.logical) == 0 {
		field, why := "VisibleDevices", "set_visible_devices left no GPU"
		if r.cfg.VisibleDevices == nil || len(r.cfg.VisibleDevices) > 0 {
			field, why = "GPU", "TF ignored every visible GPU"
		}
		return nil, &FieldError{Field: field, Err: fmt.Errorf("%s: TensorFlow would run on the CPU, which gpusim does not simulate", why)}
	}
	if r.cfg.Device != "" {
		p, err := ctx.Place(visibility.Op{Name: "model", Device: r.cfg.Device}, r.cfg.SoftPlacement, visibility.DefaultHostLink())
		if err != nil {
			return nil, &FieldError{Field: "Device", Err: err}
		}
		if p.Logical < 0 {
			return nil, &FieldError{Field: "Device", Err: fmt.Errorf("%s puts the model on the CPU, which gpusim does not simulate", r.cfg.Device)}
		}
		d.place = p.Logical
		r.notes = append(r.notes, "tf.device: "+p.Reason)
	}
	return d, nil
}

// physicalGPUs returns the nvidia-smi index of every used physical device, in TF order.
func (d *tfDevices) physicalGPUs() []int {
	out := make([]int, len(d.used))
	for i, p := range d.used {
		out[i] = p.GPU
	}
	return out
}

// logicalLimits returns the memory limits of set_logical_device_configuration that apply to
// every visible GPU: memory.logical_devices_mib, or memory.limit_mib as one logical device,
// unless memory.mode picks another call.
func logicalLimits(m Memory) []int64 {
	if m.Mode == "preallocate" || m.Mode == "growth" {
		return nil
	}
	if len(m.LogicalMiB) > 0 {
		return m.LogicalMiB
	}
	if m.LimitMiB > 0 {
		return []int64{m.LimitMiB}
	}
	return nil
}

// crossDeviceOps accepted by Config.CrossDeviceOps.
var crossDeviceOps = []string{collective.ImplNCCL, collective.ImplHierarchicalCopy, collective.ImplReductionToOneDevice}

// crossDeviceOps is MirroredStrategy's all-reduce for the run: the one the program passes
// (explicit), else TF's choice (select_cross_device_ops counts tf.config.list_logical_devices
// against list_physical_devices). NCCL refuses two ranks on one GPU ("Duplicate GPU detected",
// NCCL init.cc), which an explicit NcclAllReduce over virtual devices asks for.
func (d *tfDevices) crossDeviceOps(explicit string) (impl, warning string, err error) {
	if explicit == "" {
		impl, warning = collective.SelectCrossDeviceOps(collective.Selection{LogicalGPUs: len(d.logical), PhysicalGPUs: len(d.ctx.PhysicalDevices())})
		return impl, warning, nil
	}
	if explicit == collective.ImplNCCL && len(d.logical) > len(d.used) {
		return "", "", &FieldError{Field: "CrossDeviceOps", Err: fmt.Errorf("NCCL error: duplicate GPU detected: %d logical GPUs on %d physical GPUs (NCCL runs one rank per GPU; virtual devices need reduction_to_one_device)", len(d.logical), len(d.used))}
	}
	return explicit, "", nil
}

// bridgedNVLink reports whether g's NVLink is a bridge between two cards (GeForce/RTX-class
// Turing, Ampere and later, NVLink below the 12 links of an SXM part) rather than a mesh or a
// switch: NVIDIA's RTX 3090 bridge "connects two cards" (GA102 NVLink bridge, 4 links,
// 112.5 GB/s), as the Turing bridge does (TU102: 2 links, 100 GB/s).
func bridgedNVLink(g hw.GPU) bool {
	return g.NVLinkBandwidth > 0 && (g.CCMajor >= 8 || g.CC() == 75) && g.NVLinkBandwidth < 300e9
}

// replicaGPUs returns the logical GPUs that run a replica: for MirroredStrategy every logical
// GPU, or those of its devices argument; for the default strategy the one the tf.device scope
// picked (GPU:0 without one).
func (r *runner) replicaGPUs(d *tfDevices, logical int) ([]int, error) {
	if !r.cfg.MultiReplica() {
		if r.cfg.StrategyDevices != nil {
			return nil, &FieldError{Field: "StrategyDevices", Err: fmt.Errorf("only MirroredStrategy takes a device list (Strategy is %q)", r.cfg.Strategy), Mentions: []string{"Strategy"}}
		}
		return []int{d.place}, nil
	}
	if r.cfg.StrategyDevices == nil {
		out := make([]int, logical)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}
	if len(r.cfg.StrategyDevices) == 0 {
		// mirrored_strategy.py _initialize_strategy: assert devices, "Must specify at least one device."
		return nil, &FieldError{Field: "StrategyDevices", Err: fmt.Errorf("must specify at least one device")}
	}
	seen := map[int]bool{}
	for _, i := range r.cfg.StrategyDevices {
		if i < 0 || i >= logical {
			return nil, &FieldError{Field: "StrategyDevices", Err: fmt.Errorf("/gpu:%d does not exist: the process has %d logical GPU(s) after CUDA_VISIBLE_DEVICES and set_visible_devices", i, logical)}
		}
		if seen[i] {
			// mirrored_strategy.py _initialize_strategy asserts the devices are distinct.
			return nil, &FieldError{Field: "StrategyDevices", Err: fmt.Errorf("no duplicates allowed in `devices` argument: /gpu:%d twice", i)}
		}
		seen[i] = true
	}
	return append([]int(nil), r.cfg.StrategyDevices...), nil
}
