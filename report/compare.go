package report

// This file holds the inputs of the comparison, plots, trace and HTML report (Run and the types
// it is made of) and the benchstat-style comparison table. The inputs are report's own small
// types so that rendering does not depend on how the simulator stores its results:
// compare_adapt.go fills them from a train.Result.

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gpusim/gpusim/internal/units"
)

// Units of RunMetric.Unit. They choose how a value is printed in text and HTML; JSON and CSV
// always carry the plain number in the unit named here.
const (
	UnitSeconds        = "s"         // printed as 212.3ms, 1.204s
	UnitBytes          = "B"         // printed in binary units: 3.07GiB
	UnitRatio          = "ratio"     // a fraction 0..1, printed as a percentage
	UnitSamplesPerSec  = "samples/s" // printed with an SI prefix: 2.345k samples/s
	UnitCount          = ""          // printed as an integer when whole
	UnitBatches        = "batches"   // input buffer fill, printed like a count
	UnitBytesPerSecond = "B/s"       // printed in decimal units: 371.2GB/s
)

// Run is one simulated configuration as the comparison, the plots, the trace and the HTML report
// see it. Fields a run does not have stay empty: a plot or row that needs them is skipped.
type Run struct {
	// Label names the configuration in column headings, legends and file names, such as
	// "memory.mode=growth" or the scenario name.
	Label string
	// Params are the varied keys and their values, in --vary order ("memory.mode" = "growth").
	Params []RunParam
	// OOM is true when the simulated training ran out of GPU memory (a result, not an error).
	OOM bool
	// OOMMessage is TF's message for the first OOM ("OOM when allocating tensor ...").
	OOMMessage string
	// Metrics in display order. A metric the run could not measure (throughput of a run that
	// OOMed before its first step) is left out; the table then shows OOM or n/a.
	Metrics []RunMetric
	// Memory has one series per GPU, in device order.
	Memory []MemorySeries
	// Utilization has one series per GPU: the fraction of time the GPU was busy (0..1).
	Utilization []TimeSeries
	// InputBuffer is the number of batches waiting in the tf.data prefetch buffer over time.
	InputBuffer TimeSeries
	// Breakdown is the mean step time split by category (forward, backward, all-reduce,
	// optimizer, input wait, ...), in display order.
	Breakdown []StepShare
	// Timeline holds the events of the Chrome trace; nil when the run recorded none.
	Timeline *Timeline
}

// RunParam is one varied scenario key and its value in a Run.
type RunParam struct{ Key, Value string }

// RunMetric is one measured number of a Run.
type RunMetric struct {
	// Key is the JSON and CSV name, as docs/design.md's JSON keys spell it ("step_time_s").
	Key string
	// Name is the row heading in text and HTML ("step time"); Key when empty.
	Name string
	// Unit is one of the Unit constants; it decides the text formatting.
	Unit  string
	Value float64
	// Interval is the value's 80% prediction interval (nil: none).
	Interval *[2]float64 `json:",omitempty"`
}

// MemorySeries is one GPU's memory over time.
type MemorySeries struct {
	Device string        // "GPU:0"
	Limit  int64         // the allocator's bytes_limit
	Points []MemoryPoint // in time order
	OOMs   []float64     // seconds since the start at which an allocation failed
}

// MemoryPoint is one sample of a MemorySeries.
type MemoryPoint struct {
	T     float64 // seconds since the start of the run
	InUse int64   // bytes_in_use
	Pool  int64   // pool_bytes (bytes the allocator holds from the device)
}

// TimeSeries is a named series of (time, value) points in time order.
type TimeSeries struct {
	Name   string // legend entry ("GPU:0")
	Unit   string // one of the Unit constants
	Points []TimePoint
}

// TimePoint is one sample of a TimeSeries.
type TimePoint struct{ T, V float64 }

// StepShare is the mean time per step spent in one category.
type StepShare struct {
	Category string
	Seconds  float64
}

// Metric looks up a metric by key.
func (r *Run) Metric(key string) (RunMetric, bool) {
	for _, m := range r.Metrics {
		if m.Key == key {
			return m, true
		}
	}
	return RunMetric{}, false
}

// Param returns the value of a varied key, or "" when the run does not vary it.
func (r *Run) Param(key string) string {
	for _, p := range r.Params {
		if p.Key == key {
			return p.Value
		}
	}
	return ""
}

// CompareTable is the benchstat-style comparison of several runs: one column per run, one row
// per metric, deltas against the first run (the base).
type CompareTable struct {
	Runs []CompareColumn
	Rows []CompareRow
}

// CompareColumn is one configuration of a CompareTable.
type CompareColumn struct {
	Label      string
	Params     []RunParam
	OOM        bool
	OOMMessage string
}

// CompareRow is one metric of a CompareTable, with one cell per column.
type CompareRow struct {
	Key, Name, Unit string
	Cells           []CompareCell
}

// CompareCell is one metric of one run.
type CompareCell struct {
	// Present is false when the run did not measure the metric (then Value is 0).
	Present bool
	Value   float64
	// OOM is true when the run ran out of memory; with Present false the cell reads "OOM".
	OOM bool
	// Delta is (Value - base) / base; HasDelta is false in the base column and where either
	// value is missing or the base alone is zero.
	Delta    float64
	HasDelta bool
	// Interval is the value's 80% prediction interval (nil: none).
	Interval *[2]float64
}

// Compare builds the comparison of runs; the first run is the base of the deltas. Rows follow
// the runs' own metric order, merged.
func Compare(runs []Run) *CompareTable {
	t := &CompareTable{}
	// Merge the runs' metric orders: a key first seen in a later run goes right after the key
	// that precedes it there, so an OOM base (memory rows only) does not push the speed rows
	// to the bottom.
	var keys []RunMetric
	for _, r := range runs {
		t.Runs = append(t.Runs, CompareColumn{Label: r.Label, Params: r.Params, OOM: r.OOM, OOMMessage: r.OOMMessage})
		at := 0 // insertion point: after the last known key of this run
		for _, m := range r.Metrics {
			if i := slices.IndexFunc(keys, func(k RunMetric) bool { return k.Key == m.Key }); i >= 0 {
				at = i + 1
				continue
			}
			keys = slices.Insert(keys, at, m)
			at++
		}
	}
	for _, k := range keys {
		row := CompareRow{Key: k.Key, Name: k.Name, Unit: k.Unit}
		if row.Name == "" {
			row.Name = k.Key
		}
		var base CompareCell
		for i := range runs {
			c := CompareCell{OOM: runs[i].OOM}
			if m, ok := runs[i].Metric(k.Key); ok {
				c.Present, c.Value, c.Interval = true, m.Value, m.Interval
			}
			if i == 0 {
				base = c
			} else if c.Present && base.Present {
				switch {
				case base.Value != 0:
					c.Delta, c.HasDelta = (c.Value-base.Value)/base.Value, true
				case c.Value == 0:
					c.HasDelta = true // 0 vs 0: unchanged
				}
			}
			row.Cells = append(row.Cells, c)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// cellText is a cell's value as text and HTML print it.
func (c CompareCell) cellText(unit string) string {
	switch {
	case c.Present:
		return FormatValue(c.Value, unit)
	case c.OOM:
		return "OOM"
	default:
		return "n/a"
	}
}

// deltaText is a cell's delta as text and HTML print it: "+1.27%", "~" when equal, "" for the
// base column and where there is no delta.
func (c CompareCell) deltaText() string {
	if !c.HasDelta {
		return ""
	}
	if math.Abs(c.Delta) < 0.00005 {
		return "~"
	}
	return fmt.Sprintf("%+.2f%%", c.Delta*100)
}

// textCells are the text table's row names and, per row and column, the value and delta
// text: the result row (ok or OOM) first, then each metric, with its 80% interval as a line of
// its own under it where a run has one ("  80% interval   84.46-97.36ms").
func (t *CompareTable) textCells() (names []string, vals, dels [][]string) {
	n := len(t.Runs)
	res := make([]string, n)
	for i, r := range t.Runs {
		res[i] = "ok"
		if r.OOM {
			res[i] = "OOM"
		}
	}
	names, vals, dels = []string{"result"}, [][]string{res}, [][]string{make([]string, n)}
	for _, row := range t.Rows {
		v, d := make([]string, n), make([]string, n)
		ivs, anyIv := make([]string, n), false
		for i, c := range row.Cells {
			v[i], d[i] = c.cellText(row.Unit), c.deltaText()
			if c.Present && c.Interval != nil {
				ivs[i], anyIv = strings.TrimPrefix(strings.TrimSuffix(intervalText(0.8, *c.Interval, row.Unit), ")"), " (80%: "), true
			}
		}
		vals, dels, names = append(vals, v), append(dels, d), append(names, row.Name)
		if anyIv {
			vals, dels, names = append(vals, ivs), append(dels, make([]string, n)), append(names, "  80% interval")
		}
	}
	return names, vals, dels
}

// WriteText writes the table the way benchstat does: a heading per configuration, each value
// followed (after the first column) by its change against the first column. Values end under
// the end of their label, deltas start under "vs base":
//
//	                   │ memory.mode=preallocate │ memory.mode=growth          │
//	                   │                         │                     vs base │
//	step time                            212.3ms              215.0ms  +1.27%
func (t *CompareTable) WriteText(w io.Writer) error {
	n := len(t.Runs)
	names, vals, dels := t.textCells()
	nameW := 0
	for _, s := range names {
		nameW = max(nameW, width(s))
	}
	valW := make([]int, n)
	delW := make([]int, n)
	for i := range n {
		for r := range vals {
			valW[i] = max(valW[i], width(vals[r][i]))
			delW[i] = max(delW[i], width(dels[r][i]))
		}
		if i > 0 {
			delW[i] = max(delW[i], width("vs base"))
		}
	}
	// A label sits right-aligned over its column's values (widening them when it is longer),
	// "vs base" over the deltas; the heading's bars stand in the three-blank gaps between the
	// columns of the rows below, so every heading cell spans exactly its value and delta.
	for i := range n {
		valW[i] = max(valW[i], width(t.Runs[i].Label))
	}
	var b strings.Builder
	pad := func(s string, w int, right bool) {
		gap := strings.Repeat(" ", max(0, w-width(s)))
		if right {
			b.WriteString(gap + s)
		} else {
			b.WriteString(s + gap)
		}
	}
	// line writes one line: the name column, then per column a separator, the value and, after
	// the base, the delta.
	line := func(name, sep string, val, del func(i int) string) error {
		pad(name, nameW, false)
		for i := range n {
			b.WriteString(sep)
			pad(val(i), valW[i], true)
			if i > 0 {
				b.WriteString("  ")
				pad(del(i), delW[i], false)
			}
		}
		if sep != "   " {
			b.WriteString(strings.TrimRight(sep, " "))
		}
		// Trailing blanks would make the golden file fragile in editors.
		text := strings.TrimRight(b.String(), " ") + "\n"
		b.Reset()
		if _, err := io.WriteString(w, text); err != nil {
			return fmt.Errorf("write comparison: %w", err)
		}
		return nil
	}
	none := func(int) string { return "" }
	if err := line("", " │ ", func(i int) string { return t.Runs[i].Label }, none); err != nil {
		return err
	}
	if err := line("", " │ ", none, func(int) string { return "vs base" }); err != nil {
		return err
	}
	for r := range vals {
		if err := line(names[r], "   ", func(i int) string { return vals[r][i] }, func(i int) string { return dels[r][i] }); err != nil {
			return err
		}
	}
	return t.writeOOMMessages(w)
}

// writeOOMMessages writes, after a blank line, each OOM run's message.
func (t *CompareTable) writeOOMMessages(w io.Writer) error {
	var b strings.Builder
	for _, r := range t.Runs {
		if r.OOM && r.OOMMessage != "" {
			fmt.Fprintf(&b, "\n%s: %s", r.Label, r.OOMMessage)
		}
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

// WriteTextWidth writes the table as WriteText does when its lines fit in width terminal
// columns (or width is 0: unknown, as in a pipe), and otherwise transposed
// (WriteTextTransposed): a 6-configuration sweep is about 330 columns wide side by side.
// The OOM messages after the table do not count: they wrap as the terminal likes either way.
func (t *CompareTable) WriteTextWidth(w io.Writer, width int) error {
	var wide bytes.Buffer
	if err := t.WriteText(&wide); err != nil {
		return err
	}
	// Two heading lines, the result row and one line per metric.
	lines := strings.SplitN(wide.String(), "\n", len(t.Rows)+4)
	for _, l := range lines[:min(len(lines), len(t.Rows)+3)] {
		if width > 0 && utf8.RuneCountInString(l) > width {
			return t.WriteTextTransposed(w)
		}
	}
	if _, err := w.Write(wide.Bytes()); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

// WriteTextTransposed writes the table with the configurations down the page: a block per
// configuration, its label then one line per metric with the value and (after the base) the
// change against the first configuration, so the width is that of one column:
//
//	memory.mode=preallocate (base)
//	  step time    212.3ms
//
//	memory.mode=growth
//	  step time    215.0ms  +1.27%
func (t *CompareTable) WriteTextTransposed(w io.Writer) error {
	names, vals, dels := t.textCells()
	nameW, valW := 0, 0
	for r := range names {
		nameW = max(nameW, width(names[r]))
		for i := range t.Runs {
			valW = max(valW, width(vals[r][i]))
		}
	}
	var b strings.Builder
	for i, run := range t.Runs {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(run.Label)
		if i == 0 {
			b.WriteString(" (base)")
		}
		b.WriteString("\n")
		for r := range names {
			line := fmt.Sprintf("  %-*s  %*s  %s", nameW, names[r], valW, vals[r][i], dels[r][i])
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return t.writeOOMMessages(w)
}

// width is the number of terminal columns of s (runes; the table uses no wide characters).
func width(s string) int { return utf8.RuneCountInString(s) }

// compareJSON is the shape of WriteJSON's output.
type compareJSON struct {
	Base    string              `json:"base"`
	Metrics []compareJSONMetric `json:"metrics"`
	Configs []compareJSONConfig `json:"configs"`
}

type compareJSONMetric struct {
	Key  string `json:"key"`
	Name string `json:"name"`
	Unit string `json:"unit"`
}

type compareJSONConfig struct {
	Label      string             `json:"label"`
	Params     map[string]string  `json:"params"`
	OOM        bool               `json:"oom"`
	OOMMessage string             `json:"oom_message"`
	Metrics    map[string]float64 `json:"metrics"`
	Delta      map[string]float64 `json:"delta_vs_base"`
	// Intervals are the metrics' 80% prediction intervals, "<metric>_interval": [low, high].
	Intervals map[string][2]float64 `json:"intervals,omitempty"`
}

// WriteJSON writes the table as one JSON object:
//
//	{"base": "<first label>",
//	 "metrics": [{"key": "step_time_s", "name": "step time", "unit": "s"}, ...],
//	 "configs": [{"label": ..., "params": {"memory.mode": "growth"}, "oom": false,
//	              "oom_message": "", "metrics": {"step_time_s": 0.215},
//	              "delta_vs_base": {"step_time_s": 0.0127},
//	              "intervals": {"step_time_s_interval": [0.201, 0.232]}}, ...]}
//
// Deltas are fractions (0.0127 = +1.27%). A metric a run did not measure is absent from its maps.
func (t *CompareTable) WriteJSON(w io.Writer) error {
	out := compareJSON{Metrics: []compareJSONMetric{}, Configs: []compareJSONConfig{}}
	if len(t.Runs) > 0 {
		out.Base = t.Runs[0].Label
	}
	for _, row := range t.Rows {
		out.Metrics = append(out.Metrics, compareJSONMetric{Key: row.Key, Name: row.Name, Unit: row.Unit})
	}
	for i, r := range t.Runs {
		c := compareJSONConfig{Label: r.Label, Params: map[string]string{}, OOM: r.OOM, OOMMessage: r.OOMMessage,
			Metrics: map[string]float64{}, Delta: map[string]float64{}}
		for _, p := range r.Params {
			c.Params[p.Key] = p.Value
		}
		for _, row := range t.Rows {
			cell := row.Cells[i]
			if cell.Present {
				c.Metrics[row.Key] = finite(cell.Value)
				if iv := cell.Interval; iv != nil {
					if c.Intervals == nil {
						c.Intervals = map[string][2]float64{}
					}
					c.Intervals[row.Key+"_interval"] = [2]float64{finite(iv[0]), finite(iv[1])}
				}
			}
			if cell.HasDelta {
				c.Delta[row.Key] = finite(cell.Delta)
			}
		}
		out.Configs = append(out.Configs, c)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write comparison json: %w", err)
	}
	return nil
}

// finite maps NaN and infinities (which JSON cannot carry) to 0. The simulator should never
// produce them; if it does, a number in the output is better than no output.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// WriteCSV writes the table in long form, one line per (configuration, metric):
//
//	configuration,<varied keys...>,metric,unit,value,delta_vs_base,oom
//
// value is empty where the run did not measure the metric; delta_vs_base is a fraction, empty
// in the base column.
func (t *CompareTable) WriteCSV(w io.Writer) error {
	var keys []string
	seen := map[string]bool{}
	for _, r := range t.Runs {
		for _, p := range r.Params {
			if !seen[p.Key] {
				seen[p.Key] = true
				keys = append(keys, p.Key)
			}
		}
	}
	cw := csv.NewWriter(w)
	header := append([]string{"configuration"}, keys...)
	header = append(header, "metric", "unit", "value", "delta_vs_base", "oom")
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("write comparison csv: %w", err)
	}
	for i, r := range t.Runs {
		params := map[string]string{}
		for _, p := range r.Params {
			params[p.Key] = p.Value
		}
		for _, row := range t.Rows {
			c := row.Cells[i]
			rec := []string{r.Label}
			for _, k := range keys {
				rec = append(rec, params[k])
			}
			val, del := "", ""
			if c.Present {
				val = strconv.FormatFloat(c.Value, 'g', -1, 64)
			}
			if c.HasDelta {
				del = strconv.FormatFloat(c.Delta, 'g', 6, 64)
			}
			rec = append(rec, row.Key, row.Unit, val, del, strconv.FormatBool(r.OOM))
			if err := cw.Write(rec); err != nil {
				return fmt.Errorf("write comparison csv: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write comparison csv: %w", err)
	}
	return nil
}

// FormatValue prints v in unit the way tables and plot labels show it: seconds as 212.3ms,
// bytes as 3.07GiB, ratios as 87.3%, rates with an SI prefix, counts as integers.
func FormatValue(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	switch unit {
	case UnitSeconds:
		return units.FormatSeconds(v)
	case UnitBytes:
		return FormatBytes(v)
	case UnitRatio:
		return strconv.FormatFloat(v*100, 'f', 1, 64) + "%"
	case UnitCount, UnitBatches:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatInt(int64(v), 10)
		}
		return sig4(v)
	case UnitBytesPerSecond:
		return si(v, 1000) + "B/s"
	default:
		return si(v, 1000) + " " + unit
	}
}

// FormatBytes prints a byte count in binary units with four significant digits: 3.070GiB.
func FormatBytes(v float64) string {
	a := math.Abs(v)
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for a >= 1024 && i < len(units)-1 {
		a /= 1024
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(v, 'f', 0, 64) + "B"
	}
	return sig4(v) + units[i]
}

// si prints v with four significant digits and a k, M, G or T prefix.
func si(v float64, base float64) string {
	a := math.Abs(v)
	prefixes := []string{"", "k", "M", "G", "T"}
	i := 0
	for a >= base && i < len(prefixes)-1 {
		a /= base
		v /= base
		i++
	}
	return sig4(v) + prefixes[i]
}

// sig4 prints v with four significant digits without an exponent: 212.3, 1.204, 0.01234.
// It is units.Sig4, which units.FormatSeconds (the seconds case of FormatValue) also uses.
func sig4(v float64) string { return units.Sig4(v) }
