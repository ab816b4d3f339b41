package analysis

import (
	"context"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/train"
)

// TestDLERunMeanRows: the SQuAD tables of the three BERT README versions that give the mean
// of the whole run (dle_runmean.go) carry its length, int(87,599 / global batch * 2) updates,
// and validate predicts their figure as that run's mean, the simulated XLA compile spread
// over it; the steady-state tables (fb55bd24, the same container as ec9eaf73; 9de48bc9) and
// the pre-training tables of the same versions predict the steady throughput.
func TestDLERunMeanRows(t *testing.T) {
	ms := shippedDLE(t)
	find := func(commit, gpu string, gpus, batch int, model string) Measurement {
		t.Helper()
		for _, m := range ms {
			if m.Commit == commit && m.GPU == gpu && m.GPUs == gpus && m.Batch == batch &&
				m.Precision == "mixed_float16" && strings.HasPrefix(m.Model, model) {
				return m
			}
		}
		t.Fatalf("no %s %s x%d b%d %s row", commit, gpu, gpus, batch, model)
		return Measurement{}
	}
	squad := "bert-large:seq=384"
	for _, c := range []struct {
		commit, gpu string
		gpus, batch int
		model       string
		steps       int
	}{
		{"8749cf39", "v100-sxm3-32gb", 16, 10, squad, 1094},
		{"58a3ed6b", "v100-32gb", 8, 10, squad, 2189},
		{"ec9eaf73", "v100-sxm3-32gb", 1, 10, squad, 17519},
		{"fb55bd24", "v100-sxm3-32gb", 16, 10, squad, 0},
		{"9de48bc9", "v100-sxm3-32gb", 16, 24, squad, 0},
		{"8749cf39", "v100-sxm3-32gb", 16, 48, "bert-large:seq=128", 0},
	} {
		m := find(c.commit, c.gpu, c.gpus, c.batch, c.model)
		if m.RunSteps != c.steps {
			t.Errorf("%s: RunSteps %d, want %d", m.Ref, m.RunSteps, c.steps)
		}
	}

	// A step of 0.3 s and a 12 s compile: the 1,094-step run averages 328.2 s of steps plus
	// the compile, 3.5% under the steady throughput; the steady-state row is the throughput.
	run := func(_ context.Context, c train.Config) (*train.Result, error) {
		return &train.Result{GlobalBatch: c.Batch, StepTime: 0.3, Throughput: float64(c.Batch) / 0.3, XLACompileTime: 12}, nil
	}
	rows := []Measurement{find("8749cf39", "v100-sxm3-32gb", 16, 10, squad), find("fb55bd24", "v100-sxm3-32gb", 16, 10, squad)}
	v, err := Validate(context.Background(), rows, ValidateOptions{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	steady := 160 / 0.3
	if got, want := v.Rows[0].Predicted, steady*1094*0.3/(1094*0.3+12); !near(got, want) {
		t.Errorf("run-mean row predicted %.3f, want %.3f (steady %.3f)", got, want, steady)
	}
	if got := v.Rows[1].Predicted; !near(got, steady) {
		t.Errorf("steady-state row predicted %.3f, want %.3f", got, steady)
	}
}
