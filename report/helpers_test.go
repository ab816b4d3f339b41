package report

import (
	"context"
	"testing"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/scenarios"
	"github.com/gpusim/gpusim/train"
)

// simulate resolves a built-in scenario, applies sets (KEY=VALUE, as `gpusim run --set`) in
// order and runs it; any error fails the test.
func simulate(t *testing.T, scenario string, sets ...string) *train.Result {
	return judged(t, scenario, sets...).Result
}

// judged is simulate with the run's baselines and diagnosis (analysis.Run), as gpusim run
// reports it.
func judged(t *testing.T, scenario string, sets ...string) *analysis.Result {
	t.Helper()
	s, err := scenarios.Resolve(scenario)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range sets {
		if err := s.Set(kv); err != nil {
			t.Fatal(err)
		}
	}
	res, err := analysis.Run(context.Background(), s.Config)
	if err != nil {
		t.Fatalf("analysis.Run(%s, %v): %v", scenario, sets, err)
	}
	return res
}
