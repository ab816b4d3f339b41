package scenarios

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/train"
)

// builtinConfig is built-in name's configuration with the overrides sets.
func builtinConfig(t *testing.T, name string, sets ...string) train.Config {
	t.Helper()
	s, err := Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAll(sets); err != nil {
		t.Fatalf("%s %v: %v", name, sets, err)
	}
	return s.Config
}

// TestBuiltinsDiagnosedBound: input-bound's GPU swings idle between batches enough for the
// diagnosis to say input-bound (its nvidia-smi samples: train's TestGPUSeriesNvidiaSmi), the
// default and the 4-GPU mirrored run stay compute-bound.
func TestBuiltinsDiagnosedBound(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		sets     []string
		bound    analysis.Bound
	}{
		{"input-bound", []string{"steps=50"}, analysis.InputBound},
		{"default", []string{"steps=60"}, analysis.ComputeBound},
		{"mirrored-4xa100", []string{"steps=20"}, analysis.ComputeBound},
	} {
		res, err := train.Run(context.Background(), builtinConfig(t, tc.scenario, tc.sets...))
		if err != nil {
			t.Fatal(err)
		}
		if d := analysis.DiagnoseResult(res); d == nil || d.Bound != tc.bound {
			t.Errorf("%s: diagnosis = %+v, want %s", tc.scenario, d, tc.bound)
		}
	}
}

// builtinScenario is built-in name with the overrides sets.
func builtinScenario(t *testing.T, name string, sets ...string) *Scenario {
	t.Helper()
	s, err := Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAll(sets); err != nil {
		t.Fatalf("%s %v: %v", name, sets, err)
	}
	return s
}

// TestInputBoundRemedies: the built-in input-bound scenario is diagnosed input-bound and the
// parallel map with prefetch is the remedy that helps most; with both set to AUTOTUNE it is
// compute-bound and nothing is re-simulated.
func TestInputBoundRemedies(t *testing.T) {
	sess := analysis.NewSession(nil)
	sc := builtinScenario(t, "input-bound", "steps=60")
	cfg := sc.Config
	res, err := sess.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Diagnosis == nil || res.Diagnosis.Bound != analysis.InputBound {
		t.Fatalf("diagnosis %+v, want input-bound", res.Diagnosis)
	}
	if err := sc.Remedies(context.Background(), sess, res); err != nil {
		t.Fatal(err)
	}
	if len(res.Remedies) < 3 {
		t.Fatalf("remedies %+v, want the candidates re-simulated", res.Remedies)
	}
	if got, want := strings.Join(res.Remedies[0].Set, " "), "input.map.parallel_calls=autotune input.prefetch=autotune"; got != want {
		t.Errorf("best remedy sets %q, want %q", got, want)
	}
	if cfg.Input.ParallelCalls != 0 || cfg.Input.Prefetch != 0 {
		t.Errorf("remedies changed the run's own input config: %+v", cfg.Input)
	}
	tunedSc := builtinScenario(t, "input-bound", "steps=60", "input.prefetch=autotune", "input.map.parallel_calls=autotune")
	before := sess.Simulations()
	res, err = sess.Run(context.Background(), tunedSc.Config)
	if err != nil {
		t.Fatal(err)
	}
	if res.Diagnosis == nil || res.Diagnosis.Bound != analysis.ComputeBound {
		t.Errorf("tuned diagnosis %+v, want compute-bound", res.Diagnosis)
	}
	if err := tunedSc.Remedies(context.Background(), sess, res); err != nil || res.Remedies != nil {
		t.Errorf("tuned remedies %+v (%v), want none", res.Remedies, err)
	}
	// The tuned run is the best remedy's configuration: already simulated.
	if sess.Simulations() != before {
		t.Errorf("tuned run simulated again (%d -> %d simulations)", before, sess.Simulations())
	}
}

// TestRemedySetLinesMakeTheChange: each candidate change, given as its --set lines to the
// scenario, gives the configuration the change makes (Change.Applied), over pipelines that
// propose every kind of change.
func TestRemedySetLinesMakeTheChange(t *testing.T) {
	n := 0
	for _, sets := range [][]string{nil, {"input.records=1000"}, {"input.cache=memory", "input.prefetch=autotune"}} {
		base := builtinScenario(t, "input-bound", sets...)
		pc, err := train.InputPipeline(base.Config, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range analysis.Candidates(pc) {
			want, err := ch.Applied(base.Config)
			if err != nil {
				t.Fatal(err)
			}
			got := builtinScenario(t, "input-bound", append(slices.Clone(sets), SetLines(ch.Changes)...)...)
			if d := cmp.Diff(want, got.Config); d != "" {
				t.Errorf("%v + %s (--set %v): the set lines differ from the change (-change +set):\n%s", sets, ch.Name, SetLines(ch.Changes), d)
			}
			n++
		}
	}
	if n < 8 {
		t.Errorf("%d changes checked, want every kind (at least 8)", n)
	}
}
