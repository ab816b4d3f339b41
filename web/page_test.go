package web

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/report"
	"github.com/gpusim/gpusim/scenarios"
)

// fetchRun runs a built-in through the server and decodes the answer.
func fetchRun(t *testing.T, base, name string, sets ...string) runResponse {
	t.Helper()
	code, body := get(t, runURL(base, name, sets...))
	if code != http.StatusOK {
		t.Fatalf("GET %s %v = %d %s", name, sets, code, body)
	}
	var r runResponse
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunThroughputIsTheCLIs checks the XLA lesson's figure: the page's run throughput is the
// "throughput (run)" row gpusim run prints, far below the median step's.
func TestRunThroughputIsTheCLIs(t *testing.T) {
	ts := newServer(t, Options{})
	r := fetchRun(t, ts.URL, "xla-recompile")
	sc, err := scenarios.Builtin("xla-recompile")
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	res, err := analysis.Run(context.Background(), sc.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.WriteResultText(&text, res); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`throughput \(run\)\s+([0-9.]+) samples/s`).FindStringSubmatch(text.String())
	if m == nil {
		t.Fatalf("gpusim run xla-recompile prints no run throughput:\n%s", text.String())
	}
	got := strconv.FormatFloat(r.RunThroughputSamplesPerS, 'f', 2, 64)
	if got != m[1] {
		t.Errorf("page's run throughput %s/s, gpusim run's %s/s", got, m[1])
	}
	if r.Result.XLACompiles < 2 || r.RunThroughputSamplesPerS > r.Result.ThroughputSamplesPerS/10 {
		t.Errorf("%d compiles, run %.1f/s vs median step %.1f/s: want the compiles to dominate", r.Result.XLACompiles, r.RunThroughputSamplesPerS, r.Result.ThroughputSamplesPerS)
	}
}

// TestSharesAndRegionsAtTheOOM checks what the memory chart and the region bars draw for the
// Jupyter lesson: the kernel's pool on GPU 0 as the run reports it, and the pool at the OOM
// chunk by chunk with the bytes asked for.
func TestSharesAndRegionsAtTheOOM(t *testing.T) {
	ts := newServer(t, Options{})
	r := fetchRun(t, ts.URL, "jupyter-second-process")
	if !r.Result.OOM {
		t.Fatal("jupyter-second-process fits")
	}
	want := []Share{{GPU: 0, Name: "jupyter", Bytes: r.Result.Processes[0].PoolBytes[0]}}
	if !reflect.DeepEqual(r.Shares, want) {
		t.Errorf("shares %+v, want %+v", r.Shares, want)
	}
	if r.OOMWaitS <= 0 || r.OOMWaitS > r.Result.OOMDetail.TimeS {
		t.Errorf("OOM wait %.3fs at %.3fs, want the BFC retry before the failure", r.OOMWaitS, r.Result.OOMDetail.TimeS)
	}
	g := r.Regions
	if g == nil {
		t.Fatal("no regions")
	}
	// The allocator's layout is the dump's: same regions, same chunk sizes and states.
	parsed := ParseRegions(r.Result.OOMDetail.Log)
	var waste int64
	for i, reg := range g.Regions {
		if reg.Size != parsed.Regions[i].Size || len(reg.Chunks) != len(parsed.Regions[i].Chunks) {
			t.Fatalf("region %d: %d bytes in %d chunks, the dump says %d in %d", i, reg.Size, len(reg.Chunks), parsed.Regions[i].Size, len(parsed.Regions[i].Chunks))
		}
		for j, c := range reg.Chunks {
			p := parsed.Regions[i].Chunks[j]
			if c.Size != p.Size || c.InUse != p.InUse || c.InUse != (c.Requested > 0) || c.Requested > c.Size {
				t.Errorf("region %d chunk %d = %+v, the dump says %+v", i, j, c, p)
			}
			if c.InUse {
				waste += c.Size - c.Requested
			}
		}
	}
	if g.InUse != parsed.InUse || g.Free != parsed.Free || g.LargestFree != parsed.LargestFree || g.Waste != waste || g.Occupancy != parsed.Occupancy {
		t.Errorf("totals %d/%d/%d waste %d, the dump's %d/%d/%d and the chunks' waste %d", g.InUse, g.Free, g.LargestFree, g.Waste, parsed.InUse, parsed.Free, parsed.LargestFree, waste)
	}
	// The waste is what RenderOccupancy marks 'x': within one of its 100 cells per region.
	pool := g.InUse + g.Free
	if x := int64(strings.Count(g.Occupancy, "x")); abs(x*pool/100-g.Waste) > pool/100*int64(len(g.Regions)+1) {
		t.Errorf("waste %d bytes, occupancy map has %d of 100 cells 'x' (pool %d)", g.Waste, x, pool)
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestProcessesValueRoundTrips checks the other-processes control: each built-in's processes,
// written as the control's value, set the same processes again, and each preset is written
// as processesValue writes it (so a scenario that has it shows it selected).
func TestProcessesValueRoundTrips(t *testing.T) {
	for _, name := range scenarios.Names() {
		sc, err := scenarios.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		v := settings(&sc.Config)["processes"]
		again, err := scenario(name, []string{"processes=" + v})
		if err != nil {
			t.Errorf("%s: --set processes=%s: %v", name, v, err)
			continue
		}
		if !reflect.DeepEqual(again.Config.Processes, sc.Config.Processes) {
			t.Errorf("%s: processes=%s sets %+v, want %+v", name, v, again.Config.Processes, sc.Config.Processes)
		}
	}
	for _, p := range processPresets {
		sc, err := scenario("default", []string{"processes=" + p[0]})
		if err != nil {
			t.Errorf("preset %s: %v", p[0], err)
			continue
		}
		if got := processesValue(sc.Config.Processes); got != p[0] {
			t.Errorf("preset %s is written back as %s", p[0], got)
		}
	}
	sc, _ := scenarios.Builtin("jupyter-second-process")
	if got, want := processesValue(sc.Config.Processes), processPresets[1][0]; got != want {
		t.Errorf("jupyter-second-process's processes %s, want the preset %s", got, want)
	}
}

// TestLessonsQuotePitfalls checks that each lesson's pitfall and "what gpusim shows" read as
// docs/pitfalls.md's table has them (code spans as plain text): the handout and the screen
// say the same, and a figure the table is made to agree with the tool (cmd/gpusim's doc
// test) is the page's too.
func TestLessonsQuotePitfalls(t *testing.T) {
	data, err := os.ReadFile("../docs/pitfalls.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][2]string{}
	tick := regexp.MustCompile("`([a-z0-9-]+)`")
	for _, line := range strings.Split(string(data), "\n") {
		cols := strings.Split(line, " | ")
		if len(cols) != 4 || !strings.HasPrefix(line, "| ") {
			continue
		}
		plain := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(strings.Trim(s, "| "), "`", "")) }
		for _, m := range tick.FindAllStringSubmatch(cols[2], -1) {
			rows[m[1]] = [2]string{plain(cols[1]), plain(cols[3])}
		}
	}
	for _, l := range lessons {
		row, ok := rows[l.Scenario]
		if !ok {
			t.Errorf("lesson %s: no row in docs/pitfalls.md's table", l.Scenario)
			continue
		}
		if l.Pitfall != row[0] || l.Shows != row[1] {
			t.Errorf("lesson %s:\n  pitfall %q\n  shows   %q\ndocs/pitfalls.md:\n  pitfall %q\n  shows   %q", l.Scenario, l.Pitfall, l.Shows, row[0], row[1])
		}
	}
}
