package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestValidateExamples runs the usage examples from the repository root's testdata.
func TestValidateExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every shipped measurement")
	}
	for _, ex := range validateExamples {
		args := append(strings.Fields(ex)[1:], "--data", "../../testdata")
		var out, errb bytes.Buffer
		if err := run(context.Background(), &out, &errb, args); err != nil {
			t.Fatalf("%s: %v\n%s", ex, err, errb.String())
		}
		if !strings.Contains(out.String(), "dle 1-GPU") {
			t.Errorf("%s: output has no dle 1-GPU figures:\n%s", ex, out.String())
		}
		if strings.Contains(ex, "json") {
			var doc struct {
				Groups []struct{ Set string } `json:"groups"`
				Rows   []struct{ Ref string } `json:"rows"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Rows) < 61 {
				t.Errorf("%s: %d rows, err %v", ex, len(doc.Rows), err)
			}
		}
	}
}

func TestValidateBadUsage(t *testing.T) {
	for _, args := range [][]string{{"validate", "--data", "/nonexistent"}, {"validate", "-o", "xml"}, {"validate", "--data", "../../testdata", "--set", "nope"}} {
		var out, errb bytes.Buffer
		err := run(context.Background(), &out, &errb, args)
		if exitCode(err) != 2 {
			t.Errorf("run(%q) = %v (exit %d), want exit 2", args, err, exitCode(err))
		}
	}
}
