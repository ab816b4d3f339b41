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
	// The figures quoted are the ones printed, rounded to the digits quoted (TestDocs' rule).
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
		digits := 0
		if _, frac, ok := strings.Cut(m[1], "."); ok {
			digits = len(frac)
		}
		if math.Abs(quoted-q.got) > math.Pow10(-digits)/2 {
			t.Errorf("README.md quotes a %s of %v for its sample scenario; it simulates %.4g", q.what, quoted, q.got)
		}
	}
	// Without the notebook's growth its TensorFlow preallocates GPU 0, as the README says.
	noGrowth := strings.Replace(sample, "    memory: {growth: true}", "", 1)
	if noGrowth == sample {
		t.Fatal("the README's sample has no notebook memory: {growth: true} line to drop")
	}
	if err := os.WriteFile(path, []byte(noGrowth), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ = allocRun(t, "run", path)
	held := regexp.MustCompile(`process jupyter holds [0-9.]+GiB`).FindString(out)
	if held == "" || !strings.Contains(text, "("+"`"+held+"`)") || !strings.Contains(out, "Out of memory at step 1") {
		t.Errorf("without the notebook's growth the sample prints %q and OOM at step 1 = %v; README.md says otherwise", held, strings.Contains(out, "Out of memory at step 1"))
	}
	// "list devices: N GPU profiles"
	devs, _, _ := allocRun(t, "list", "devices", "-o", "json")
	var list []any
	if err := json.Unmarshal([]byte(devs), &list); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("list devices: %d GPU profiles", len(list)); !strings.Contains(text, want) {
		t.Errorf("README.md does not say %q", want)
	}
}
