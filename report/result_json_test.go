package report

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
)

// TestWriteResultJSONMatchesEncoder checks that WriteResultJSON, which writes the step times as
// it formats them, gives encoding/json's indented bytes exactly: for step times of every
// magnitude (both sides of the exponent-form thresholds, subnormals, negative zero's
// neighbours), none, and a notes string that holds the key's text.
func TestWriteResultJSONMatchesEncoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	steps := []float64{0, 1e-6, 9.999999e-7, 1e-7, 1.5e-9, 1e21, 9.99e20, 5e-324, math.MaxFloat64, 0.1, 123.456, 1, 2.5e-5}
	for range 2000 {
		steps = append(steps, math.Exp(rng.NormFloat64()*20))
	}
	for _, tc := range []struct {
		name  string
		steps []float64
	}{{"many", steps}, {"one", []float64{0.25}}, {"none", nil}} {
		res := train.Result{Scenario: "s", StepsRequested: len(tc.steps), Replicas: 1, GPUs: 1, StepTimes: tc.steps,
			Notes:   []string{"\n  \"step_times_s\": null"},
			Devices: []train.Device{{Name: "/device:GPU:0"}}}
		a := &analysis.Result{Result: &res}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(NewResultJSON(a)); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := WriteResultJSON(&got, a); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			i := 0
			for i < min(got.Len(), want.Len()) && got.Bytes()[i] == want.Bytes()[i] {
				i++
			}
			t.Errorf("%s: WriteResultJSON differs from the encoder at byte %d: got %q, want %q", tc.name, i,
				got.Bytes()[max(0, i-40):min(got.Len(), i+40)], want.Bytes()[max(0, i-40):min(want.Len(), i+40)])
		}
	}
	res := train.Result{StepTimes: []float64{0.1, math.NaN()}}
	if err := WriteResultJSON(&bytes.Buffer{}, &analysis.Result{Result: &res}); err == nil {
		t.Error("a NaN step time: no error")
	}
}
