package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A Keras JSON that list models --file lists also runs: model=@FILE, from --set or a file.
func TestRunKerasJSONModel(t *testing.T) {
	path := filepath.Join("..", "..", "models", "testdata", "cnn.sequential.keras3.json")
	out, stderr, code := allocRun(t, "run", "--set", "model=@"+path, "--set", "steps=3", "-o", "json")
	if code != 0 {
		t.Fatalf("run --set model=@%s: exit %d: %s", path, code, stderr)
	}
	var res struct {
		OOM       bool    `json:"oom"`
		StepTime  float64 `json:"step_time_s"`
		Completed int     `json:"steps_completed"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.OOM || res.StepTime <= 0 {
		t.Errorf("run of the Keras JSON: %+v, want a fitting run with a step time", res)
	}
	_, stderr, code = allocRun(t, "run", "--set", "model=@missing.json")
	if code != 2 || !strings.Contains(stderr, "--set model=@missing.json: model: ") {
		t.Errorf("run --set model=@missing.json: exit %d, %q; want exit 2 naming the --set and model", code, stderr)
	}
}
