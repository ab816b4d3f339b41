package analysis

import (
	"strings"
	"testing"
)

// Diagnose prints durations the way gpusim run's report does (units.FormatSeconds): a unit that
// fits the value, not a fixed "ms".
func TestDiagnoseDurationUnits(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   Evidence
		want string
	}{
		{"input wait in ms", Evidence{StepTime: 0.58, InputWait: 0.517}, "each step waits 517.0ms for its batch"},
		{"input wait in s", Evidence{StepTime: 2, InputWait: 1.5}, "each step waits 1.500s for its batch"},
		{"all-reduce in µs", Evidence{StepTime: 0.002, CommTime: 0.0008181}, "all-reduce takes 818.1µs per step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(Diagnose(tc.ev).Evidence, "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("evidence:\n%s\nwant it to contain %q", got, tc.want)
			}
		})
	}
}
