package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateExamples runs the usage examples. Those on the shipped sets read a copy of the
// repository's testdata whose DLE file keeps its first 12 rows (ResNet-50 on one and several
// GPUs): the whole of it takes minutes, and validate's TestShippedAccuracyTargets runs it.
func TestValidateExamples(t *testing.T) {
	data := trimmedTestdata(t, 12)
	for _, ex := range validateExamples {
		args := strings.Fields(ex)[1:]
		want := "dle 1-GPU"
		if strings.Contains(ex, "--data") {
			// A user's file and a plot folder: the file from the repository root, the plots
			// into a temporary folder.
			for i := range args {
				switch args[i-min(i, 1)] {
				case "--data":
					args[i] = filepath.Join("..", "..", args[i])
				case "--plot":
					args[i] = t.TempDir()
				}
			}
			want = "my-fleet 1-GPU"
		} else {
			args = append(args, "--data", data)
		}
		var out, errb bytes.Buffer
		if err := run(context.Background(), &out, &errb, args); err != nil {
			t.Fatalf("%s: %v\n%s", ex, err, errb.String())
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s: output has no %s figures:\n%s", ex, want, out.String())
		}
		if strings.Contains(ex, "json") {
			var doc struct {
				Groups   []struct{ Set string } `json:"groups"`
				Rows     []struct{ Ref string } `json:"rows"`
				Coverage []coverageJSON         `json:"interval_coverage"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Rows) < 12 {
				t.Errorf("%s: %d rows, err %v", ex, len(doc.Rows), err)
			}
			if len(doc.Coverage) == 0 || doc.Coverage[0].Quantity != "speed" || doc.Coverage[0].Set != "all" || doc.Coverage[0].N == 0 {
				t.Errorf("%s: interval_coverage %+v, want the speed rows' first", ex, doc.Coverage)
			}
		} else if !strings.Contains(out.String(), "Prediction intervals: ") {
			t.Errorf("%s: no interval coverage in the text:\n%s", ex, out.String())
		}
	}
}

// trimmedTestdata is a folder holding the repository's testdata/h200 and the first rows of
// its DLE file.
func trimmedTestdata(t *testing.T, rows int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "h200"), os.DirFS("../../testdata/h200")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../testdata/dle/dle_tf.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if err := os.MkdirAll(filepath.Join(dir, "dle"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dle", "dle_tf.csv"), []byte(strings.Join(lines[:rows+1], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
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

// TestValidateUserFile: gpusim validate --data FILE --plot DIR on the example a user could
// write (examples/my-fleet.csv, rows of NVIDIA's published tables): the per-GPU figures and a
// leave-one-GPU-out fold of its two GPUs, and a plot written as a PNG that decodes and an SVG.
func TestValidateUserFile(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"validate", "--data", "../../examples/my-fleet.csv", "--plot", dir}
	if err := run(context.Background(), &out, &errb, args); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, want := range []string{"my-fleet 1-GPU gpu a100-40gb 2", "my-fleet multi-GPU gpu v100-16gb 2", "leave-one-gpu-out v100-16gb 2 2"} {
		found := false
		for _, l := range strings.Split(out.String(), "\n") {
			found = found || strings.HasPrefix(strings.Join(strings.Fields(l), " "), want+" ")
		}
		if !found {
			t.Errorf("output has no row %q:\n%s", want, out.String())
		}
	}
	f, err := os.Open(filepath.Join(dir, "predicted-vs-measured.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() < 800 {
		t.Errorf("plot: %v, %v", img.Bounds(), err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "predicted-vs-measured.svg"))
	if err != nil || !bytes.Contains(svg, []byte("a100-40gb, several GPUs")) {
		t.Errorf("svg: %d bytes, %v, want the legend's a100-40gb, several GPUs entry", len(svg), err)
	}
}

// TestValidateBadUserFile: a measurement file with a bad cell is one line naming the file, the
// line and the column, exit 2, and no plot is written.
func TestValidateBadUserFile(t *testing.T) {
	good, err := os.ReadFile("../../examples/my-fleet.csv")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct{ name, data, want string }{
		{"bad gpu", strings.Replace(string(good), "v100-16gb", "v100-61gb", 1), "bad.csv:6: hardware.gpu: "},
		{"cut short", string(good[:len(good)-40]), "bad.csv:9: "},
	} {
		path := filepath.Join(dir, "bad.csv")
		if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		plots := filepath.Join(dir, "plots")
		var out, errb bytes.Buffer
		err := run(context.Background(), &out, &errb, []string{"validate", "--data", path, "--plot", plots})
		if exitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v (exit %d), want one line with %q, exit 2", tc.name, err, exitCode(err), tc.want)
		}
		if _, err := os.Stat(plots); err == nil {
			t.Errorf("%s: a plot folder was written for a bad file", tc.name)
		}
	}
}
