package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The -update flag rewrites golden files. Another test file of this package may register it
// too (as a package-level variable, which runs before init), so register only when absent.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// golden compares got with testdata/name, rewriting the file under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updating() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

// constructedRuns is a memory-mode comparison built by hand: preallocate, growth (slightly
// slower, smaller pool) and a limit that runs out of memory before the first step.
func constructedRuns() []Run {
	const gib = 1 << 30
	mk := func(mode string, step, util float64, peak, pool, limit int64, oom bool) Run {
		r := Run{Label: "memory.mode=" + mode, Params: []RunParam{{"memory.mode", mode}}, OOM: oom}
		if oom {
			r.OOMMessage = "OOM when allocating tensor with shape[256,64,112,112] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"
		} else {
			r.Metrics = append(r.Metrics,
				RunMetric{Key: "step_time_s", Name: "step time", Unit: UnitSeconds, Value: step},
				RunMetric{Key: "throughput_samples_per_s", Name: "throughput", Unit: UnitSamplesPerSec, Value: 256 / step},
				RunMetric{Key: "gpu_utilization", Name: "GPU utilization", Unit: UnitRatio, Value: util},
				RunMetric{Key: "input_stall_fraction", Name: "input stall", Unit: UnitRatio, Value: 0.02},
				RunMetric{Key: "skipped_steps", Name: "skipped steps", Unit: UnitCount, Value: 0},
			)
		}
		r.Metrics = append(r.Metrics,
			RunMetric{Key: "peak_bytes_in_use", Name: "peak memory in use", Unit: UnitBytes, Value: float64(peak)},
			RunMetric{Key: "peak_pool_bytes", Name: "peak pool", Unit: UnitBytes, Value: float64(pool)},
			RunMetric{Key: "bytes_limit", Name: "memory limit", Unit: UnitBytes, Value: float64(limit)},
		)
		return r
	}
	return []Run{
		mk("preallocate", 0.2123, 0.93, 21*gib+gib/3, 38*gib, 38*gib, false),
		mk("growth", 0.2150, 0.918, 21*gib+gib/3, 24*gib, 38*gib, false),
		mk("limit", 0, 0, 7*gib+gib/2, 8*gib, 8*gib, true),
	}
}

func TestCompareText(t *testing.T) {
	var buf bytes.Buffer
	if err := Compare(constructedRuns()).WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare-constructed.txt", buf.Bytes())
}

func TestCompareJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := Compare(constructedRuns()).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare-constructed.json", buf.Bytes())
	var got compareJSON
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("WriteJSON output does not parse: %v", err)
	}
	if got.Base != "memory.mode=preallocate" {
		t.Errorf("base = %q, want memory.mode=preallocate", got.Base)
	}
	if _, ok := got.Configs[2].Metrics["step_time_s"]; ok || !got.Configs[2].OOM {
		t.Errorf("OOM config: metrics %v oom %v, want no step_time_s and oom true", got.Configs[2].Metrics, got.Configs[2].OOM)
	}
	if d, want := got.Configs[1].Delta["step_time_s"], (0.2150-0.2123)/0.2123; math.Abs(d-want) > 1e-12 {
		t.Errorf("growth step_time_s delta = %v, want %v", d, want)
	}
}

func TestCompareCSV(t *testing.T) {
	var buf bytes.Buffer
	if err := Compare(constructedRuns()).WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare-constructed.csv", buf.Bytes())
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// 2 runs x 8 metrics + 1 OOM run x 8 rows (missing ones with empty values) + header.
	if got, want := len(recs), 1+3*8; got != want {
		t.Errorf("csv rows = %d, want %d", got, want)
	}
}

func TestCompareCells(t *testing.T) {
	runs := []Run{
		{Label: "a", Metrics: []RunMetric{{Key: "x", Value: 2}, {Key: "z", Value: 0}}},
		{Label: "b", Metrics: []RunMetric{{Key: "x", Value: 3}, {Key: "y", Value: 1}, {Key: "z", Value: 5}}},
		{Label: "c", OOM: true, Metrics: []RunMetric{{Key: "x", Value: 2}}},
	}
	tab := Compare(runs)
	var got []string
	for _, row := range tab.Rows {
		for _, c := range row.Cells {
			got = append(got, row.Key+":"+c.cellText(row.Unit)+":"+c.deltaText())
		}
	}
	want := []string{
		"x:2:", "x:3:+50.00%", "x:2:~",
		// y, first seen in b between x and z, goes between them.
		"y:n/a:", "y:1:", "y:OOM:",
		"z:0:", "z:5:", "z:OOM:",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compare cells (-want +got):\n%s", diff)
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    float64
		unit string
		want string
	}{
		{0.2123, UnitSeconds, "212.3ms"},
		{1.2044, UnitSeconds, "1.204s"},
		{0.00004, UnitSeconds, "40.00µs"},
		{0.99999, UnitSeconds, "1000ms"},
		{3.07 * (1 << 30), UnitBytes, "3.070GiB"},
		{512, UnitBytes, "512B"},
		{0.873, UnitRatio, "87.3%"},
		{2345.6, UnitSamplesPerSec, "2.346k samples/s"},
		{3, UnitCount, "3"},
		{2.5, UnitCount, "2.500"},
		{371.2e9, UnitBytesPerSecond, "371.2GB/s"},
	}
	for _, tt := range tests {
		if got := FormatValue(tt.v, tt.unit); got != tt.want {
			t.Errorf("FormatValue(%v, %q) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
}
