package analysis

import (
	"testing"

	"github.com/gpusim/gpusim/train"
)

// A trial's peak is the worse of step 1 (autotune scratch, slot creation) and the steps
// after, over every GPU that trains; both halves are carried to max-batch's trials.
func TestMeasureKeepsFirstAndSteadyPeaks(t *testing.T) {
	res := &train.Result{Devices: []train.Device{
		{PeakBytesInUse: 900, FirstStepPeakBytes: 900, SteadyPeakBytes: 700},
		{PeakBytesInUse: 800, FirstStepPeakBytes: 600, SteadyPeakBytes: 800},
		{Idle: true, PeakBytesInUse: 5000, FirstStepPeakBytes: 5000, SteadyPeakBytes: 5000},
	}}
	m := measureResult(&Result{Result: res})
	if m.peak != 900 || m.firstPeak != 900 || m.steadyPeak != 800 {
		t.Errorf("peak %d, first %d, steady %d: want 900, 900, 800 (idle GPUs left out)", m.peak, m.firstPeak, m.steadyPeak)
	}
}
