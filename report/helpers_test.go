package report

import (
	"context"
	"testing"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
)

// simulate runs cfg with the run's baselines and diagnosis (analysis.Run), as gpusim run
// reports it; any error fails the test. train/traintest has the built-in scenarios' configs.
func simulate(t *testing.T, cfg train.Config) *train.Result {
	t.Helper()
	res, err := analysis.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("analysis.Run(%s): %v", cfg.Name, err)
	}
	return res.Result
}
