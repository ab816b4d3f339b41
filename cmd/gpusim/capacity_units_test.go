package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/report"
)

// TestCapacityTextTimeUnits: capacity's text prints durations with gpusim run's formatter
// (report.FormatValue: 919.4ms, 818.1µs), never "919.4 ms": the step time and all-reduce of the
// text are the JSON's seconds so formatted.
func TestCapacityTextTimeUnits(t *testing.T) {
	sec := func(v float64) string { return report.FormatValue(v, report.UnitSeconds) }
	for _, tc := range []struct {
		args []string
		want func(j map[string]any) []string
	}{
		{[]string{"capacity", "max-batch", "--set", "hardware.gpu=a10", "--set", "memory.growth=true"},
			func(j map[string]any) []string {
				fit := j["fit"].(map[string]any)
				want := []string{"  step time      " + sec(fit["step_time_s"].(float64)) + " (median of"}
				for _, tr := range j["trials"].([]any) {
					if st := tr.(map[string]any)["step_time_s"].(float64); st > 0 {
						want = append(want, "  "+sec(st)+"  ")
					}
				}
				return want
			}},
		{[]string{"capacity", "gpus", "resnet50-a100", "--throughput", "10000"},
			func(j map[string]any) []string {
				fit := j["fit"].(map[string]any)
				want := []string{
					", step " + sec(fit["step_time_s"].(float64)) + ")",
					"(all-reduce " + sec(fit["allreduce_time_s"].(float64)) + " per step)",
				}
				for _, tr := range j["trials"].([]any) {
					want = append(want, "  "+sec(tr.(map[string]any)["allreduce_time_s"].(float64))+"  ")
				}
				return want
			}},
	} {
		text, errs, code := runCLI(t, tc.args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(tc.args, " "), code, errs)
		}
		js, errs, code := runCLI(t, append(tc.args, "-o", "json")...)
		if code != 0 {
			t.Fatalf("%s -o json: exit %d: %s", strings.Join(tc.args, " "), code, errs)
		}
		var j map[string]any
		if err := json.Unmarshal([]byte(js), &j); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text, " ms") {
			t.Errorf("%s: text writes \" ms\":\n%s", strings.Join(tc.args, " "), text)
		}
		for _, w := range tc.want(j) {
			if !strings.Contains(text, w) {
				t.Errorf("%s: text lacks %q:\n%s", strings.Join(tc.args, " "), w, text)
			}
		}
	}
}
