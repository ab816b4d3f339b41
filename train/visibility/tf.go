package visibility

import (
	"fmt"
	"strconv"
	"strings"
)

// Error is a Python exception TensorFlow raises; Error() reads like the traceback's last line
// ("RuntimeError: Visible devices cannot be modified after being initialized").
type Error struct {
	// Type is the Python exception class: "RuntimeError", "ValueError", "InvalidArgumentError".
	Type string
	Msg  string
}

func (e *Error) Error() string { return e.Type + ": " + e.Msg }

func tfErr(typ, format string, args ...any) error {
	return &Error{Type: typ, Msg: fmt.Sprintf(format, args...)}
}

// LocalPrefix is the job/replica/task part of every local device's full name.
const LocalPrefix = "/job:localhost/replica:0/task:0"

// PhysicalDevice is what tf.config.list_physical_devices("GPU") returns: one entry per device
// CUDA shows the process, whatever set_visible_devices or TF's own filters do later.
type PhysicalDevice struct {
	// Index is N in Name.
	Index int
	// Name is "/physical_device:GPU:N".
	Name string
	// Ordinal is the CUDA ordinal in the process; GPU the nvidia-smi index; MIG the MIG UUID.
	Ordinal, GPU int
	MIG          string
}

// LogicalDevice is what tf.config.list_logical_devices("GPU") returns, plus where it lives.
type LogicalDevice struct {
	// Index is N in Name: the number tf.device("/GPU:N") and MirroredStrategy(devices=...) use.
	Index int
	// Name is "/device:GPU:N"; FullName "/job:localhost/replica:0/task:0/device:GPU:N", the
	// string tensors' .device shows.
	Name, FullName string
	// Physical is the index of its PhysicalDevice; Ordinal the CUDA ordinal; GPU the
	// nvidia-smi index; MIG the MIG UUID if any.
	Physical, Ordinal, GPU int
	MIG                    string
	// Virtual is its position among the logical devices of one physical GPU, and
	// MemoryLimitMiB its memory_limit (0 when the device takes TF's default limit).
	Virtual        int
	MemoryLimitMiB int64
}

// Options hold the knobs of a TF process's device setup that are not API calls.
type Options struct {
	// Env is the process environment: CUDA_VISIBLE_DEVICES (present = set, even if empty),
	// CUDA_DEVICE_ORDER and TF_MIN_GPU_MULTIPROCESSOR_COUNT are read.
	Env map[string]string
	// MinCC is the lowest compute capability the TF build has kernels for, as major*10+minor;
	// 0 means 35 (TF's pip builds: "CUDA architectures 3.5, 5.0, 6.0, 7.0, 7.5, 8.0 and higher",
	// tensorflow.org/install/pip). GPUs below it are ignored at initialization.
	MinCC int
}

// Context is a TF process's device state, the eager context of tensorflow/python/eager/
// context.py: physical devices are listed before initialization; visibility and logical
// devices may be configured until the first GPU use initializes it; after that the
// configuration is frozen and changing it raises RuntimeError.
type Context struct {
	host     Host
	opts     Options
	parse    Parse
	physical []PhysicalDevice
	visible  []bool    // by physical index; set_visible_devices
	virtual  [][]int64 // by physical index; set_logical_device_configuration (nil = none)
	inited   bool
	logical  []LogicalDevice
	notes    []string
	ignored  map[int]string // physical index -> why TF ignored it at initialization
}

// NewContext starts a TF process on h: CUDA applies CUDA_DEVICE_ORDER and CUDA_VISIBLE_DEVICES
// from o.Env, and the remaining devices become TF's physical devices.
func NewContext(h Host, o Options) *Context {
	c := &Context{host: h, opts: o, ignored: map[int]string{}}
	var cvd *string
	if v, ok := o.Env["CUDA_VISIBLE_DEVICES"]; ok {
		cvd = &v
	}
	c.parse = ParseVisibleDevices(h, o.Env["CUDA_DEVICE_ORDER"], cvd)
	c.notes = append(c.notes, c.parse.Notes...)
	for i, d := range c.parse.Devices {
		c.physical = append(c.physical, PhysicalDevice{
			Index: i, Name: fmt.Sprintf("/physical_device:GPU:%d", i),
			Ordinal: d.Ordinal, GPU: d.GPU, MIG: d.MIG,
		})
	}
	c.visible = make([]bool, len(c.physical))
	for i := range c.visible {
		c.visible[i] = true
	}
	c.virtual = make([][]int64, len(c.physical))
	return c
}

// PhysicalDevices is tf.config.list_physical_devices("GPU").
func (c *Context) PhysicalDevices() []PhysicalDevice {
	return append([]PhysicalDevice(nil), c.physical...)
}

// Initialized reports whether the GPUs have been initialized (the first op, or a call that
// needs the runtime such as list_logical_devices, has run).
func (c *Context) Initialized() bool { return c.inited }

func (c *Context) checkIndex(i int) error {
	if i < 0 || i >= len(c.physical) {
		return tfErr("ValueError", "Unrecognized device: PhysicalDevice(name='/physical_device:GPU:%d', device_type='GPU')", i)
	}
	return nil
}

// SetVisibleDevices is tf.config.set_visible_devices([gpus[i] for i in indices], "GPU"). The
// order of indices does not matter: TF keeps physical order. Hiding every GPU is allowed
// (indices empty). After initialization a different list raises RuntimeError, the same list is
// a no-op, as in context.py.
func (c *Context) SetVisibleDevices(indices []int) error {
	want := make([]bool, len(c.physical))
	for _, i := range indices {
		if err := c.checkIndex(i); err != nil {
			return err
		}
		want[i] = true
	}
	same := true
	for i := range want {
		same = same && want[i] == c.visible[i]
	}
	if same {
		return nil
	}
	if c.inited {
		return tfErr("RuntimeError", "Visible devices cannot be modified after being initialized")
	}
	c.visible = want
	return nil
}

// SetLogicalDeviceConfiguration is tf.config.set_logical_device_configuration(gpus[index],
// [LogicalDeviceConfiguration(memory_limit=m) for m in limitsMiB]): the GPU becomes
// len(limitsMiB) logical devices. A zero limit is memory_limit=None, which TF rejects for GPUs.
func (c *Context) SetLogicalDeviceConfiguration(index int, limitsMiB []int64) error {
	if err := c.checkIndex(index); err != nil {
		return err
	}
	for _, m := range limitsMiB {
		if m <= 0 {
			return tfErr("ValueError", "Setting memory limit is required for GPU virtual devices")
		}
	}
	if equalLimits(c.virtual[index], limitsMiB) {
		return nil
	}
	if c.inited {
		return tfErr("RuntimeError", "Virtual devices cannot be modified after being initialized")
	}
	c.virtual[index] = append([]int64{}, limitsMiB...)
	return nil
}

func equalLimits(a, b []int64) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Initialize creates TF's GPU devices, as the first GPU op does (BaseGPUDeviceFactory::
// CreateDevices in tensorflow/core/common_runtime/gpu/gpu_device.cc): the visible physical
// devices in physical order, minus those GetValidDeviceIds ignores (compute capability below
// the build's minimum; fewer multiprocessors than min(most SMs among the visible GPUs, 8)
// unless TF_MIN_GPU_MULTIPROCESSOR_COUNT says otherwise), each split into its logical devices.
// It is idempotent.
func (c *Context) Initialize() {
	if c.inited {
		return
	}
	c.inited = true
	minCC := c.opts.MinCC
	if minCC == 0 {
		minCC = 35
	}
	maxSMs := 0
	for i, p := range c.physical {
		if c.visible[i] {
			maxSMs = max(maxSMs, c.host.GPUs[p.GPU].SMs)
		}
	}
	minSMs := min(maxSMs, 8) // kDefaultMinGPUMultiprocessorCount = 8
	if v, ok := c.opts.Env["TF_MIN_GPU_MULTIPROCESSOR_COUNT"]; ok && v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			minSMs = n
		} else {
			c.notes = append(c.notes, fmt.Sprintf("Invalid minimum GPU multiprocessor count: [%s]. Using the default value: %d", v, minSMs))
		}
	}
	anyVirtual := false
	for _, v := range c.virtual {
		anyVirtual = anyVirtual || v != nil
	}
	for i, p := range c.physical {
		if !c.visible[i] {
			continue
		}
		g := c.host.GPUs[p.GPU]
		desc := fmt.Sprintf("device: %d, name: %s, pci bus id: %s, compute capability: %d.%d", p.Ordinal, g.Name, g.PCIBusID, g.CCMajor, g.CCMinor)
		if cc := g.CCMajor*10 + g.CCMinor; cc < minCC {
			why := fmt.Sprintf("Ignoring visible gpu device (%s) with Cuda compute capability %d.%d. The minimum required Cuda capability is %d.%d.", desc, g.CCMajor, g.CCMinor, minCC/10, minCC%10)
			c.ignored[i] = why
			c.notes = append(c.notes, why)
			continue
		}
		if g.SMs < minSMs {
			why := fmt.Sprintf("Ignoring visible gpu device (%s) with core count: %d. The minimum required count is %d. You can adjust this requirement with the env var TF_MIN_GPU_MULTIPROCESSOR_COUNT.", desc, g.SMs, minSMs)
			c.ignored[i] = why
			c.notes = append(c.notes, why)
			continue
		}
		limits := c.virtual[i]
		if !anyVirtual || len(limits) == 0 {
			limits = []int64{0}
		}
		for v, m := range limits {
			n := len(c.logical)
			c.logical = append(c.logical, LogicalDevice{
				Index: n, Name: fmt.Sprintf("/device:GPU:%d", n), FullName: fmt.Sprintf("%s/device:GPU:%d", LocalPrefix, n),
				Physical: i, Ordinal: p.Ordinal, GPU: p.GPU, MIG: p.MIG, Virtual: v, MemoryLimitMiB: m,
			})
		}
	}
}

// LogicalDevices is tf.config.list_logical_devices("GPU"); like TF it initializes the context.
func (c *Context) LogicalDevices() []LogicalDevice {
	c.Initialize()
	return append([]LogicalDevice(nil), c.logical...)
}

// Notes are the messages of the device setup so far, in order: CUDA's treatment of
// CUDA_VISIBLE_DEVICES and TF's "Ignoring visible gpu device" log lines.
func (c *Context) Notes() []string { return append([]string(nil), c.notes...) }

// DeviceSpec is a parsed TF device string.
type DeviceSpec struct {
	Job              string
	Replica, Task    int // -1 = unspecified
	Type             string
	ID               int // -1 = unspecified ("/GPU:*" or "/GPU")
	HasReplica, HasT bool
}

// ParseDevice parses the strings tf.device accepts: "/GPU:1", "/gpu:1", "GPU:1",
// "/device:GPU:1", "/job:localhost/replica:0/task:0/device:GPU:1", "/cpu:0", "" (no
// constraint). The type is upper-cased, as DeviceSpec does.
func ParseDevice(s string) (DeviceSpec, error) {
	d := DeviceSpec{Replica: -1, Task: -1, ID: -1}
	if strings.TrimSpace(s) == "" {
		return d, nil
	}
	for _, part := range strings.Split(strings.TrimPrefix(s, "/"), "/") {
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, ":")
		lk := strings.ToLower(k)
		switch {
		case lk == "job" && ok:
			d.Job = v
		case lk == "replica" && ok:
			n, err := strconv.Atoi(v)
			if err != nil {
				return d, tfErr("ValueError", "Unknown attribute: '%s' in '%s'", part, s)
			}
			d.Replica, d.HasReplica = n, true
		case lk == "task" && ok:
			n, err := strconv.Atoi(v)
			if err != nil {
				return d, tfErr("ValueError", "Unknown attribute: '%s' in '%s'", part, s)
			}
			d.Task, d.HasT = n, true
		case lk == "device":
			if !ok {
				return d, tfErr("ValueError", "Unknown attribute: '%s' in '%s'", part, s)
			}
			t, id, ok2 := strings.Cut(v, ":")
			d.Type = strings.ToUpper(t)
			if ok2 && id != "*" {
				n, err := strconv.Atoi(id)
				if err != nil || n < 0 {
					return d, tfErr("ValueError", "Unknown attribute: '%s' in '%s'", part, s)
				}
				d.ID = n
			}
		case lk == "gpu" || lk == "cpu":
			d.Type = strings.ToUpper(k)
			if ok && v != "*" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return d, tfErr("ValueError", "Unknown attribute: '%s' in '%s'", part, s)
				}
				d.ID = n
			}
		default:
			return d, tfErr("ValueError", "Unknown attribute: '%s' in '%s'", part, s)
		}
	}
	return d, nil
}

// String is the full name TF prints for the spec merged onto the local task
// ("/job:localhost/replica:0/task:0/device:GPU:1").
func (d DeviceSpec) String() string {
	var b strings.Builder
	b.WriteString(LocalPrefix)
	if d.Type != "" {
		b.WriteString("/device:" + d.Type)
		if d.ID >= 0 {
			b.WriteString(":" + strconv.Itoa(d.ID))
		} else {
			b.WriteString(":*")
		}
	}
	return b.String()
}

// UsedPhysical returns the physical devices TF creates devices on, in TF's order: visible
// after set_visible_devices and not ignored at initialization. This is the device list to give
// the allocator (allocator.StartProcess), whose logical-device map is keyed by position in it
// (LogicalLimits). It initializes the context.
func (c *Context) UsedPhysical() []PhysicalDevice {
	c.Initialize()
	var out []PhysicalDevice
	for i, p := range c.physical {
		if c.visible[i] && c.ignored[i] == "" {
			out = append(out, p)
		}
	}
	return out
}

// LogicalLimits returns the set_logical_device_configuration memory limits (MiB) keyed by
// position in UsedPhysical, for allocator.Options.LogicalDevices; nil when no GPU was split.
func (c *Context) LogicalLimits() map[int][]int64 {
	var out map[int][]int64
	for pos, p := range c.UsedPhysical() {
		if lim := c.virtual[p.Index]; len(lim) > 0 {
			if out == nil {
				out = map[int][]int64{}
			}
			out[pos] = append([]int64(nil), lim...)
		}
	}
	return out
}
