package scenarios

import (
	"testing"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
)

// TestPlanSpacesTFAccepts: every point of gpusim plan's default and small spaces around every
// built-in is a configuration train accepts, so that no search stops on a plan TF would refuse:
// Horovod's compression leaves with Horovod (bert-squad-tf1-dgx1), and a job that names its
// devices keeps its count and strategy (hardcoded-gpu's tf.device, cuda-visible-devices).
func TestPlanSpacesTFAccepts(t *testing.T) {
	for _, name := range Names() {
		sc, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		base := sc.Config
		n := max(base.GPUCount, 1) * base.NodeCount()
		for what, s := range map[string]analysis.PlanSpace{"default": analysis.DefaultPlanSpace(base, nil, n),
			"small": analysis.SmallPlanSpace(base, analysis.GoalMaxBatch)} {
			points, bad := 0, 0
			err := s.Points(base, base.NodeCount(), func(k analysis.PlanKnobs, cfg train.Config) {
				points++
				if err := cfg.Validate(); err != nil && bad < 3 {
					bad++
					t.Errorf("%s, %s space: %+v: %v", name, what, k, err)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if points == 0 {
				t.Errorf("%s, %s space: no point", name, what)
			}
		}
	}
}

// TestSmallPlanSpace: the small space (the workshop page's plan panel) keeps every built-in's
// GPU, count and strategy and stays small: at most 320 points, with an input pipeline.
func TestSmallPlanSpace(t *testing.T) {
	for _, name := range Names() {
		sc, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		base := sc.Config
		n := max(base.GPUCount, 1) * base.NodeCount()
		points := 0
		err = analysis.SmallPlanSpace(base, analysis.GoalThroughput).Points(base, base.NodeCount(), func(k analysis.PlanKnobs, cfg train.Config) {
			points++
			if k.GPU != base.GPU || k.GPUs != n || (n > 1 && k.Strategy != base.Strategy) {
				t.Fatalf("%s: small space point %+v changes the GPU, count or strategy", name, k)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if points > 320 {
			t.Errorf("%s: small space of %d points", name, points)
		}
	}
}
