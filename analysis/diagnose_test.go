package analysis

import "testing"

func TestDiagnose(t *testing.T) {
	swing := []float64{0.05, 0.6, 0.1, 0.5, 0.0, 0.55}
	flat := []float64{0.95, 0.96, 0.95, 0.97}
	for _, tc := range []struct {
		name    string
		ev      Evidence
		want    Bound
		low, sw bool
	}{
		{"starved GPU", Evidence{Utilization: swing, StepTime: 0.1, InputWait: 0.07, BufferEmptyFraction: 0.9}, InputBound, true, true},
		{"busy GPU", Evidence{Utilization: flat, StepTime: 0.1, InputWait: 0.002}, ComputeBound, false, false},
		{"all-reduce dominates", Evidence{Utilization: flat, StepTime: 0.1, InputWait: 0.01, CommTime: 0.04}, CommunicationBound, false, false},
		{"input over communication", Evidence{Utilization: swing, StepTime: 0.1, InputWait: 0.05, CommTime: 0.03}, InputBound, true, true},
		{"small waits", Evidence{Utilization: flat, StepTime: 0.1, InputWait: 0.05 * 0.1, CommTime: 0.05 * 0.1}, ComputeBound, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Diagnose(tc.ev)
			if d.Bound != tc.want || d.LowUtilization != tc.low || d.Swinging != tc.sw {
				t.Errorf("Diagnose = %s (low %v, swinging %v), want %s (%v, %v); evidence %q",
					d.Bound, d.LowUtilization, d.Swinging, tc.want, tc.low, tc.sw, d.Evidence)
			}
			if len(d.Evidence) < 2 {
				t.Errorf("evidence %q: want the utilization line and the verdict's reason", d.Evidence)
			}
		})
	}
}
