package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update rewrites the golden and data-driven files under testdata/ (go test ./cmd/gpusim -run
// 'Golden|ScenarioData' -update).
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// runCLI runs gpusim with args and returns stdout, stderr and the exit code main would use.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), &out, &errb, args)
	if err != nil {
		errb.WriteString("gpusim: " + err.Error() + "\n")
	}
	return out.String(), errb.String(), exitCode(err)
}

func runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, errs, code := runCLI(t, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("gpusim %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("gpusim %s -o json: %v\n%s", strings.Join(args, " "), err, out)
	}
	return m
}

func TestRunJSONContractKeys(t *testing.T) {
	m := runJSON(t, "run", "--set", "steps=3")
	for _, k := range []string{"scenario", "oom", "oom_message", "step_time_s", "throughput_samples_per_s",
		"gpu_utilization", "input_stall_fraction", "allreduce_time_s", "skipped_steps", "devices",
		"replicas", "scaling_efficiency"} {
		if _, ok := m[k]; !ok {
			t.Errorf("-o json lacks key %q", k)
		}
	}
	devs, ok := m["devices"].([]any)
	if !ok || len(devs) != 1 {
		t.Fatalf("devices = %v, want one entry", m["devices"])
	}
	d := devs[0].(map[string]any)
	for _, k := range []string{"name", "peak_bytes_in_use", "peak_pool_bytes", "bytes_limit", "pool_growth"} {
		if _, ok := d[k]; !ok {
			t.Errorf("devices[0] lacks key %q", k)
		}
	}
	if m["scenario"] != "default" || m["oom"] != false {
		t.Errorf("scenario %v oom %v, want default and false", m["scenario"], m["oom"])
	}
}

const t4OOM = "--set model=resnet50 --set batch=4096 --set hardware.gpu=t4"

func TestRunResNet50Batch4096OnT4OOMs(t *testing.T) {
	m := runJSON(t, append([]string{"run"}, strings.Fields(t4OOM)...)...)
	if m["oom"] != true {
		t.Fatalf("oom = %v, want true", m["oom"])
	}
	msg, _ := m["oom_message"].(string)
	if !strings.HasPrefix(msg, "ResourceExhaustedError: OOM when allocating tensor with shape[") || !strings.Contains(msg, "by allocator GPU_0_bfc") {
		t.Errorf("oom_message = %q, want TF's ResourceExhaustedError text", msg)
	}
}

func TestRunGrowthOOMGrewInDoublingRegions(t *testing.T) {
	m := runJSON(t, append([]string{"run"}, append(strings.Fields(t4OOM), "--set", "memory.growth=true")...)...)
	if m["oom"] != true {
		t.Fatalf("oom = %v, want true with memory growth too", m["oom"])
	}
	growth := m["devices"].([]any)[0].(map[string]any)["pool_growth"].([]any)
	var regions []float64
	for _, g := range growth {
		regions = append(regions, g.(map[string]any)["region_bytes"].(float64))
	}
	if len(regions) < 4 || regions[0] != 2<<20 || regions[1] != 4<<20 || regions[2] != 8<<20 {
		t.Errorf("pool regions = %v, want 2 MiB, 4 MiB, 8 MiB, ... (doubling)", regions)
	}
}

func TestRunBatch32Fits(t *testing.T) {
	m := runJSON(t, "run", "--set", "model=resnet50", "--set", "batch=32", "--set", "hardware.gpu=t4", "--set", "steps=3")
	if m["oom"] != false {
		t.Errorf("batch 32 on a T4: oom = %v (%v), want false", m["oom"], m["oom_message"])
	}
}

func TestRunDeterministic(t *testing.T) {
	for _, format := range []string{"text", "json", "csv"} {
		args := []string{"run", "mirrored-4xa100", "--set", "steps=20", "-o", format}
		a, _, ca := runCLI(t, args...)
		b, _, cb := runCLI(t, args...)
		if ca != 0 || cb != 0 {
			t.Fatalf("exit codes %d %d", ca, cb)
		}
		if a != b {
			t.Errorf("two runs of %s printed different bytes", strings.Join(args, " "))
		}
	}
}

func TestRunBadScenarioExits2WithFileLine(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"unknown-key.yaml", "model: resnet50\nbatchsize: 32\n", "unknown-key.yaml:2: batchsize: unknown key"},
		{"wrong-type.yaml", "batch: 32\nxla: often\n", "wrong-type.yaml:2: xla: want true or false"},
		{"negative-batch.yaml", "model: resnet50\n\nbatch: -8\n", "negative-batch.yaml:3: batch: too small: -8 (at least 1)"},
		{"unknown-gpu.yaml", "hardware:\n  count: 1\n  gpu: gtx480\n", "unknown-gpu.yaml:3: hardware.gpu:"},
		{"unknown-model.yaml", "model: resnet5O\n", "unknown-model.yaml:1: model:"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, []byte(tc.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errs, code := runCLI(t, "run", path)
		if code != 2 {
			t.Errorf("gpusim run %s: exit %d, want 2", tc.name, code)
		}
		if !strings.Contains(errs, tc.want) {
			t.Errorf("gpusim run %s: stderr %q, want it to contain %q", tc.name, errs, tc.want)
		}
	}
	_, errs, code := runCLI(t, "run", "--set", "batch=-1")
	if code != 2 || !strings.Contains(errs, "--set batch=-1: batch:") {
		t.Errorf("run --set batch=-1: exit %d stderr %q, want 2 naming the --set", code, errs)
	}
	if _, _, code := runCLI(t, "run", "-o", "yaml"); code != 2 {
		t.Errorf("run -o yaml: exit %d, want 2", code)
	}
}

// TestRunHostFileDecodeRateExits2 checks that a host profile file setting decode_rate, which
// no host property prices (the decode is in input.map.cost_ms), stops the run with one line
// naming the file, line and key rather than being accepted without effect.
func TestRunHostFileDecodeRateExits2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.yaml")
	if err := os.WriteFile(path, []byte("base: h200-vm\ndecode_rate: 39e6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCLI(t, "run", "input-bound", "--set", "hardware.host.profile=@"+path, "--set", "steps=3")
	want := path + ":2: decode_rate: unknown key"
	if code != 2 || !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("run with decode_rate in the host file: exit %d, stderr %q; want 2 and one line containing %q", code, errs, want)
	}
}

// TestRunProfileFileCheckLine checks that a host or GPU profile file failing a check on a key
// it leaves unset stops the run with one line on the key it does set that needs the other.
func TestRunProfileFileCheckLine(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file, set, doc, want string
	}{
		{"host.yaml", "hardware.host.profile", "base: dgx-a100\ninterconnect: pcie\npcie_path: sys\n", ":3: pcie_path: sys needs inter_socket_bandwidth"},
		{"gpu.yaml", "hardware.gpu", "base: h200\nname: small\nmemory_bytes: 1000\n", ":3: memory_bytes: 1000: must be above context_bytes"},
	} {
		path := filepath.Join(dir, tc.file)
		if err := os.WriteFile(path, []byte(tc.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errs, code := runCLI(t, "run", "input-bound", "--set", tc.set+"=@"+path, "--set", "steps=3")
		want := path + tc.want
		if code != 2 || !strings.Contains(errs, want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("run with %s=@%s: exit %d, stderr %q; want 2 and one line containing %q", tc.set, tc.file, code, errs, want)
		}
	}
}

// TestRunUsageExamples runs every example of gpusim run --help.
func TestRunUsageExamples(t *testing.T) {
	t.Chdir(t.TempDir()) // the examples write plots and traces
	help, _, code := runCLI(t, "run", "--help")
	if code != 0 {
		t.Fatalf("run --help: exit %d", code)
	}
	for _, ex := range runExamples {
		if !strings.Contains(help, ex) {
			t.Errorf("run --help does not show example %q", ex)
		}
		args := strings.Fields(ex)[1:]
		if _, errs, code := runCLI(t, args...); code != 0 {
			t.Errorf("example %q: exit %d: %s", ex, code, errs)
		}
	}
	for _, f := range []string{"trace.json", "plots"} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("example did not write %s: %v", f, err)
		}
	}
	for _, k := range []string{"hardware.gpu", "memory.growth", "input.map.parallel_calls", "processes"} {
		if !strings.Contains(help, k) {
			t.Errorf("run --help does not list key %s", k)
		}
	}
}
