package allocator

import (
	"fmt"
	"strconv"
	"strings"
)

// Options are one process's memory settings, as TensorFlow (or JAX) names them.
type Options struct {
	// Framework is "tensorflow" (default) or "jax".
	Framework string
	// Growth is tf.config.experimental.set_memory_growth called with this value on every
	// visible GPU (nil = never called).
	Growth *bool
	// GrowthByGPU is set_memory_growth called on some GPUs only (visible index -> value); it
	// overrides Growth for those GPUs. TF requires the same value on all visible GPUs.
	GrowthByGPU map[int]bool
	// LogicalDevices is tf.config.set_logical_device_configuration: visible GPU index -> the
	// memory_limit in MiB of each logical device carved from it.
	LogicalDevices map[int][]int64
	// GrowthAfterLogical says set_memory_growth was called after the logical configuration
	// (TF raises ValueError); otherwise the logical configuration silently wins.
	GrowthAfterLogical bool
	// Fraction is per_process_gpu_memory_fraction (0 = unset); for JAX, the memory fraction.
	Fraction float64
	// Allocator is "bfc" (default), "cuda_malloc_async" or "platform" (cudaMalloc per tensor).
	Allocator string
	// GarbageCollection overrides the framework default (TF on, JAX off).
	GarbageCollection *bool
	// FragmentationFraction is GPUOptions.Experimental.internal_fragmentation_fraction.
	FragmentationFraction float64
	// ModifiedAfterInit names a configuration call made after the runtime was initialized:
	// "memory_growth", "logical_devices" or "visible_devices"; TF raises RuntimeError.
	ModifiedAfterInit string
	// TF1: the process runs TensorFlow 1.x, whose MinSystemMemory leaves 5% of the free memory
	// to the system (MinSystemMemoryTF1) instead of a reserve by compute capability.
	TF1 bool
	// Env holds environment variables: TF_FORCE_GPU_ALLOW_GROWTH, TF_GPU_ALLOCATOR,
	// TF_ENABLE_GPU_GARBAGE_COLLECTION, TF_DEVICE_MIN_SYS_MEMORY_IN_MB,
	// XLA_PYTHON_CLIENT_PREALLOCATE, XLA_CLIENT_MEM_FRACTION, XLA_PYTHON_CLIENT_MEM_FRACTION,
	// XLA_PYTHON_CLIENT_ALLOCATOR.
	Env map[string]string
}

// ConfigError is an exception TF or JAX raises for a bad configuration; Error gives its Python
// form, "ValueError: Memory growth cannot differ between GPU devices".
type ConfigError struct {
	Type string // "ValueError", "RuntimeError", "InternalError"
	Msg  string
}

func (e *ConfigError) Error() string { return e.Type + ": " + e.Msg }

// LogicalConfig is what one logical device gets: its allocator kind and options.
type LogicalConfig struct {
	Name        string // "GPU_0_bfc"
	Device      string // "/job:localhost/replica:0/task:0/device:GPU:0"
	Physical    int    // index into the devices passed to StartProcess
	Kind        string // "bfc", "cuda_malloc_async", "platform"
	Limit       int64
	BFC         BFCOptions
	Preallocate bool
}

// MinSystemMemory is TF's MinSystemMemory (gpu_device.cc): memory left to the system when no
// limit is set. available below 2 GiB: 225 MiB; else by compute capability major: <= 6: 500 MiB,
// 7: 1050 MiB, 8: 1536 MiB, newer: 1800 MiB (optimized builds).
func MinSystemMemory(available int64, ccMajor int) int64 {
	switch {
	case available < 1<<31:
		return 225 << 20
	case ccMajor <= 6:
		return 500 << 20
	case ccMajor <= 7:
		return 1050 << 20
	case ccMajor <= 8:
		return 1536 << 20
	default:
		return 1800 << 20
	}
}

// MinSystemMemoryTF1 is MinSystemMemory of TensorFlow 1.x's gpu_device.cc: available below
// 2 GiB: 225 MiB; else max(300 MiB, 0.05 * available) ("In the future we could be more
// sophisticated by using a table of devices"; the compute-capability table replaced it in 2.x).
func MinSystemMemoryTF1(available int64) int64 {
	if available < 1<<31 {
		return 225 << 20
	}
	return max(314572800, int64(float64(available)*0.05))
}

// DefaultLimit is SingleVirtualDeviceMemoryLimit (gpu_device.cc) for one GPU: fraction f > 0
// gives total*f; otherwise free minus MinSystemMemory (all of free if that would go negative);
// TF_DEVICE_MIN_SYS_MEMORY_IN_MB (if valid and not above free) replaces the reserve. free is
// measured after this process's CUDA context exists.
func DefaultLimit(total, free int64, ccMajor int, fraction float64, env map[string]string) int64 {
	return defaultLimit(total, free, MinSystemMemory(free, ccMajor), fraction, env)
}

func defaultLimit(total, free, msm int64, fraction float64, env map[string]string) int64 {
	var limit int64
	if fraction == 0 {
		limit = free
		if msm < limit {
			limit -= msm
		}
	} else {
		limit = int64(float64(total) * fraction)
	}
	if s, ok := env["TF_DEVICE_MIN_SYS_MEMORY_IN_MB"]; ok && s != "" {
		if mb, err := strconv.ParseInt(s, 10, 64); err == nil && mb >= 0 && mb*(1<<20) <= free {
			limit = free - mb*(1<<20)
		}
	}
	return limit
}

// envBool parses TF's "true"/"false" environment values (gpu_bfc_allocator.cc
// GetAllowGrowthValue, GetGarbageCollectionValue compare with strcmp): anything else is ignored.
func envBool(env map[string]string, key string) (value, set bool) {
	switch env[key] {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// Resolve turns a process's options into one LogicalConfig per logical device, applying TF's
// (or JAX's) rules and raising their errors. free[i] is the free memory of device i after the
// process's context was created; the devices are the visible GPUs in TF order.
func Resolve(opts Options, specs []DeviceSpec, free []int64) ([]LogicalConfig, error) {
	fw := opts.Framework
	if fw == "" {
		fw = "tensorflow"
	}
	switch fw {
	case "tensorflow":
		return resolveTF(opts, specs, free)
	case "jax":
		return resolveJAX(opts, specs, free)
	}
	return nil, fmt.Errorf("unknown framework %q (want tensorflow or jax)", opts.Framework)
}

func resolveTF(opts Options, specs []DeviceSpec, free []int64) ([]LogicalConfig, error) {
	env := opts.Env
	// context.py: set_memory_growth checks the virtual device map first, then initialization.
	if opts.GrowthAfterLogical && len(opts.LogicalDevices) > 0 {
		return nil, &ConfigError{"ValueError", "Cannot set memory growth on device when virtual devices configured"}
	}
	switch opts.ModifiedAfterInit {
	case "":
	case "memory_growth":
		return nil, &ConfigError{"RuntimeError", "Physical devices cannot be modified after being initialized"}
	case "logical_devices":
		return nil, &ConfigError{"RuntimeError", "Virtual devices cannot be modified after being initialized"}
	case "visible_devices":
		return nil, &ConfigError{"RuntimeError", "Visible devices cannot be modified after being initialized"}
	default:
		return nil, fmt.Errorf("unknown configuration call %q (want memory_growth, logical_devices or visible_devices)", opts.ModifiedAfterInit)
	}
	for i := range opts.LogicalDevices {
		if i < 0 || i >= len(specs) {
			return nil, &ConfigError{"ValueError", fmt.Sprintf("Unrecognized device: PhysicalDevice(name='/physical_device:GPU:%d', device_type='GPU')", i)}
		}
	}
	// context.py _compute_gpu_options: growth is computed only without virtual devices, and
	// must be one value (True, False or unset) over all visible GPUs.
	allowGrowth := false
	if len(opts.LogicalDevices) == 0 {
		seen := map[string]bool{}
		for i := range specs {
			v := "None"
			if g, ok := opts.GrowthByGPU[i]; ok {
				v = strconv.FormatBool(g)
			} else if opts.Growth != nil {
				v = strconv.FormatBool(*opts.Growth)
			}
			seen[v] = true
			allowGrowth = v == "true"
		}
		if len(seen) > 1 {
			return nil, &ConfigError{"ValueError", "Memory growth cannot differ between GPU devices"}
		}
	}
	// gpu_bfc_allocator.cc GetAllowGrowthValue: TF_FORCE_GPU_ALLOW_GROWTH overrides the config.
	if v, ok := envBool(env, "TF_FORCE_GPU_ALLOW_GROWTH"); ok {
		allowGrowth = v
	}
	gc := true // GetGarbageCollectionValue: on unless TF_ENABLE_GPU_GARBAGE_COLLECTION=false
	if v, ok := envBool(env, "TF_ENABLE_GPU_GARBAGE_COLLECTION"); ok {
		gc = v
	}
	if opts.GarbageCollection != nil {
		gc = *opts.GarbageCollection
	}
	kind, err := allocatorKind(opts.Allocator, env["TF_GPU_ALLOCATOR"])
	if err != nil {
		return nil, err
	}
	var out []LogicalConfig
	for i, s := range specs {
		var limits []int64
		if mibs, ok := opts.LogicalDevices[i]; ok && len(mibs) > 0 {
			for _, mib := range mibs {
				limits = append(limits, mib<<20) // memory_limit_mb * kMegaByte
			}
		} else {
			msm := MinSystemMemory(free[i], s.CCMajor)
			if opts.TF1 {
				msm = MinSystemMemoryTF1(free[i])
			}
			limits = []int64{defaultLimit(s.CUDATotalBytes(), free[i], msm, opts.Fraction, env)}
		}
		for _, l := range limits {
			id := len(out)
			out = append(out, LogicalConfig{
				Name:     tfAllocatorName(kind, id),
				Device:   fmt.Sprintf("/job:localhost/replica:0/task:0/device:GPU:%d", id),
				Physical: i,
				Kind:     kind,
				Limit:    l,
				BFC: BFCOptions{AllowGrowth: allowGrowth, GarbageCollection: gc, AllowRetryOnFailure: true,
					FragmentationFraction: opts.FragmentationFraction, BackpedalOnce: true},
				Preallocate: !allowGrowth,
			})
		}
	}
	return out, nil
}

// tfAllocatorName is the allocator name TF logs: GPUProcessState "GPU_<id>_bfc";
// GpuCudaMallocAsyncAllocator "gpu_async_<id>"; GPUcudaMallocAllocator has no name of its own
// in the logs, so we call it "GPU_<id>_cuda_malloc" (approximation).
func tfAllocatorName(kind string, id int) string {
	switch kind {
	case "cuda_malloc_async":
		return fmt.Sprintf("gpu_async_%d", id)
	case "platform":
		return fmt.Sprintf("GPU_%d_cuda_malloc", id)
	}
	return fmt.Sprintf("GPU_%d_bfc", id)
}

// allocatorKind applies TF_GPU_ALLOCATOR (gpu_process_state.cc UseCudaMallocAllocator,
// UseCudaMallocAsyncAllocator: "cuda_malloc", "cuda_malloc_async") on top of the option.
func allocatorKind(opt, env string) (string, error) {
	kind := "bfc"
	switch opt {
	case "", "bfc":
	case "cuda_malloc_async", "platform":
		kind = opt
	default:
		return "", fmt.Errorf("unknown allocator %q (want bfc, cuda_malloc_async or platform)", opt)
	}
	switch env {
	case "cuda_malloc_async":
		kind = "cuda_malloc_async"
	case "cuda_malloc":
		kind = "platform"
	}
	return kind, nil
}

// resolveJAX applies JAX's client settings (jax/_src/xla_bridge.py, xla/pjrt/gpu/gpu_helpers.cc):
// preallocate unless XLA_PYTHON_CLIENT_PREALLOCATE is false or 0; growth keeps the same limit;
// garbage collection is off (BFCAllocator::Options default). The limit is the memory fraction
// (XLA_CLIENT_MEM_FRACTION, the older XLA_PYTHON_CLIENT_MEM_FRACTION, default 0.75) of the CUDA
// total, rounded up to 2 MiB: measured with JAX 0.11.2 on the H200 for fractions 0.002, 0.003,
// 0.005, 0.01 and 0.75 (288, 430, 716, 1432 and 107,368 MiB of 143,156 MiB), and a second process
// started beside one holding 105 GiB got the same limit, so it is not a fraction of free memory
// (older gpu_helpers.cc used free_memory * memory_fraction).
func resolveJAX(opts Options, specs []DeviceSpec, free []int64) ([]LogicalConfig, error) {
	env := opts.Env
	preallocate := true
	switch strings.ToLower(env["XLA_PYTHON_CLIENT_PREALLOCATE"]) {
	case "false", "0":
		preallocate = false
	}
	fraction := 0.75
	if opts.Fraction > 0 {
		fraction = opts.Fraction
	}
	for _, k := range []string{"XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_CLIENT_MEM_FRACTION"} {
		if s, ok := env[k]; ok && s != "" {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || f <= 0 || f > 1 {
				return nil, fmt.Errorf("%s=%q: want a fraction in (0, 1]", k, s)
			}
			fraction = f
		}
	}
	kind := "bfc"
	switch env["XLA_PYTHON_CLIENT_ALLOCATOR"] {
	case "platform":
		kind = "platform"
	case "cuda_async":
		kind = "cuda_malloc_async"
	}
	gc := false
	if opts.GarbageCollection != nil {
		gc = *opts.GarbageCollection
	}
	// A preallocated JAX 0.11.2 pool is spatially partitioned (prealloc-ties-a in
	// testdata/traces matches xla-spatial only).
	variant := Classic
	if preallocate {
		variant = XLASpatial
	}
	var out []LogicalConfig
	for i := range specs {
		out = append(out, LogicalConfig{
			Name:     fmt.Sprintf("GPU_%d_bfc", i),
			Device:   fmt.Sprintf("cuda:%d", i),
			Physical: i,
			Kind:     kind,
			Limit:    pages(int64(float64(specs[i].CUDATotalBytes()) * fraction)),
			BFC: BFCOptions{AllowGrowth: !preallocate, GarbageCollection: gc, AllowRetryOnFailure: true,
				FragmentationFraction: opts.FragmentationFraction, RegionGranularity: granularity, Variant: variant},
			// The recorded traces' init rows show pool_bytes 0 after jax.devices(): XLA's BFC
			// reserves its pool at the first buffer, not at client creation.
			Preallocate: false,
		})
	}
	return out, nil
}
