package analysis

import (
	"strings"
	"testing"
)

// The unreachable verdict prints durations the way gpusim run does (units.FormatSeconds).
func TestUnreachableDurationUnits(t *testing.T) {
	rep := &GPUsReport{MaxGPUs: 16, Scaling: "weak", Trials: []GPUTrial{
		{GPUs: 1, Throughput: 226, StepTime: 0.0354, Efficiency: 1, Bound: string(ComputeBound)},
		{GPUs: 16, Throughput: 1835, StepTime: 0.0698, AllReduceTime: 0.0344, Efficiency: 0.507, Bound: string(CommunicationBound)},
	}}
	got := unreachable(rep, 5000)
	want := "the all-reduce takes 34.40ms of the 69.80ms step (scaling efficiency 51%)"
	if !strings.Contains(got, want) {
		t.Errorf("unreachable = %q, want it to contain %q", got, want)
	}
}
