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
}

func loadRecorded(t testing.TB, path string) recordedTrace {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// record_bfc_trace.py writes with Python csv, which ends lines with \r\n.
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n"), "\n")
	if lines[0] != ReplayHeader {
		t.Fatalf("%s: header %q, want %q", path, lines[0], ReplayHeader)
	}
	rt := recordedTrace{path: path, rows: lines[1:]}
	// The mode is in the name (record_bfc_trace.py: growth-*, prealloc*, probe-growth ...);
	// the limit is the bytes_limit column.
	base := filepath.Base(path)
	rt.growth = strings.Contains(base, "growth") || strings.HasPrefix(base, "limit")
	f := strings.Split(rt.rows[0], ",")
	rt.limit, err = strconv.ParseInt(f[len(f)-1], 10, 64)
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

// TestReplayRecordedTraces replays every trace recorded on the real GPU and compares every
// column of every row. Growth traces use classic BFC; preallocated ones must match both the
// classic and the XLA spatial variant.
func TestReplayRecordedTraces(t *testing.T) {
	for _, path := range recordedTraces(t) {
		rt := loadRecorded(t, path)
		variants := []Variant{Classic}
		if !rt.growth {
			variants = []Variant{Classic, XLASpatial}
		}
		for _, v := range variants {
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
				t.Logf("%s: %d/%d rows match exactly (%d OOMs)", name, matched, len(got), rt.numOOMs)
				if firstBad >= 0 {
					t.Errorf("row %d (line %d):\n got  %s\n want %s", firstBad, firstBad+2, got[firstBad], rt.rows[firstBad])
				}
			})
		}
	}
}
