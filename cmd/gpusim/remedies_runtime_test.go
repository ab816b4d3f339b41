package main

import (
	"encoding/json"
	"testing"
)

// Remedies are ranked by the whole run's time: a dataset of 2 epochs over the run, where
// cache() makes the second epoch ten times faster, rates cache by what it buys over the run
// (it was +0%: the median step lies in the first, uncached epoch).
func TestRemediesRankedByRunTime(t *testing.T) {
	out, stderr, code := allocRun(t, "run", "input-bound", "--set", "steps=40", "--set", "input.records=2560", "-o", "json")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	var res struct {
		Diagnosis struct {
			Remedies []struct {
				Change        string   `json:"change"`
				Set           []string `json:"set"`
				RunThroughput float64  `json:"run_throughput_samples_per_s"`
				Gain          float64  `json:"gain"`
			} `json:"remedies"`
		} `json:"diagnosis"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	rs := res.Diagnosis.Remedies
	cache, prefetch := -1, -1
	for i, r := range rs {
		if i > 0 && r.RunThroughput > rs[i-1].RunThroughput {
			t.Errorf("remedy %d (%s, %.0f samples/s over the run) ranks below a slower one (%.0f)", i, r.Change, r.RunThroughput, rs[i-1].RunThroughput)
		}
		switch {
		case len(r.Set) == 1 && r.Set[0] == "input.cache=memory":
			cache = i
		case len(r.Set) == 1 && r.Set[0] == "input.prefetch=autotune":
			prefetch = i
		}
	}
	if cache < 0 || prefetch < 0 {
		t.Fatalf("remedies %+v: want cache() in memory and prefetch among them", rs)
	}
	if g := rs[cache].Gain; g < 0.5 {
		t.Errorf("cache() in memory over 2 epochs gains %+.0f%%, want the second epoch's speed counted (> +50%%)", 100*g)
	}
	if cache > prefetch {
		t.Errorf("cache (%+.0f%%) ranks below prefetch (%+.0f%%)", 100*rs[cache].Gain, 100*rs[prefetch].Gain)
	}
}
