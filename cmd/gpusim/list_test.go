package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListModelsJSON(t *testing.T) {
	out, errs, code := runCLI(t, "list", "models", "-o", "json")
	if code != 0 {
		t.Fatalf("list models -o json: exit %d: %s", code, errs)
	}
	var ms []map[string]any
	if err := json.Unmarshal([]byte(out), &ms); err != nil {
		t.Fatal(err)
	}
	var resnet map[string]any
	for _, m := range ms {
		for _, k := range []string{"name", "params", "trainable_params", "flops_per_sample", "activation_bytes_per_sample"} {
			if _, ok := m[k]; !ok {
				t.Errorf("model %v lacks key %q", m["name"], k)
			}
		}
		if m["name"] == "resnet50" {
			resnet = m
		}
	}
	// keras.applications.ResNet50(): Total params 25,636,712.
	if resnet == nil || resnet["params"] != float64(25636712) {
		t.Errorf("resnet50 = %v, want params 25636712", resnet)
	}
}

func TestListDevicesAndScenarios(t *testing.T) {
	for _, tc := range []struct {
		what string
		want []string
	}{
		{"devices", []string{"a100-40gb", "h200", "t4", "v100-16gb", "rtx4090"}},
		{"scenarios", []string{"default", "resnet50-a100", "growth-fragmentation", "jupyter-second-process"}},
	} {
		out, errs, code := runCLI(t, "list", tc.what)
		if code != 0 {
			t.Fatalf("list %s: exit %d: %s", tc.what, code, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("list %s does not show %s:\n%s", tc.what, w, out)
			}
		}
		out, _, code = runCLI(t, "list", tc.what, "-o", "json")
		var v []map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil || len(v) < len(tc.want) {
			t.Errorf("list %s -o json: exit %d, %d entries", tc.what, code, len(v))
		}
	}
}

func TestListBadUsage(t *testing.T) {
	for _, args := range [][]string{
		{"list"},
		{"list", "gpus"},
		{"list", "models", "-o", "xml"},
		{"list", "devices", "--file", "x.json"},
		{"list", "models", "--file", "does-not-exist.json"},
	} {
		if _, _, code := runCLI(t, args...); code != 2 {
			t.Errorf("gpusim %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
}

// TestListUsageExamples runs every example of gpusim list --help (in a folder holding the
// model.json the --file example names: a Keras Sequential MLP saved by tf.keras 2).
func TestListUsageExamples(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "models", "testdata", "mlp.sequential.tfkeras2.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "model.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	help, _, code := runCLI(t, "list", "--help")
	if code != 0 {
		t.Fatalf("list --help: exit %d", code)
	}
	for _, ex := range listExamples {
		if !strings.Contains(help, ex) {
			t.Errorf("list --help does not show example %q", ex)
		}
		if out, errs, code := runCLI(t, strings.Fields(ex)[1:]...); code != 0 || out == "" {
			t.Errorf("example %q: exit %d: %s", ex, code, errs)
		}
	}
}
