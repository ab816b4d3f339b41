package analysis

import (
	"context"
	"encoding/json"
	"testing"
)

// TestPlanShardsMergeToWhole: a search split into 3 shards, each run on its own, merges into
// the whole search's ranking, byte for byte in JSON: the same plans, ranks, figures, diagnoses
// and intervals. The space has growth next to preallocate, whose plans tie on throughput, so the
// tie-break (the point) is exercised, and a shard's own top must hold a plan the merge drops.
func TestPlanShardsMergeToWhole(t *testing.T) {
	base := planBase(t)
	space := smallSpace(base)
	space.MemoryModes = []string{"preallocate", "growth"}
	o := PlanOptions{Goal: GoalThroughput, Space: space, Margin: 0.1, Top: 4, Jobs: 2}
	whole, err := Plan(context.Background(), base, o)
	if err != nil {
		t.Fatal(err)
	}
	var parts []*PlanReport
	for k := range 3 {
		o.Shard = Shard{Index: k, Count: 3}
		rep, err := Plan(context.Background(), base, o)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Space >= whole.Space {
			t.Errorf("shard %d searched %d points of the %d: not a share", k, rep.Space, whole.Space)
		}
		parts = append(parts, rep)
	}
	// In any order.
	parts[0], parts[2] = parts[2], parts[0]
	merged, err := MergePlanReports(parts, o.Top)
	if err != nil {
		t.Fatal(err)
	}
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := js(merged.Plans), js(whole.Plans); got != want {
		t.Errorf("merged plans differ from the whole search's:\n%s\n%s", got, want)
	}
	if got, want := js(merged.Current), js(whole.Current); got != want {
		t.Errorf("merged current differs:\n%s\n%s", got, want)
	}
	if merged.Space != whole.Space || merged.OutOfRange != whole.OutOfRange || merged.PrunedMemory != whole.PrunedMemory || merged.PrunedBudget != whole.PrunedBudget {
		t.Errorf("merged counts %+v, want the whole search's space, out of range and memory and budget pruning %+v", merged, whole)
	}
	if merged.PrunedRoofline+merged.PrunedCompute+merged.Simulated != whole.PrunedRoofline+whole.PrunedCompute+whole.Simulated {
		t.Errorf("merged: the pruned and simulated do not cover the same points as the whole search")
	}
	tie := false
	for i := 1; i < len(whole.Plans); i++ {
		tie = tie || whole.Plans[i].Score == whole.Plans[i-1].Score
	}
	if !tie {
		t.Error("no two of the top plans tie: the test wants a tie broken by point")
	}
	inTop := map[int]bool{}
	for _, p := range whole.Plans {
		inTop[p.Point] = true
	}
	dropped := false
	for _, r := range parts {
		for _, p := range r.Plans {
			dropped = dropped || !inTop[p.Point]
		}
	}
	if !dropped {
		t.Error("every shard's top plans are in the merged top: the merge was not tested")
	}
	if _, err := MergePlanReports([]*PlanReport{parts[0], parts[0]}, o.Top); err == nil {
		t.Error("a shard given twice merged")
	}
}
