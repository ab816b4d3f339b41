package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
	// The figures quoted may lag the cost model by a few percent (they are prose, refreshed by
	// hand); the fit and the skipped updates must hold exactly.
	text := string(readme)
	if !strings.Contains(text, fmt.Sprintf("%d of 100 updates", res.Skipped)) {
		t.Errorf("README.md does not say %q about its sample scenario", fmt.Sprintf("%d of 100 updates", res.Skipped))
	}
	for _, q := range []struct {
		re   string
		got  float64
		what string
	}{{`\(([0-9.]+) ms a step`, 1e3 * res.StepTime, "step time (ms)"}, {`ms a step, ([0-9,]+) samples/s`, res.Throughput, "throughput"}} {
		m := regexp.MustCompile(q.re).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("README.md quotes no %s of its sample scenario (%s)", q.what, q.re)
			continue
		}
		quoted, _ := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		if math.Abs(quoted-q.got) > 0.05*q.got {
			t.Errorf("README.md quotes a %s of %v for its sample scenario; it simulates %.4g", q.what, quoted, q.got)
		}
	}
}
