package analysis

import (
	"strings"
	"testing"
)

// Diagnose weighs XLA recompilation, and calls a GPU starved only when it waits for input.
func TestDiagnoseCompileAndStarved(t *testing.T) {
	swinging := []float64{0, 0, 1, 0, 0, 0.2, 0, 0} // mean 15%: low and swinging
	for _, tc := range []struct {
		name      string
		ev        Evidence
		want      Bound
		starved   bool    // "the usual sign of a starved GPU" in the evidence
		input     float64 // want InputShare
		mentioned string  // a phrase the evidence must contain
	}{
		{name: "recompiles, no input wait", want: CompileBound,
			ev:    Evidence{Utilization: swinging, StepTime: 1, CompileTime: 0.97, Compiles: 8},
			input: 0, mentioned: "pad or bucket"},
		{name: "starved for input", want: InputBound, starved: true,
			ev:    Evidence{Utilization: swinging, StepTime: 1, InputWait: 0.8},
			input: 0.8, mentioned: "waits 800.0ms for its batch"},
		{name: "recompiles but input waits longer", want: InputBound, starved: true,
			ev:    Evidence{Utilization: swinging, StepTime: 1, InputWait: 0.5, CompileTime: 0.3, Compiles: 3},
			input: 0.5, mentioned: "waits 500.0ms"},
		// One compile (the first step) is left out of the step time: 0.02 s of input wait in
		// a 0.1 s steady-state step is 20%, not 2%.
		{name: "one compile is a one-off", want: InputBound, starved: true,
			ev:    Evidence{Utilization: swinging, StepTime: 1, InputWait: 0.02, CompileTime: 0.9, Compiles: 1},
			input: 0.2, mentioned: "once, at the first step"},
		{name: "idle in all-reduce, not starved", want: CommunicationBound,
			ev:    Evidence{Utilization: swinging, StepTime: 1, CommTime: 0.6},
			input: 0, mentioned: "not starved for data"},
		{name: "busy GPU", want: ComputeBound,
			ev:    Evidence{Utilization: []float64{1, 0.98, 1}, StepTime: 1, InputWait: 0.01},
			input: 0.01, mentioned: "sets the pace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Diagnose(tc.ev)
			all := strings.Join(d.Evidence, "\n")
			if d.Bound != tc.want {
				t.Errorf("Bound = %s, want %s\n%s", d.Bound, tc.want, all)
			}
			if got := strings.Contains(all, "starved GPU"); got != tc.starved {
				t.Errorf("calls the GPU starved: %v, want %v (input share %.2f)\n%s", got, tc.starved, d.InputShare, all)
			}
			if d.InputShare < tc.input-1e-9 || d.InputShare > tc.input+1e-9 {
				t.Errorf("InputShare = %g, want %g", d.InputShare, tc.input)
			}
			if !strings.Contains(all, tc.mentioned) {
				t.Errorf("evidence lacks %q:\n%s", tc.mentioned, all)
			}
			if !strings.HasPrefix(d.Evidence[0], UtilizationLabel+" averages") {
				t.Errorf("first evidence %q, want it to name the %s", d.Evidence[0], UtilizationLabel)
			}
		})
	}
}
