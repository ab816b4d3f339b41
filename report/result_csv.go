package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/gpusim/gpusim/analysis"

	"github.com/gpusim/gpusim/train"
)

// resultCSVHeader are the columns of gpusim run -o csv: one row per device, the run's metrics
// repeated on each (tidy data: a sweep concatenates rows). steps and steps_completed say whether
// the speed columns mean anything (0 completed steps: they are 0, see result_utilization.go);
// idle marks a visible GPU that runs no replica (its memory columns are TF's reservation, not
// training), physical_gpu is the card behind the logical device and busy_fraction the device's
// share of gpu_utilization. Names are the JSON keys.
var resultCSVHeader = []string{"scenario", "oom", "steps", "steps_completed", "step_time_s", "throughput_samples_per_s", "gpu_utilization",
	"input_stall_fraction", "allreduce_time_s", "skipped_steps", "replicas", "scaling_efficiency",
	"device", "idle", "physical_gpu", "busy_fraction", "peak_bytes_in_use", "peak_pool_bytes", "bytes_limit", "oom_message"}

// WriteResultCSV writes res as CSV with a header row.
func WriteResultCSV(w io.Writer, res *analysis.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(resultCSVHeader); err != nil {
		return fmt.Errorf("write result csv: %w", err)
	}
	f := func(v float64) string { return strconv.FormatFloat(finite(v), 'g', -1, 64) }
	msg := ""
	if res.OOM != nil {
		msg = res.OOM.Message
	}
	devs := res.Devices
	if len(devs) == 0 {
		devs = []train.Device{{}}
	}
	util, stall := reportedUtilization(res.Result)
	for _, d := range devs {
		row := []string{res.Scenario, strconv.FormatBool(res.OOM != nil), strconv.Itoa(res.StepsRequested), strconv.Itoa(len(res.StepTimes)),
			f(res.StepTime), f(res.Throughput), f(util), f(stall), f(res.AllReduceTime), strconv.Itoa(res.SkippedSteps),
			strconv.Itoa(res.Replicas), f(res.ScalingEfficiency), d.Name, strconv.FormatBool(d.Idle), strconv.Itoa(d.Physical),
			f(reportedBusy(res.Result, d)), strconv.FormatInt(d.PeakBytesInUse, 10),
			strconv.FormatInt(d.PeakPoolBytes, 10), strconv.FormatInt(d.BytesLimit, 10), msg}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write result csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write result csv: %w", err)
	}
	return nil
}
