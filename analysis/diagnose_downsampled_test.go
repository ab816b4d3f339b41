package analysis

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/train/traintest"
)

// TestDiagnoseDownsampledSeries: a run whose nvidia-smi series is downsampled (more windows
// than simulator.utilization_samples) is diagnosed from the statistics of the 0.2 s windows,
// as the same run keeping every window is: the same bound and evidence, and utilization
// figures equal to rounding. The input-bound run swings, so merging windows would flatten it.
func TestDiagnoseDownsampledSeries(t *testing.T) {
	for _, cfg := range []train.Config{traintest.InputBound(), traintest.Steps(traintest.Mirrored4xA100(), 3000)} {
		cfg.UtilizationSamples = 1 << 30
		full, err := train.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.UtilizationSamples = 8
		ds, err := train.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds.GPUSeries[0].Samples) > 8 || len(full.GPUSeries[0].Samples) <= 16 {
			t.Fatalf("%s: %d and %d samples: nothing downsampled", cfg.Name, len(full.GPUSeries[0].Samples), len(ds.GPUSeries[0].Samples))
		}
		df, dd := DiagnoseResult(full), DiagnoseResult(ds)
		if df == nil || dd == nil || df.Bound != dd.Bound || !slices.Equal(df.Evidence, dd.Evidence) {
			t.Errorf("%s: diagnosis moved: full %+v, downsampled %+v", cfg.Name, df, dd)
			continue
		}
		if diff := cmp.Diff(df.Utilization, dd.Utilization, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
			t.Errorf("%s: utilization summary (-full +downsampled):\n%s", cfg.Name, diff)
		}
		// Merging the input-bound run's windows flattens its swings: the summary of the
		// merged samples is not the one diagnosed.
		if m := Diagnose(Evidence{Utilization: ds.GPUSeries[0].Samples}).Utilization; cfg.Name == "input-bound" && m.Max-m.Min >= dd.Utilization.Max-dd.Utilization.Min {
			t.Errorf("input-bound: merged samples range %v, full windows %v: the test shows nothing", m.Max-m.Min, dd.Utilization.Max-dd.Utilization.Min)
		}
	}
}
