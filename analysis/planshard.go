package analysis

import (
	"fmt"
	"slices"
)

// MergePlanReports joins the reports of the shards of one plan search (PlanOptions.Shard 0/N
// to N-1/N, in any order) into the ranking the whole search gives: the top plans of the union,
// by score and point, re-ranked. That ranking is the whole search's because each shard ranks
// its own points the same way: a plan among the whole top has fewer than top plans above it in
// its shard too, so its shard reports it.
//
// The counts of points outside the batch range and pruned by memory or budget add up to the
// whole search's (each point's fate there depends on that point alone); the counts pruned by
// the roofline and compute bounds and simulated are each shard's work, summed: a shard prunes
// against its own top plans, so the shards together simulate more than one search would.
func MergePlanReports(reps []*PlanReport, top int) (*PlanReport, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("plan: no shard reports to merge")
	}
	if top <= 0 {
		top = 5
	}
	first := reps[0]
	out := &PlanReport{Goal: first.Goal, Training: first.Training, Current: first.Current}
	seen := map[int]bool{}
	for i, r := range reps {
		if r.Goal != first.Goal || r.Training != first.Training {
			return nil, fmt.Errorf("plan: shard report %d is of goal %s for %+v, not %s for %+v", i, r.Goal, r.Training, first.Goal, first.Training)
		}
		out.Space += r.Space
		out.OutOfRange += r.OutOfRange
		out.PrunedMemory += r.PrunedMemory
		out.PrunedBudget += r.PrunedBudget
		out.PrunedRoofline += r.PrunedRoofline
		out.PrunedCompute += r.PrunedCompute
		out.Simulated += r.Simulated
		out.Infeasible += r.Infeasible
		for _, p := range r.Plans {
			if seen[p.Point] {
				return nil, fmt.Errorf("plan: point %d is in two shard reports", p.Point)
			}
			seen[p.Point] = true
			out.Plans = append(out.Plans, p)
		}
	}
	sortPlans(out.Plans)
	out.Plans = slices.Clip(out.Plans[:min(top, len(out.Plans))])
	for i := range out.Plans {
		out.Plans[i].Rank = i + 1
	}
	return out, nil
}
