package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's sample scenario runs as the README says: it fits, with the step time,
// throughput and skipped updates quoted next to it (it ran out of memory without a word).
func TestReadmeSampleScenario(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```yaml\n")
	sample, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no ```yaml block")
	}
	path := filepath.Join(t.TempDir(), "sample.yaml")
	if err := os.WriteFile(path, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := allocRun(t, "run", path, "-o", "json")
	if code != 0 {
		t.Fatalf("run README sample: exit %d: %s", code, stderr)
	}
	var res struct {
		OOM        bool    `json:"oom"`
		StepTime   float64 `json:"step_time_s"`
		Throughput float64 `json:"throughput_samples_per_s"`
		Skipped    int     `json:"skipped_steps"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.OOM {
		t.Fatal("the README's sample scenario runs out of memory")
	}
	for _, claim := range []string{
		fmt.Sprintf("%.1f ms a step", 1e3*res.StepTime),
		fmt.Sprintf("%s samples/s", thousands(int(res.Throughput+0.5))),
		fmt.Sprintf("%d of 100 updates", res.Skipped),
	} {
		if !strings.Contains(string(readme), claim) {
			t.Errorf("README.md does not say %q about its sample scenario", claim)
		}
	}
}

// thousands writes n with comma separators (3721 -> 3,721).
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
