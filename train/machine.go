package train

import (
	"github.com/gpusim/gpusim/allocator"
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
