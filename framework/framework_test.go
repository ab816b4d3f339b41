package framework

import (
	"errors"
	"slices"
	"testing"
)

// The release table: stock TF before 2.4 has no TF32 (cuDNN 7.6), NVIDIA's TF 1.15 on an
// Ampere GPU has it, cuDNN before 8.0 takes it away, and an unknown 1.x release is refused.
func TestResolveRelease(t *testing.T) {
	const a100, v100 = 80, 70
	tests := []struct {
		tf, cudnn string
		cc        int
		tf32      bool
		want      int
	}{
		{"2.3", "", a100, false, 76},
		{"2.4", "", a100, true, 80},
		{"1.15", "", a100, true, 80},
		{"1.15", "", v100, false, 74},
		{"1.15", "8.0", v100, true, 80},
		{"1.2", "", v100, false, 51},
		{"2.4", "7.6", a100, false, 76},
		{"", "", a100, true, 93},
		{"2.30", "", a100, true, 93},
	}
	for _, tc := range tests {
		p, err := Resolve(Spec{TF: tc.tf, CuDNN: tc.cudnn, CC: tc.cc})
		if err != nil {
			t.Fatalf("%s/%s: %v", tc.tf, tc.cudnn, err)
		}
		if p.TF32 != tc.tf32 || p.CuDNN != tc.want {
			t.Errorf("Resolve(tf %q, cudnn %q, cc %d): TF32 %v cuDNN %d, want %v %d", tc.tf, tc.cudnn, tc.cc, p.TF32, p.CuDNN, tc.tf32, tc.want)
		}
	}
	for _, bad := range []struct{ tf, cudnn, field string }{{"1.16", "", "TF"}, {"1.x", "", "TF"}, {"2.4", "x", "CuDNN"}, {"2.4", "8.10", "CuDNN"}} {
		_, err := Resolve(Spec{TF: bad.tf, CuDNN: bad.cudnn})
		var errs Errors
		if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Field != bad.field {
			t.Errorf("Resolve(tf %q, cudnn %q) = %v, want one error on %s", bad.tf, bad.cudnn, err, bad.field)
		}
	}
}

// Every gate opens at its release: a release before it lacks the feature, the release itself
// and the current one have it, and under JAX an XLA gate follows JAX's release, not TF's.
func TestGates(t *testing.T) {
	has := func(s Spec, f Feature) bool {
		t.Helper()
		p, err := Resolve(s)
		if err != nil {
			t.Fatal(err)
		}
		return p.Has(f)
	}
	for _, g := range Gates {
		before := Version{g.TF.Major, g.TF.Minor - 1}
		if g.TF.Minor == 0 {
			before = Version{g.TF.Major - 1, 15}
		}
		if has(Spec{TF: before.String()}, g.Feature) {
			t.Errorf("%v: TF %s has it, want it from %s", g.Feature, before, g.TF)
		}
		if !has(Spec{TF: g.TF.String()}, g.Feature) || !has(Spec{}, g.Feature) {
			t.Errorf("%v: TF %s or the current release lacks it", g.Feature, g.TF)
		}
		if got := has(Spec{Framework: JAX, TF: before.String()}, g.Feature); got != g.XLA {
			t.Errorf("%v under JAX beside TF %s: %v, want %v (an XLA gate follows JAX's release)", g.Feature, before, got, g.XLA)
		}
	}
	for f := Feature(0); f < numFeatures; f++ {
		if !slices.ContainsFunc(Gates, func(g Gate) bool { return g.Feature == f }) {
			t.Errorf("%v has no row in Gates", f)
		}
	}
}

// The profile is the tables' only reader: a row added to them changes what a release has,
// and nothing else has to change. The rows here are what a future TF or JAX release would
// bring (a cuDNN, a fusion), so the test holds as the real tables grow.
func TestNewRowsChangeTheProfile(t *testing.T) {
	spec := Spec{TF: "2.19"}
	p, _ := resolve(spec, TFReleases, Gates)
	releases := append(slices.Clone(TFReleases), Release{TF: v(2, 19), CuDNN: 95, CUDA: "12.8", TF32: true})
	q, _ := resolve(spec, releases, Gates)
	if p.CuDNN != 93 || q.CuDNN != 95 {
		t.Errorf("TF 2.19's cuDNN: %d without its row, %d with it; want 93 (the newest row's) and 95", p.CuDNN, q.CuDNN)
	}

	// A behaviour that a newer release brings (moved to TF 2.20 and JAX 0.12 here): releases
	// before it lose it, under TF and under JAX.
	later := slices.Clone(Gates)
	for i := range later {
		if later[i].Feature == XLAGEMMEpilogues {
			later[i].TF, later[i].JAX = v(2, 20), v(0, 12)
		}
	}
	for _, tc := range []struct {
		spec     Spec
		was, now bool
	}{
		{Spec{TF: "2.19"}, true, false},
		{Spec{TF: "2.20"}, true, true},
		{Spec{}, true, true},
		{Spec{Framework: JAX}, true, false},
	} {
		p, _ := resolve(tc.spec, TFReleases, Gates)
		q, _ := resolve(tc.spec, TFReleases, later)
		if p.Has(XLAGEMMEpilogues) != tc.was || q.Has(XLAGEMMEpilogues) != tc.now {
			t.Errorf("%+v: XLAGEMMEpilogues %v, then %v with the row moved; want %v, %v", tc.spec, p.Has(XLAGEMMEpilogues), q.Has(XLAGEMMEpilogues), tc.was, tc.now)
		}
	}
}

// Keras follows the TF release (Keras 3 from TF 2.16, tf_keras 2.x with
// TF_USE_LEGACY_KERAS) and the JAX backend; an explicit one wins, and the combinations no
// release ships are refused.
func TestKeras(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want int
	}{
		{Spec{}, 2},
		{Spec{TF: "2.15"}, 2},
		{Spec{TF: "2.16"}, 3},
		{Spec{TF: "2.17.1"}, 3},
		{Spec{TF: "2.16", LegacyKeras: true}, 2},
		{Spec{Framework: JAX}, 3},
		{Spec{TF: "2.16", Keras: 2}, 2},
		{Spec{TF: "2.15", Keras: 3}, 3},
	} {
		p, err := Resolve(tc.spec)
		if err != nil || p.Keras != tc.want {
			t.Errorf("Resolve(%+v).Keras = %d, %v; want %d", tc.spec, p.Keras, err, tc.want)
		}
	}
	for _, s := range []Spec{{TF: "2.14", Keras: 3}, {TF: "1.15", Keras: 3}, {Framework: JAX, Keras: 2}, {Keras: 4}} {
		_, err := Resolve(s)
		var errs Errors
		if !errors.As(err, &errs) || len(errs) != 1 || errs[0].Field != "Keras" {
			t.Errorf("Resolve(%+v) = %v, want one error on Keras", s, err)
		}
	}
}

func TestParseName(t *testing.T) {
	for in, want := range map[string]Name{"": TensorFlow, "tensorflow": TensorFlow, "jax": JAX} {
		if got, err := ParseName(in); got != want || err != nil {
			t.Errorf("ParseName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseName("pytorch"); err == nil {
		t.Error("ParseName(pytorch): want an error")
	}
}
