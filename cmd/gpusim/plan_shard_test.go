package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// planShardArgs is the search the shard tests split: the docs' throughput search, whose top
// plans tie (preallocate and growth), so the ranking's tie-break crosses shards.
var planShardArgs = []string{"plan", "resnet50-a100", "--goal", "throughput", "--top", "3"}

// samePlanAnswer checks that merged, the text plan merge printed for shards parts, is whole,
// the unsharded search's text, byte for byte except the two lines of the search's counts:
// there the points searched, outside the range and pruned by memory and budget are the same,
// " in N shards" is added, and the roofline, compute and simulated counts (each shard's work,
// summed) cover the same points.
func samePlanAnswer(t *testing.T, whole, merged string, shards int) {
	t.Helper()
	wl, ml := strings.Split(whole, "\n"), strings.Split(merged, "\n")
	if len(wl) != len(ml) {
		t.Fatalf("merged shards print %d lines, the unsharded search %d:\n--- unsharded\n%s\n--- merged\n%s", len(ml), len(wl), whole, merged)
	}
	work := -1
	for i := range wl {
		if strings.HasPrefix(wl[i], "  searched ") {
			work = i
		}
		if wl[i] != ml[i] && i != work && i != work+1 {
			t.Errorf("line %d: merged %q, unsharded %q", i+1, ml[i], wl[i])
		}
	}
	if work < 0 {
		t.Fatalf("no 'searched' line in:\n%s", whole)
	}
	in := fmt.Sprintf(" in %d shards:", shards)
	if got := strings.Replace(ml[work], in, ":", 1); got != wl[work] || !strings.Contains(ml[work], in) {
		t.Errorf("merged %q, want %q with%q", ml[work], wl[work], in)
	}
	covered := func(line string) int {
		var r, c, s, inf int
		if _, err := fmt.Sscanf(line, "  %d by the roofline bound, %d by the compute bound; %d simulated (%d do", &r, &c, &s, &inf); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		return r + c + s
	}
	if w, m := covered(wl[work+1]), covered(ml[work+1]); w != m {
		t.Errorf("merged: %d points pruned or simulated, the unsharded search %d", m, w)
	}
}

// TestPlanShardMergeEqualsUnsharded splits a plan search into 4 shards (two given as K/N, one
// as a Kubernetes index, one as a Slurm task), merges the parts in another order and checks
// the text and the JSON against the unsharded search's.
func TestPlanShardMergeEqualsUnsharded(t *testing.T) {
	dir := t.TempDir()
	plan := func(args ...string) string {
		t.Helper()
		out, errs, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("gpusim %s: exit %d: %s", strings.Join(args, " "), code, errs)
		}
		return out
	}
	var parts []string
	for k := range 4 {
		shard := []string{"0/4", "1/4", "4", "auto"}[k]
		switch k {
		case 2:
			t.Setenv("JOB_COMPLETION_INDEX", "2")
		case 3:
			os.Unsetenv("JOB_COMPLETION_INDEX")
			t.Setenv("SLURM_ARRAY_TASK_ID", "4")
			t.Setenv("SLURM_ARRAY_TASK_MIN", "1")
			t.Setenv("SLURM_ARRAY_TASK_COUNT", "4")
		}
		p := filepath.Join(dir, fmt.Sprintf("part-%d.json", k))
		if err := os.WriteFile(p, []byte(plan(append(planShardArgs, "-j", "1", "--shard", shard)...)), 0o644); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	parts[0], parts[3] = parts[3], parts[0]
	merge := append([]string{"plan", "merge"}, parts...)
	samePlanAnswer(t, plan(append(planShardArgs, "--show", "2")...), plan(append(merge, "--show", "2")...), 4)

	var whole, merged map[string]any
	for _, x := range []struct {
		args []string
		v    *map[string]any
	}{{append(planShardArgs, "-o", "json"), &whole}, {append(merge, "-o", "json"), &merged}} {
		if err := json.Unmarshal([]byte(plan(x.args...)), x.v); err != nil {
			t.Fatal(err)
		}
	}
	if merged["shards"] != 4.0 {
		t.Errorf("merged JSON: shards %v, want 4", merged["shards"])
	}
	for _, k := range []string{"pruned_roofline", "pruned_compute", "simulated", "infeasible", "shards"} {
		delete(whole, k)
		delete(merged, k)
	}
	if !reflect.DeepEqual(whole, merged) {
		a, _ := json.MarshalIndent(whole, "", " ")
		b, _ := json.MarshalIndent(merged, "", " ")
		t.Errorf("merged JSON differs from the unsharded search's beyond the search's counts:\n%s\n---\n%s", a, b)
	}
}

// TestPlanMergeBadInput: parts of another search, a shard given twice or missing, a compare
// part and a render flag given to a shard exit 2 with one line that says which.
func TestPlanMergeBadInput(t *testing.T) {
	dir := t.TempDir()
	part := func(name string, args ...string) string {
		out, errs, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("gpusim %v: exit %d: %s", args, code, errs)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a0 := part("a0.json", append(planShardArgs, "--shard", "0/2")...)
	a1 := part("a1.json", append(planShardArgs, "--shard", "1/2")...)
	b1 := part("b1.json", append(planShardArgs, "--top", "2", "--shard", "1/2")...)
	cmp := part("compare.json", "compare", "--vary", "batch=16,32", "--set", "steps=2", "--shard", "0/1")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "merge", a0, b1}, "b1.json: from another search"},
		{[]string{"plan", "merge", a0, a0, a1}, "shard 0/2 given twice"},
		{[]string{"plan", "merge", a1}, "shard 0/2 missing"},
		{[]string{"plan", "merge", cmp}, "compare.json"},
		{[]string{"plan", "merge"}, "no parts given"},
		{[]string{"plan", "merge", a0, a1, "-o", "csv"}, "-o \"csv\""},
		{append(planShardArgs, "--shard", "0/2", "--show", "2"), "give --show to 'gpusim plan merge'"},
		{append(planShardArgs, "--shard", "2/2"), "--shard: shard 2/2: index must be in 0..1"},
	} {
		_, errs, code := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("gpusim %v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args[1:], code, errs, tc.want)
		}
	}
}
