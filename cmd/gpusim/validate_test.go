package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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

// validate --data over a copy of testdata whose JAX steps file is cut short is bad input
// naming the file and line (a file cut after its header dropped the whole h200-jax set, exit 0).
func TestValidateTruncatedMeasurementFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  func(b []byte) []byte
		want string
	}{
		{"after the header", func(b []byte) []byte { return b[:bytes.IndexByte(b, '\n')+1] }, "steps.csv:2: no rows after the header"},
		{"mid-value", func(b []byte) []byte { return b[:len(b)-2] }, "steps.csv:8: no newline at the end"},
		{"empty", func([]byte) []byte { return nil }, "steps.csv:1: no header: the file is empty"},
	} {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS("../../testdata")); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "h200", "jax", "steps.csv")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, tc.cut(b), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		err = run(context.Background(), &out, &errb, []string{"validate", "--data", dir})
		if exitCode(err) != 2 || !strings.Contains(err.Error(), path[len(dir):]) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: validate = %v (exit %d), want exit 2 with %q", tc.name, err, exitCode(err), tc.want)
		}
	}
}
