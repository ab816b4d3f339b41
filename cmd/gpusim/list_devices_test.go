package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestListDevicesCatalog: the catalog's cards, their aliases and spec-sheet sources reach
// `gpusim list devices`, and a typed alias runs.
func TestListDevicesCatalog(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), &out, &errb, []string{"list", "devices", "-o", "json"}); err != nil {
		t.Fatal(err)
	}
	var devs []struct {
		Name    string   `json:"name"`
		Aliases []string `json:"aliases"`
		Source  string   `json:"source"`
	}
	if err := json.Unmarshal(out.Bytes(), &devs); err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, d := range devs {
		byName[d.Name] = i
		if d.Source == "" {
			t.Errorf("%s: no source", d.Name)
		}
	}
	for _, n := range []string{"rtx2080ti", "a100-pcie-40gb", "quadro-rtx8000", "l40s", "h100-nvl", "b200", "titan-v", "rtx5090"} {
		if _, ok := byName[n]; !ok {
			t.Errorf("list devices lacks %s", n)
		}
	}
	if d := devs[byName["rtx-a6000"]]; len(d.Aliases) == 0 || d.Aliases[0] != "a6000" || !strings.Contains(d.Source, "RTX A6000 datasheet") {
		t.Errorf("rtx-a6000 = %+v", d)
	}
	out.Reset()
	if err := run(context.Background(), &out, &errb, []string{"run", "--set", "hardware.gpu=RTX 2080 Ti", "--set", "steps=2", "-o", "json"}); err != nil {
		t.Fatalf("run on \"RTX 2080 Ti\": %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "2080 Ti") {
		t.Errorf("run on an alias: output names no RTX 2080 Ti:\n%.400s", out.String())
	}
}
