package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestCompareIntervals: a metric's 80% interval is a line under it in the text table and the
// sibling "<metric>_interval" of the config's JSON; a run without one has neither.
func TestCompareIntervals(t *testing.T) {
	runs := []Run{
		{Label: "a", Metrics: []RunMetric{{Key: MetricStepTime, Name: "step time", Unit: UnitSeconds, Value: 0.1, Interval: &[2]float64{0.09, 0.12}}}},
		{Label: "b", Metrics: []RunMetric{{Key: MetricStepTime, Name: "step time", Unit: UnitSeconds, Value: 0.2}}},
	}
	tab := Compare(runs)
	var b bytes.Buffer
	if err := tab.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	i := -1
	for k, l := range lines {
		if strings.HasPrefix(l, "step time") {
			i = k
		}
	}
	if i < 0 || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "  80% interval") || !strings.Contains(lines[i+1], "90.00-120.0ms") {
		t.Errorf("no interval line under the step time:\n%s", b.String())
	}
	b.Reset()
	if err := tab.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Configs []struct {
			Intervals map[string][2]float64 `json:"intervals"`
		} `json:"configs"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Configs[0].Intervals["step_time_s_interval"]; got != [2]float64{0.09, 0.12} {
		t.Errorf("config a step_time_s_interval = %v, want [0.09 0.12]", got)
	}
	if len(doc.Configs[1].Intervals) != 0 {
		t.Errorf("config b intervals = %v, want none", doc.Configs[1].Intervals)
	}
}
