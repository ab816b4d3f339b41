package train

import (
	"fmt"
	"strings"
)

// mixedFloat16Warning is the warning Keras logs when the mixed_float16 policy is set on a
// machine whose GPUs do not all have compute capability 7.0 (no Tensor Cores for float16):
// keras mixed_precision/device_compatibility_check.py _log_device_compatibility_check, with
// its text and its three forms (one GPU, several, some supported), without the last line
// ("If you will use compatible GPU(s) not attached to this host, ... logged once"). Keras checks only
// mixed_float16 (the function returns early for any other policy, mixed_bfloat16 included),
// so gpusim warns for nothing else. gpus are the physical GPUs TF lists
// (list_physical_devices('GPU')): name and compute capability. Empty when every GPU is 7.0
// or newer, or the policy is not mixed_float16.
func mixedFloat16Warning(policy string, gpus []gpuDetails) string {
	if policy != "mixed_float16" || len(gpus) == 0 {
		return ""
	}
	var ok, slow []string
	for _, g := range gpus {
		s := fmt.Sprintf("%s, compute capability %d.%d", g.name, g.ccMajor, g.ccMinor)
		if g.ccMajor >= 7 {
			ok = append(ok, s)
		} else {
			slow = append(slow, s)
		}
	}
	if len(slow) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Mixed precision compatibility check (mixed_float16): WARNING\n")
	switch {
	case len(ok) > 0:
		b.WriteString("Some of your GPUs may run slowly with dtype policy mixed_float16 because they do not all have compute capability of at least 7.0. Your GPUs:\n")
	case len(slow) == 1:
		b.WriteString("Your GPU may run slowly with dtype policy mixed_float16 because it does not have compute capability of at least 7.0. Your GPU:\n")
	default:
		b.WriteString("Your GPUs may run slowly with dtype policy mixed_float16 because they do not have compute capability of at least 7.0. Your GPUs:\n")
	}
	for _, s := range dedupRuns(append(ok, slow...)) {
		b.WriteString("  " + s + "\n")
	}
	b.WriteString("See https://developer.nvidia.com/cuda-gpus for a list of GPUs and their compute capabilities.")
	return b.String()
}

// gpuDetails is what tf.config.experimental.get_device_details returns for a GPU.
type gpuDetails struct {
	name             string
	ccMajor, ccMinor int
}

// dedupRuns merges consecutive identical strings into "s (xN)", as Keras' _dedup_strings.
func dedupRuns(ss []string) []string {
	var out []string
	for i := 0; i < len(ss); {
		j := i
		for j < len(ss) && ss[j] == ss[i] {
			j++
		}
		if j-i == 1 {
			out = append(out, ss[i])
		} else {
			out = append(out, fmt.Sprintf("%s (x%d)", ss[i], j-i))
		}
		i = j
	}
	return out
}

// checkMixedPrecision adds Keras' mixed_float16 compatibility warning for the physical GPUs
// TF lists (the host's GPUs are all r.gpu). TF's device_name has no form-factor suffix:
// "NVIDIA GeForce GTX 1080 Ti", not the catalog's "... (Pascal GP102)".
func (r *runner) checkMixedPrecision() {
	name, _, _ := strings.Cut(r.mach.gpu.Description, " (")
	var gpus []gpuDetails
	for range r.mach.tfd.ctx.PhysicalDevices() {
		gpus = append(gpus, gpuDetails{name: name, ccMajor: r.mach.gpu.CCMajor, ccMinor: r.mach.gpu.CCMinor})
	}
	if w := mixedFloat16Warning(r.cfg.Precision, gpus); w != "" {
		r.warnings = append(r.warnings, w)
	}
}
