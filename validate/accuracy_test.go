package validate

import (
	"context"
	"math"
	"testing"
)

// TestShippedAccuracyTargets runs every measurement the project ships, as `gpusim validate`
// does, and holds the figures to the targets the issues set, not to today's numbers: issue
// 13's DLE 1-GPU MAE <= 10%, XLA off and XLA on alike, the AMP/TF32 and XLA on/off ratios
// within 10% and leave-one-GPU-out <= 15%; and its real Keras on the H200 within 10%, which
// every device-fed row must meet. The host-fed Keras rows are held as a group only: the lent
// VM's host speed moved a host-fed config by up to 1.44x between rounds minutes apart
// (testdata/h200/keras/rep). The other figures (per model, multi-GPU, the h200-jax and
// h200-pytorch proxies) are reported by gpusim validate and carry no target; every row of
// every set must run (no OOM of a run that really ran, no rejected configuration).
func TestShippedAccuracyTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every shipped measurement (minutes)")
	}
	ms, err := ReadShipped("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	v, err := Score(context.Background(), ms, Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set, by, key string
		target       float64
	}{
		{"dle 1-GPU", "all", "", 0.10},
		{"dle 1-GPU", "xla", "off", 0.10},
		{"dle 1-GPU", "xla", "on", 0.10},
		{"dle 1-GPU", "ratio", "amp/tf32", 0.10},
		{"dle 1-GPU", "ratio", "xla on/off", 0.10},
		{"dle 1-GPU", "leave-one-gpu-out", "mean of folds", 0.15},
		{SourceKeras + " device-fed", "all", "", 0.10},
		{SourceKeras + " host-fed", "all", "", 0.10},
	} {
		g, ok := v.Group(c.set, c.by, c.key)
		if !ok || g.N == 0 {
			t.Errorf("%s %s %s: no such group", c.set, c.by, c.key)
			continue
		}
		t.Logf("%s %s %s: n %d, MAE %.1f%%, bias %+.1f%%, max %.1f%%", c.set, c.by, c.key, g.N, 100*g.MAE, 100*g.Bias, 100*g.Max)
		if g.MAE > c.target {
			t.Errorf("%s %s %s: MAE %.1f%%, target <= %.0f%%", c.set, c.by, c.key, 100*g.MAE, 100*c.target)
		}
	}
	for _, r := range v.Rows {
		if !r.ok() {
			t.Errorf("%s (%s): not run: %s%s", r.Describe(), r.Ref, r.OOM, r.Error)
		}
		if r.Set == SourceKeras+" device-fed" && math.Abs(r.Err) > 0.10 {
			t.Errorf("%s (%s): %+.1f%%, target within 10%%", r.Describe(), r.Ref, 100*r.Err)
		}
	}
}
