package main

import (
	"encoding/csv"
	"strings"
	"testing"
)

// TestRunUtilizationWithoutSteps: jupyter-second-process runs out of memory in step 1; its
// kernels until then kept the GPU 99.8% busy, but it never trained, so -o json and -o csv say
// gpu_utilization 0 next to steps_completed 0 (the text says "-"), and --help says so.
func TestRunUtilizationWithoutSteps(t *testing.T) {
	m := runJSON(t, "run", "jupyter-second-process", "-o", "json")
	if m["oom"] != true || m["steps_completed"].(float64) != 0 {
		t.Fatalf("jupyter-second-process: oom %v, steps_completed %v; want an OOM before any step", m["oom"], m["steps_completed"])
	}
	if u := m["gpu_utilization"].(float64); u != 0 {
		t.Errorf("gpu_utilization = %v with steps_completed 0, want 0", u)
	}
	for i, d := range m["devices"].([]any) {
		if b := d.(map[string]any)["busy_fraction"].(float64); b != 0 {
			t.Errorf("devices[%d].busy_fraction = %v with steps_completed 0, want 0", i, b)
		}
	}
	out, _, code := runCLI(t, "run", "jupyter-second-process", "-o", "csv")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	rows := csvByName(t, out)
	if got := rows[0]["steps_completed"] + " " + rows[0]["gpu_utilization"]; got != "0 0" {
		t.Errorf("csv steps_completed, gpu_utilization = %s, want 0 0", got)
	}
	help, _, _ := runCLI(t, "run", "--help")
	if !strings.Contains(help, "completed no step (steps_completed 0") || !strings.Contains(help, "JSON and CSV say 0") {
		t.Errorf("gpusim run --help does not say what gpu_utilization is without a step")
	}
}

// TestRunCSVIdleGPU: hardcoded-gpu pins the model to one of two visible GPUs; -o csv marks the
// other row idle (its memory is TF's reservation, not training) and names the card behind each.
func TestRunCSVIdleGPU(t *testing.T) {
	out, stderr, code := runCLI(t, "run", "hardcoded-gpu", "--set", "steps=3", "-o", "csv")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows := csvByName(t, out)
	idle := 0
	for _, r := range rows {
		switch r["idle"] {
		case "true":
			idle++
			if r["busy_fraction"] != "0" || r["peak_bytes_in_use"] != "0" {
				t.Errorf("idle row %s: busy_fraction %s, peak_bytes_in_use %s; want 0 0", r["device"], r["busy_fraction"], r["peak_bytes_in_use"])
			}
		case "false":
			if r["busy_fraction"] == "0" {
				t.Errorf("training row %s: busy_fraction 0", r["device"])
			}
		default:
			t.Errorf("row %s: idle = %q, want true or false", r["device"], r["idle"])
		}
		if r["physical_gpu"] == "" || r["steps_completed"] != "3" {
			t.Errorf("row %s: physical_gpu %q steps_completed %q", r["device"], r["physical_gpu"], r["steps_completed"])
		}
	}
	if len(rows) != 2 || idle != 1 {
		t.Errorf("hardcoded-gpu: %d rows, %d idle; want 2 rows, 1 idle", len(rows), idle)
	}
}

// csvByName reads CSV with a header into one map per row.
func csvByName(t *testing.T, s string) []map[string]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("csv: %v (%d records)", err, len(recs))
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}
