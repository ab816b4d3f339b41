package allocator

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

// recordedTrace is a trace recorded on a real GPU with record_bfc_trace.py: its rows are the
// allocator's statistics as JAX reported them.
type recordedTrace struct {
	path    string
	growth  bool
	limit   int64
	rows    []string // data rows, header excluded
	numOOMs int
	hasPtr  bool // the recording has record_ptr.py's ptr column
}

func loadRecorded(t testing.TB, path string) recordedTrace {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// record_bfc_trace.py writes with Python csv, which ends lines with \r\n.
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n"), "\n")
	if lines[0] != ReplayHeader && lines[0] != ReplayHeaderPtr {
		t.Fatalf("%s: header %q, want %q or %q", path, lines[0], ReplayHeader, ReplayHeaderPtr)
	}
	rt := recordedTrace{path: path, rows: lines[1:], hasPtr: lines[0] == ReplayHeaderPtr}
	// The mode is in the name (record_bfc_trace.py: growth-*, prealloc*, probe-growth ...);
	// the limit is the bytes_limit column.
	base := filepath.Base(path)
	rt.growth = strings.Contains(base, "growth") || strings.HasPrefix(base, "limit")
	f := strings.Split(rt.rows[0], ",")
	rt.limit, err = strconv.ParseInt(f[strings.Count(ReplayHeader, ",")], 10, 64)
	if err != nil {
		t.Fatalf("%s: bytes_limit: %v", path, err)
	}
	for _, r := range rt.rows {
		if strings.Split(r, ",")[3] == "oom" {
			rt.numOOMs++
		}
	}
	return rt
}

func recordedTraces(t testing.TB) []string {
	paths, err := filepath.Glob("testdata/traces/*.csv")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no traces in testdata/traces: %v", err)
	}
	return paths
}

func replayLines(t testing.TB, path string, cfg ReplayConfig) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := ReadTrace(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteReplay(&out, tr, cfg); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines[1:]
}

// expectations says, per recorded trace and variant, how many rows must match exactly (-1 = all).
// Every trace in testdata/traces must be listed. Growth traces replay on classic BFC (spatial
// partitioning needs a fixed pool); preallocated ones on both, and JAX 0.11.2 turns out to use
// the spatial variant: classic diverges once the central gap runs short (prealloc-ties-a).
var expectations = map[string]map[Variant]int{
	"probe-growth.csv":     {Classic: -1},
	"growth-tiny-a.csv":    {Classic: -1},
	"growth-a.csv":         {Classic: -1},
	"growth-ties-a.csv":    {Classic: -1},
	"growth-small-b.csv":   {Classic: -1}, // 2,021 rows with the placement rule before the 4x rule (vaSpace)
	"probe-prealloc.csv":   {Classic: -1, XLASpatial: -1, XLASpatialExact: -1},
	"prealloc-a.csv":       {Classic: -1, XLASpatial: -1, XLASpatialExact: -1},
	"prealloc-small-a.csv": {Classic: -1, XLASpatial: -1, XLASpatialExact: -1},
	"prealloc-small-b.csv": {Classic: -1, XLASpatial: -1, XLASpatialExact: -1},
	"prealloc-ties-a.csv":  {Classic: 400, XLASpatial: -1, XLASpatialExact: 312}, // JAX 0.11.2 is xla-spatial
}

// TestReplayRecordedTraces replays every trace recorded on the real GPU and compares every
// column of every row; it logs how many rows matched.
func TestReplayRecordedTraces(t *testing.T) {
	for _, path := range recordedTraces(t) {
		rt := loadRecorded(t, path)
		want, ok := expectations[filepath.Base(path)]
		if !ok {
			t.Errorf("%s: no expectations: add it to the table", path)
			continue
		}
		for _, v := range []Variant{Classic, XLASpatial, XLASpatialExact} {
			minRows, ok := want[v]
			if !ok {
				continue
			}
			if minRows < 0 {
				minRows = len(rt.rows)
			}
			name := filepath.Base(path) + "/" + v.String()
			t.Run(name, func(t *testing.T) {
				got := replayLines(t, path, ReplayConfig{Growth: rt.growth, Limit: rt.limit, Variant: v})
				if len(got) != len(rt.rows) {
					t.Fatalf("replay gave %d rows, recorded %d", len(got), len(rt.rows))
				}
				matched, firstBad := 0, -1
				for i := range got {
					if got[i] == rt.rows[i] {
						matched++
					} else if firstBad < 0 {
						firstBad = i
					}
				}
				t.Logf("%s: %d/%d rows match exactly (%d OOMs); first difference at row %d", name, matched, len(got), rt.numOOMs, firstBad)
				if firstBad >= 0 && firstBad < minRows {
					t.Errorf("row %d (line %d) differs, want the first %d rows exact:\n got  %s\n want %s",
						firstBad, firstBad+2, minRows, got[firstBad], rt.rows[firstBad])
				}
			})
		}
	}
}

// TestReplayRecordedAddresses replays the growth traces recorded with buffer addresses
// (testdata/traces-ptr): with the driver's region placement taken from the ptr column, every
// column of every row must match, the simulated address of every buffer included.
func TestReplayRecordedAddresses(t *testing.T) {
	paths, err := filepath.Glob("testdata/traces-ptr/*.csv")
	if err != nil || len(paths) < 4 {
		t.Fatalf("want the 4 traces of testdata/traces-ptr, got %v (%v)", paths, err)
	}
	for _, path := range paths {
		rt := loadRecorded(t, path)
		t.Run(filepath.Base(path), func(t *testing.T) {
			if !rt.hasPtr || !rt.growth {
				t.Fatalf("%s: want a growth trace with a ptr column", path)
			}
			got := replayLines(t, path, ReplayConfig{Growth: true, Limit: rt.limit, WithPtr: true})
			if len(got) != len(rt.rows) {
				t.Fatalf("replay gave %d rows, recorded %d", len(got), len(rt.rows))
			}
			for i := range got {
				if got[i] != rt.rows[i] {
					t.Fatalf("row %d (line %d) differs:\n got  %s\n want %s", i, i+2, got[i], rt.rows[i])
				}
			}
			t.Logf("%d/%d rows match in every column, ptr included (%d OOMs)", len(got), len(rt.rows), rt.numOOMs)
		})
	}
}

// TestReplayPlacementModel replays the traces of testdata/traces-ptr without their addresses
// (IgnorePtr: regions placed by vaSpace, as in a simulation) and compares the statistics
// columns; it also counts the rows whose simulated address equals the recorded one (vaSpace
// reproduces the low range's addresses, not X, the high range's base).
func TestReplayPlacementModel(t *testing.T) {
	paths, _ := filepath.Glob("testdata/traces-ptr/*.csv")
	for _, path := range paths {
		rt := loadRecorded(t, path)
		t.Run(filepath.Base(path), func(t *testing.T) {
			got := replayLines(t, path, ReplayConfig{Growth: true, Limit: rt.limit, IgnorePtr: true, WithPtr: true})
			stats, ptrs := 0, 0
			for i := range got {
				g, w := strings.Split(got[i], ","), strings.Split(rt.rows[i], ",")
				if strings.Join(g[:len(g)-1], ",") != strings.Join(w[:len(w)-1], ",") {
					t.Fatalf("row %d (line %d) differs:\n got  %s\n want %s", i, i+2, got[i], rt.rows[i])
				}
				stats++
				if g[len(g)-1] == w[len(w)-1] {
					ptrs++
				}
			}
			t.Logf("%d/%d rows match in the statistics columns, %d in ptr too", stats, len(rt.rows), ptrs)
		})
	}
}
