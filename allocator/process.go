package allocator

import "fmt"

// Process is one framework process using some GPUs: a CUDA context on each, and one allocator
// per logical device, all drawing from the shared physical devices.
type Process struct {
	name     string
	devs     []*Device
	configs  []LogicalConfig
	allocs   []Allocator
	contexts []*Device
	exited   bool
}

// StartProcess starts a process on the visible GPUs devs (in TF order) with opts: it creates a
// CUDA context on each GPU (failing as CUDA does when the card is full), resolves TF's (or JAX's)
// options into allocators (errors carry TF's text) and, for a preallocating TF process, reserves
// each pool as TF does when the GPU runtime initializes. A failed start leaves the devices as
// they were.
func StartProcess(name string, devs []*Device, opts Options) (*Process, error) {
	p := &Process{name: name, devs: devs}
	free := make([]int64, len(devs))
	specs := make([]DeviceSpec, len(devs))
	for i, d := range devs {
		specs[i] = d.Spec()
		if !d.reserveContext(d.spec.ContextBytes) {
			p.Exit()
			// gpu_device.cc: the runtime's implicit initialization (cudaFree(nullptr)) fails
			// with cudaErrorMemoryAllocation.
			return nil, &ConfigError{"InternalError", fmt.Sprintf("CUDA runtime implicit initialization on GPU:%d failed. Status: out of memory", i)}
		}
		p.contexts = append(p.contexts, d)
		free[i] = d.FreeBytes()
	}
	cfgs, err := Resolve(opts, specs, free)
	if err != nil {
		p.Exit()
		return nil, err
	}
	p.configs = cfgs
	for _, c := range cfgs {
		d := devs[c.Physical]
		var a Allocator
		switch c.Kind {
		case "bfc":
			b := NewBFC(c.Name, c.Limit, c.BFC, d)
			b.Device = c.Device
			if c.Preallocate {
				b.Preallocate()
			}
			a = b
		case "cuda_malloc_async":
			a = NewAsync(c.Name, c.Device, c.Limit, d)
		case "platform":
			a = NewPlatform(c.Name, c.Device, c.Limit, d)
		default:
			panic("allocator: unknown kind " + c.Kind)
		}
		p.allocs = append(p.allocs, a)
	}
	return p, nil
}

// Name is the process's name.
func (p *Process) Name() string { return p.name }

// Allocators returns one allocator per logical device, in TF order (GPU:0, GPU:1, ...).
func (p *Process) Allocators() []Allocator { return p.allocs }

// Configs returns the resolved configuration of each logical device.
func (p *Process) Configs() []LogicalConfig { return p.configs }

// Exit ends the process: its pools and contexts go back to the devices. Calling it twice is a
// no-op.
func (p *Process) Exit() {
	if p.exited {
		return
	}
	p.exited = true
	for _, a := range p.allocs {
		if r, ok := a.(interface{ Release() }); ok {
			r.Release()
		}
	}
	for _, d := range p.contexts {
		d.releaseContext(d.spec.ContextBytes)
	}
	p.allocs, p.contexts = nil, nil
}

// Preallocate reserves the first region now, as TF's first allocation at GPU initialization
// does (for a non-growing allocator that region is the whole limit). If the device cannot
// supply it, Extend backs off by 0.9x as in TF. It reports whether a region was obtained.
func (a *BFC) Preallocate() bool {
	if len(a.regions) > 0 {
		return true
	}
	return a.extend(minAllocationSize)
}
