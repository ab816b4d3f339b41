package train

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpusim/gpusim/allocator"
)

// growthDroppedNote says why memory.growth=true has no effect when a logical device
// configuration (memory.limit_mib or memory.logical_devices_mib) is also set and
// set_memory_growth came first (memory.growth_after_limit false): TF's context.py
// _compute_gpu_options computes allow_growth only for GPUs without virtual devices, so the
// BFC allocator of the logical device preallocates its whole memory_limit. Empty when growth
// is not requested.
func growthDroppedNote(m Memory) string {
	if m.Growth == nil || !*m.Growth || m.GrowthAfterLimit {
		return ""
	}
	what := fmt.Sprintf("memory.limit_mib=%d", m.LimitMiB)
	if len(m.LogicalMiB) > 0 {
		what = fmt.Sprintf("memory.logical_devices_mib=%v", m.LogicalMiB)
	}
	return fmt.Sprintf("memory.growth=true is dropped: with %s TF (context.py _compute_gpu_options) computes allow_growth only for GPUs without a logical device configuration, "+
		"so each logical device takes its whole memory_limit at the first allocation; "+
		"calling set_memory_growth after set_logical_device_configuration instead raises ValueError (memory.growth_after_limit: true)", what)
}

// memoryErrorField names the scenario key behind an error of allocator.StartProcess: TF's
// "Cannot set memory growth on device when virtual devices configured" comes from
// memory.growth_after_limit; anything else from the memory section as a whole.
func memoryErrorField(m Memory, err error) string {
	var ce *allocator.ConfigError
	if m.GrowthAfterLimit && errors.As(err, &ce) && strings.Contains(ce.Msg, "virtual devices configured") {
		return "Memory.GrowthAfterLimit"
	}
	return "Memory"
}
