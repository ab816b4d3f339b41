package report

import "github.com/gpusim/gpusim/train"

// What gpu_utilization means in every output of gpusim run (text, JSON, CSV):
//
// the fraction of the simulated run's time the GPUs executed kernels (train.Result's
// GPUUtilization, averaged over the replicas; busy_fraction per device), measured over a run
// that trained. A run that completed no step (steps_completed 0: it ran out of memory in its
// first step, or before it) did no training: its kernels until the OOM would read as a busy GPU
// (a second process that OOMs in step 1 was 99.8% busy for 6 ms), so the text report shows "-"
// and JSON and CSV carry 0 for gpu_utilization, input_stall_fraction and every device's
// busy_fraction. The kernels it did run stay visible in the Chrome trace (gpusim run --trace)
// and, for a run longer than one 200 ms window, in gpu_utilization_samples.

// trained reports whether res completed at least one training step.
func trained(res *train.Result) bool { return len(res.StepTimes) > 0 }

// reportedUtilization is res's gpu_utilization and input_stall_fraction as JSON and CSV carry
// them: 0 for a run that completed no step (see above).
func reportedUtilization(res *train.Result) (util, stall float64) {
	if !trained(res) {
		return 0, 0
	}
	return finite(res.GPUUtilization), finite(res.InputStallFraction)
}

// reportedBusy is device d's busy_fraction as JSON and CSV carry it: 0 for a run that completed
// no step and for an idle device.
func reportedBusy(res *train.Result, d train.Device) float64 {
	if !trained(res) || d.Idle {
		return 0
	}
	return finite(d.BusyFraction)
}
