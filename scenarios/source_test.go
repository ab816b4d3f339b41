package scenarios

import (
	"reflect"
	"strings"
	"testing"
)

// TestWithSets checks that a built-in with overrides written into its YAML parses to the
// configuration that the built-in plus the same --set overrides gives, for every built-in.
func TestWithSets(t *testing.T) {
	sets := [][]string{
		{"batch=96"},
		{"memory.growth=true", "input.prefetch=autotune", "input.map.parallel_calls=4"},
		{"memory.mode=limit", "memory.limit_mib=4096", "precision=mixed_float16", "xla=true"},
		{"hardware.gpu=t4", "hardware.count=2", "cuda_visible_devices=1", "accumulation_steps=2", "input.cache=memory"},
		{"processes=[]", "model=mobilenetv2"},
	}
	checked := 0
	for _, name := range Names() {
		src, err := BuiltinYAML(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sets {
			want, err := Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := want.SetAll(s); err != nil {
				continue // an override this scenario rejects (checked below with the YAML)
			}
			out, err := WithSets("builtin:"+name, src, s)
			if err != nil {
				t.Fatalf("WithSets(%s, %q): %v", name, s, err)
			}
			got, err := Parse("builtin:"+name, out)
			if err != nil {
				t.Fatalf("Parse(WithSets(%s, %q)): %v\n%s", name, s, err, out)
			}
			checked++
			if !reflect.DeepEqual(got.Config, want.Config) {
				t.Errorf("Parse(WithSets(%s, %q)).Config = %+v, want %+v", name, s, got.Config, want.Config)
			}
		}
	}
	if checked < 3*len(Names()) {
		t.Errorf("checked %d (scenario, overrides) pairs, want at least %d: most overrides were rejected", checked, 3*len(Names()))
	}
}

func TestWithSetsKeepsComments(t *testing.T) {
	src, err := BuiltinYAML("input-bound")
	if err != nil {
		t.Fatal(err)
	}
	out, err := WithSets("builtin:input-bound", src, []string{"input.prefetch=autotune"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "# The guide's most common performance complaint") || !strings.Contains(string(out), "prefetch: autotune") {
		t.Errorf("WithSets(input-bound, input.prefetch=autotune) =\n%s\nwant the header comment and prefetch: autotune", out)
	}
}

func TestWithSetsErrors(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"batchsize=3", "--set batchsize=3: batchsize: unknown key (did you mean batch?)"},
		{"batch", "--set batch: want key=value"},
		{"hardware.gpu.x=1", "--set hardware.gpu.x=1: hardware.gpu.x: unknown key"},
	} {
		_, err := WithSets("x.yaml", []byte("batch: 1\n"), []string{tc.set})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("WithSets(%q) error = %v, want it to start %q", tc.set, err, tc.want)
		}
	}
	if _, err := BuiltinYAML("nope"); err == nil {
		t.Error("BuiltinYAML(nope) succeeded")
	}
}
