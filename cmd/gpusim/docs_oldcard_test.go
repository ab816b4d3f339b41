package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsOldCardFigures: the mixed-precision-old-card step times that docs/speed.md quotes in
// its cost-model section (whose other figures are the model's constants, so TestDocs does not
// check that section) are the ones the scenario prints; TestDocs checks docs/pitfalls.md's.
func TestDocsOldCardFigures(t *testing.T) {
	step := func(args ...string) (fp32, mixed float64) {
		t.Helper()
		for i, prec := range []string{"float32", "mixed_float16"} {
			res := runJSON(t, append([]string{"run", "mixed-precision-old-card", "--set", "precision=" + prec}, args...)...)
			v, ok := res["step_time_s"].(float64)
			if !ok {
				t.Fatalf("run %v: no step_time_s", args)
			}
			if i == 0 {
				fp32 = v
			} else {
				mixed = v
			}
		}
		return fp32, mixed
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(string(b)), " ")
	}
	speed := read("speed.md")
	ms := func(s float64, sep string) string { return fmt.Sprintf("%.1f%sms", s*1e3, sep) }
	f, m := step()
	if want := "takes " + ms(f, " ") + " in float32 and " + ms(m, " ") + " in mixed_float16"; !strings.Contains(speed, want) {
		t.Errorf("docs/speed.md does not say %q", want)
	}
}
