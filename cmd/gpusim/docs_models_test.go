package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocsModelsTable: docs/models.md's zoo table quotes the parameter counts and forward
// FLOPs gpusim list models prints: counts exactly, GFLOPs rounded to the digits quoted, and
// every zoo model has its row.
func TestDocsModelsTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "models.md"))
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := allocRun(t, "list", "models", "-o", "json")
	if code != 0 {
		t.Fatalf("list models -o json: exit %d: %s", code, stderr)
	}
	var zoo []struct {
		Name      string  `json:"name"`
		Params    int64   `json:"params"`
		Trainable int64   `json:"trainable_params"`
		FLOPs     float64 `json:"flops_per_sample"`
	}
	if err := json.Unmarshal([]byte(out), &zoo); err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9.-]+)` \\| [^|]+ \\| ([0-9,]+)(?: / ([0-9,]+))? \\| ([0-9.]+) \\|$")
	rows := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		rows[m[1]] = m
	}
	num := func(s string) int64 { v, _ := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64); return v }
	for _, z := range zoo {
		m, ok := rows[z.Name]
		if !ok {
			t.Errorf("docs/models.md has no table row for %s", z.Name)
			continue
		}
		if num(m[2]) != z.Params || (m[3] != "" && num(m[3]) != z.Trainable) {
			t.Errorf("docs/models.md: %s params %s / %s, gpusim prints %d / %d", z.Name, m[2], m[3], z.Params, z.Trainable)
		}
		quoted, _ := strconv.ParseFloat(m[4], 64)
		digits := 0
		if _, frac, ok := strings.Cut(m[4], "."); ok {
			digits = len(frac)
		}
		if got := z.FLOPs / 1e9; math.Abs(got-quoted) > math.Pow10(-digits)/2*(1+1e-9) {
			t.Errorf("docs/models.md: %s forward %s GFLOPs/sample, gpusim prints %.4g", z.Name, m[4], got)
		}
	}
}
