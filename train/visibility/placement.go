package visibility

import (
	"fmt"
	"strings"
)

// HostLink is the cost of moving a tensor between host and device memory.
type HostLink struct {
	// H2D and D2H are bytes/s; Latency is seconds per copy.
	H2D, D2H, Latency float64
}

// DefaultHostLink is a pageable-memory copy as TF does for a CPU op's inputs and outputs,
// measured on an H200 (PCIe Gen5) through PyTorch 2.11 (collective/testdata/
// copies_h200.json): 64 MiB H2D 16.4 GB/s, D2H 12.3 GB/s; 4 KiB 12.7 us (H2D) to 13.8 us
// (D2H) per copy. Pinned buffers reach 54.7 GB/s and 7.4 us.
func DefaultHostLink() HostLink { return HostLink{H2D: 16.4e9, D2H: 12.3e9, Latency: 13e-6} }

// Op is an op to place.
type Op struct {
	// Name is the op type shown in errors ("MatMul", "StringUpper").
	Name string
	// Device is the enclosing tf.device string ("" = no scope).
	Device string
	// NoGPUKernel is true for ops with only a CPU kernel (tf.strings ops, some
	// int32 and lookup ops).
	NoGPUKernel bool
	// InputBytes are its inputs that live on a GPU, OutputBytes its outputs that GPU ops read:
	// if it lands on the CPU they cross the host link (D2H before, H2D after).
	InputBytes, OutputBytes int64
}

// Placement is where an op runs and what it costs to get it there.
type Placement struct {
	// Device is the full device name ("/job:localhost/replica:0/task:0/device:GPU:0").
	Device string
	// Logical is the logical GPU index, -1 on the CPU; GPU is the nvidia-smi index, -1 on the
	// CPU.
	Logical, GPU int
	// SoftPlaced is true when soft placement moved it from the requested device.
	SoftPlaced bool
	// Reason says why it runs there.
	Reason string
	// CopyBytes and CopySeconds are the host<->device traffic the placement adds per execution.
	CopyBytes   int64
	CopySeconds float64
}

// Place resolves an op's device as TF 2.x eager does (EagerContext::SelectDevice in
// tensorflow/core/common_runtime/eager/context.cc): a device matching the requested spec that
// has a kernel for the op wins; otherwise, with soft placement, the type and index are dropped
// and the best device with a kernel is taken (a GPU before the CPU), so a hard-coded "/GPU:5"
// that does not exist runs on GPU:0 and a CPU-only op under "/GPU:0" runs on the CPU; without
// soft placement TF raises InvalidArgumentError "Could not satisfy device specification ...".
// Soft placement is on by default in TF 2 (context.py: allow_soft_placement defaults to
// executing eagerly, and tf.function calls force it on unless the user set it); softPlacement
// nil means that default.
func (c *Context) Place(op Op, softPlacement *bool, link HostLink) (Placement, error) {
	logical := c.LogicalDevices()
	soft := true
	if softPlacement != nil {
		soft = *softPlacement
	}
	spec, err := ParseDevice(op.Device)
	if err != nil {
		return Placement{}, err
	}
	cpu := Placement{Device: LocalPrefix + "/device:CPU:0", Logical: -1, GPU: -1}
	gpu := func(i int) Placement {
		d := logical[i]
		return Placement{Device: d.FullName, Logical: i, GPU: d.GPU}
	}
	local := (spec.Job == "" || spec.Job == "localhost") && spec.Replica <= 0 && spec.Task <= 0
	supported := []string{"GPU", "CPU"}
	if op.NoGPUKernel || len(logical) == 0 {
		supported = []string{"CPU"}
	}
	var p Placement
	switch {
	case !local:
	case spec.Type == "GPU" && !op.NoGPUKernel:
		id := spec.ID
		if id < 0 {
			id = 0
		}
		if id < len(logical) {
			p = gpu(id)
			p.Reason = fmt.Sprintf("tf.device(%q): logical GPU:%d is nvidia-smi GPU %d", op.Device, id, logical[id].GPU)
			return p, nil
		}
	case spec.Type == "CPU" && spec.ID <= 0:
		p = cpu
		p.Reason = fmt.Sprintf("tf.device(%q)", op.Device)
		p.CopyBytes, p.CopySeconds = hostCopies(op, link)
		return p, nil
	case spec.Type == "" && (op.NoGPUKernel || len(logical) == 0):
		p = cpu
		p.Reason = "default placement: no GPU kernel or no GPU"
		p.CopyBytes, p.CopySeconds = hostCopies(op, link)
		return p, nil
	case spec.Type == "":
		p = gpu(0)
		p.Reason = "default placement: the first GPU"
		return p, nil
	}
	if !soft {
		var all []string
		for _, d := range logical {
			all = append(all, d.FullName)
		}
		all = append(all, cpu.Device)
		return Placement{}, tfErr("InvalidArgumentError", "Could not satisfy device specification '%s'. enable_soft_placement=0. Supported device types [%s]. All available devices [%s]. [Op:%s]",
			spec, strings.Join(supported, ", "), strings.Join(all, ", "), op.Name)
	}
	why := "does not exist"
	if local && spec.Type == "GPU" && op.NoGPUKernel {
		why = fmt.Sprintf("has no %s kernel for %s", spec.Type, op.Name)
	}
	if !op.NoGPUKernel && len(logical) > 0 {
		p = gpu(0)
		p.SoftPlaced = true
		p.Reason = fmt.Sprintf("soft placement: %s %s, so %s runs on GPU:0 (nvidia-smi GPU %d)", spec, why, op.Name, logical[0].GPU)
		return p, nil
	}
	p = cpu
	p.SoftPlaced = true
	p.Reason = fmt.Sprintf("soft placement: %s %s, so %s runs on the CPU", spec, why, op.Name)
	p.CopyBytes, p.CopySeconds = hostCopies(op, link)
	return p, nil
}

// hostCopies is the traffic of a CPU op whose inputs come from a GPU and whose outputs go
// back: one D2H copy per execution for the inputs, one H2D for the outputs.
func hostCopies(op Op, l HostLink) (int64, float64) {
	var s float64
	if op.InputBytes > 0 && l.D2H > 0 {
		s += l.Latency + float64(op.InputBytes)/l.D2H
	}
	if op.OutputBytes > 0 && l.H2D > 0 {
		s += l.Latency + float64(op.OutputBytes)/l.H2D
	}
	return op.InputBytes + op.OutputBytes, s
}
