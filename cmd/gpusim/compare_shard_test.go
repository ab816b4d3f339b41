package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareShardMergeEqualsUnsharded runs a real sweep (12 configurations: one GPU and two
// mirrored, float32 and mixed precision, three batches, one that runs out of memory) whole and
// as 4 shards, merges the parts and checks that every output is byte-identical: the table in
// each format, every figure and the HTML report.
func TestCompareShardMergeEqualsUnsharded(t *testing.T) {
	sweep := []string{"--vary", "batch=16,64,2048", "--vary", "precision=float32,mixed_float16", "--vary", "hardware.count=1,2",
		"--set", "strategy.name=mirrored", "--set", "steps=4", "--set", "hardware.gpu=t4"}
	dir := t.TempDir()
	compare := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(context.Background(), &out, &errb, append([]string{"compare"}, args...)); err != nil {
			t.Fatalf("gpusim compare %s: %v\n%s", strings.Join(args, " "), err, errb.String())
		}
		return out.String()
	}
	var parts []string
	for k := range 4 {
		// Shard 2 reads its index from a Kubernetes Indexed Job's environment, shard 3 from a
		// Slurm array's.
		var shard string
		switch k {
		case 2:
			t.Setenv("JOB_COMPLETION_INDEX", "2")
			shard = "4"
		case 3:
			os.Unsetenv("JOB_COMPLETION_INDEX")
			t.Setenv("SLURM_ARRAY_TASK_ID", "4")
			t.Setenv("SLURM_ARRAY_TASK_MIN", "1")
			t.Setenv("SLURM_ARRAY_TASK_COUNT", "4")
			shard = "auto"
		default:
			shard = []string{"0/4", "1/4"}[k]
		}
		p := filepath.Join(dir, "part-"+string(rune('0'+k))+".json")
		if err := os.WriteFile(p, []byte(compare(append(sweep, "--shard", shard)...)), 0o644); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	// Parts in any order.
	parts[0], parts[3] = parts[3], parts[0]
	for _, format := range []string{"text", "json", "csv"} {
		render := []string{"-o", format, "--plot", filepath.Join(dir, format, "plots"), "--html", filepath.Join(dir, format, "report.html")}
		whole := compare(append(sweep, render...)...)
		for _, f := range []string{"report.html"} {
			if err := os.Rename(filepath.Join(dir, format, f), filepath.Join(dir, format, "whole-"+f)); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Rename(filepath.Join(dir, format, "plots"), filepath.Join(dir, format, "whole-plots")); err != nil {
			t.Fatal(err)
		}
		merged := compare(append(append([]string{"merge"}, parts...), render...)...)
		if merged != whole {
			t.Errorf("-o %s: merged shards differ from the unsharded sweep:\n--- unsharded\n%s\n--- merged\n%s", format, whole, merged)
		}
		sameFile(t, filepath.Join(dir, format, "whole-report.html"), filepath.Join(dir, format, "report.html"))
		plots, _ := filepath.Glob(filepath.Join(dir, format, "whole-plots", "*"))
		if len(plots) == 0 {
			t.Fatalf("no plots written")
		}
		for _, p := range plots {
			sameFile(t, p, filepath.Join(dir, format, "plots", filepath.Base(p)))
		}
	}
	if !strings.Contains(compare(append(sweep, "-o", "csv")...), "true") {
		t.Error("no configuration of the sweep ran out of memory; the test wants one")
	}

	// A missing shard, a shard given twice and a part of another sweep are bad input.
	for _, tc := range []struct {
		name  string
		parts []string
		want  string
	}{
		{"missing", parts[:3], "missing"},
		{"twice", append(parts[:3:3], parts[0]), "given twice"},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), &out, &errb, append([]string{"compare", "merge"}, tc.parts...))
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("merge with a shard %s = %v (exit %d), want exit 2 saying %q", tc.name, err, exitCode(err), tc.want)
		}
	}
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(compare("--vary", "batch=8,16", "--set", "steps=2", "--shard", "0/4")), 0o644)
	var out, errb bytes.Buffer
	if err := run(context.Background(), &out, &errb, append([]string{"compare", "merge"}, append(parts[1:], other)...)); err == nil || !strings.Contains(err.Error(), "another sweep") {
		t.Errorf("merge with a part of another sweep = %v, want an error saying so", err)
	}
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Errorf("%s and %s differ", a, b)
	}
}
