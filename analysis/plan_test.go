package analysis

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/train/traintest"
)

// planBase is the built-in scenario resnet50-a100 at 6 steps.
func planBase(t *testing.T) train.Config {
	t.Helper()
	return traintest.Steps(traintest.ResNet50A100(), 6)
}

// smallSpace is a space of resnet50-a100 every test can simulate in full.
func smallSpace(base train.Config) PlanSpace {
	s := DefaultPlanSpace(base, nil, 2)
	s.ReplicaBatches, s.Accumulation, s.MemoryModes = []int{64, 1024}, []int{1, 2}, []string{"preallocate"}
	return s
}

// TestPlanBoundsHold: on every point of a small space, simulated, the bounds the search prunes
// by are bounds: the memory bound is at most the simulated peak in use, the roofline and the
// compute bound at most the simulated median step; so pruning never drops a plan that would
// have ranked.
func TestPlanBoundsHold(t *testing.T) {
	base := planBase(t)
	bd := newBounder()
	n := 0
	_, _, err := smallSpace(base).enumerate(base, 1, 0, 0, Shard{}, func(_ int, k PlanKnobs) {
		cfg := k.apply(base)
		b, err := bd.bounds(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ct, err := bd.compute(cfg)
		if err != nil {
			t.Fatal(err)
		}
		res, err := train.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if res.OOM != nil {
			return
		}
		var peak int64
		for _, d := range res.Devices {
			peak = max(peak, d.PeakBytesInUse)
		}
		if b.MemoryBytes > peak {
			t.Errorf("%s: memory bound %d above the peak in use %d", describeKnobs(k), b.MemoryBytes, peak)
		}
		if b.StepTime > res.StepTime || ct > res.StepTime {
			t.Errorf("%s: roofline %v / compute %v above the step %v", describeKnobs(k), b.StepTime, ct, res.StepTime)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 40 {
		t.Errorf("checked %d points, want the whole space (at least 40)", n)
	}
}

// TestPlanJobsIndependent: the report is the same whatever the pool's size, and it prunes.
func TestPlanJobsIndependent(t *testing.T) {
	base := planBase(t)
	var got []string
	for _, jobs := range []int{1, 3} {
		rep, err := Plan(context.Background(), base, PlanOptions{Goal: GoalThroughput, Space: smallSpace(base), Margin: 0.1, Top: 3, Jobs: jobs})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Simulated+rep.PrunedMemory+rep.PrunedRoofline+rep.PrunedCompute+rep.OutOfRange != rep.Space {
			t.Errorf("jobs %d: counts do not add up to the space: %+v", jobs, rep)
		}
		if rep.Simulated == rep.Space {
			t.Errorf("jobs %d: every plan simulated, none pruned", jobs)
		}
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	if got[0] != got[1] {
		t.Errorf("Plan with 1 and 3 jobs differ:\n%s\n%s", got[0], got[1])
	}
}

// TestPlanTopEqualsFullRanking: the search keeps only the top plans found so far (each wave's
// others are dropped once ranked), prunes, and simulates best bound first; its ranking is
// still the top of every point of the space simulated and sorted in full, for each goal.
func TestPlanTopEqualsFullRanking(t *testing.T) {
	base := planBase(t)
	full := base
	full.TraceSteps = 0 // as Plan runs its points
	for _, goal := range []Goal{GoalThroughput, GoalMaxBatch, GoalTimeToTrain} {
		o := PlanOptions{Goal: goal, Space: smallSpace(base), Margin: 0.1, Top: 3, Jobs: 2, Training: Training{DatasetSize: 100_000, Epochs: 1}}
		rep, err := Plan(context.Background(), base, o)
		if err != nil {
			t.Fatal(err)
		}
		var all []PlanResult
		_, _, err = o.Space.enumerate(full, 1, 0, 0, Shard{}, func(point int, k PlanKnobs) {
			r, err := o.simulate(context.Background(), train.Run, full, candidate{point: point, knobs: k, cfg: k.apply(full)})
			if err != nil {
				t.Fatal(err)
			}
			if r.Feasible {
				all = append(all, r)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) <= planWave {
			t.Fatalf("%s: %d feasible plans: the search keeps its top after one wave only", goal, len(all))
		}
		sortPlans(all)
		if len(rep.Plans) != o.Top {
			t.Fatalf("%s: %d plans reported, want %d", goal, len(rep.Plans), o.Top)
		}
		for i, p := range rep.Plans {
			if w := all[i]; p.Point != w.Point || p.Score != w.Score || p.Throughput != w.Throughput || p.PeakBytes != w.PeakBytes {
				t.Errorf("%s: plan %d is point %d (%s, score %v), want point %d (%s, score %v)", goal, i+1, p.Point, describeKnobs(p.Knobs), p.Score, w.Point, describeKnobs(w.Knobs), w.Score)
			}
		}
	}
}
