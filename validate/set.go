package validate

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/internal/suggest"
	"github.com/gpusim/gpusim/scenarios"
)

// A measurement-set file is a CSV table, one measurement a row (examples/my-fleet.csv,
// testdata/dle/dle_tf.csv). Its columns:
//
//   - metric and value (required): the observed figure; metric is throughput (samples/s over
//     all GPUs), step_time (seconds), run_mean (a whole run's mean throughput) or
//     time_to_train (seconds), the last two with run_steps, the run's optimizer updates.
//   - scenario keys (model is required): any key of gpusim run --help (hardware.gpu, batch,
//     precision, xla, ...), one column each; an empty cell leaves the key at its default.
//   - set: more overrides as --set text, "key=value; key=value", applied after the key
//     columns; set_reason says why (read by people, not by gpusim).
//   - provenance (where the figure comes from), source (the set's name; default the file's
//     name), label (the row's own name for its precision; default the precision key),
//     framework_version (what ran it), note.
//
// Any other column is the file's own provenance and is kept out of the run, unless its name
// looks like a misspelled scenario key (a dot, a key's last part, or within two edits of a
// key), which is an error: a typo must not run the defaults silently.
var setColumns = map[string]bool{
	"metric": true, "value": true, "run_steps": true, "set": true, "set_reason": true,
	"provenance": true, "source": true, "label": true, "framework_version": true, "note": true,
}

// ReadSet reads a measurement-set file. An error names the file, line and column.
func ReadSet(path string) ([]Measurement, error) { return readSet(diskFiles, path) }

func readSet(open files, path string) ([]Measurement, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseSet(path, f)
}

// ParseSet reads a measurement set from r; path names it in errors and refs.
func ParseSet(path string, r io.Reader) ([]Measurement, error) {
	t, err := parseTable(path, r, "metric", "value", "model")
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, h := range t.header {
		h = strings.TrimSpace(h)
		switch {
		case setColumns[h]:
		case scenarios.IsKey(h):
			keys = append(keys, h)
		default:
			if near := misspelledKey(h); near != "" {
				return nil, fmt.Errorf("%s:1: %s: not a scenario key or a column of a measurement set (did you mean %s?)", path, h, near)
			}
		}
	}
	source := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var out []Measurement
	for i := range t.rows {
		m, err := setRow(t, i, keys, source)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// setRow is row i of a measurement-set table.
func setRow(t *table, i int, keys []string, source string) (Measurement, error) {
	m := Measurement{Source: source, Ref: t.ref(i), Table: true, Label: t.get(i, "label"),
		Framework: t.get(i, "framework_version"), Note: t.get(i, "note")}
	if s := t.get(i, "source"); s != "" {
		m.Source = s
	}
	if p := t.get(i, "provenance"); p != "" {
		m.Ref += " (" + p + ")"
		m.Version = p
	} else {
		m.Version = m.Source
	}
	m.Metric = Metric(t.get(i, "metric"))
	if !knownMetric(m.Metric) {
		return m, t.errorf(i, "metric", "%q: want throughput, step_time, run_mean or time_to_train", m.Metric)
	}
	var err error
	if m.Value, err = t.float(i, "value"); err != nil {
		return m, err
	}
	if m.Metric == RunMean || m.Metric == TimeToTrain {
		if m.RunSteps, err = t.int(i, "run_steps"); err != nil {
			return m, err
		}
	} else if t.get(i, "run_steps") != "" {
		return m, t.errorf(i, "run_steps", "only a run_mean or time_to_train figure has a run length")
	}
	for _, k := range keys {
		if v := t.get(i, k); v != "" {
			m.Overrides = append(m.Overrides, k+"="+v)
		}
	}
	nKeys := len(m.Overrides)
	for _, kv := range strings.Split(t.get(i, "set"), ";") {
		if kv = strings.TrimSpace(kv); kv != "" {
			m.Overrides = append(m.Overrides, kv)
		}
	}
	if err := m.build(); err != nil {
		return m, t.overrideError(i, m.Overrides, nKeys, err)
	}
	if m.Label == "" {
		m.Label = m.Precision()
	}
	m.Set = m.Source + " 1-GPU"
	if m.GPUs() > 1 {
		m.Set = m.Source + " multi-GPU"
	}
	return m, nil
}

// overrideError names the column of the override that err is about: a key column, or set
// with the override itself.
func (t *table) overrideError(i int, overrides []string, nKeys int, err error) error {
	var se *scenarios.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("%s:%d: %v", t.path, t.line(i), err)
	}
	for j, kv := range overrides {
		if se.Place != "--set "+kv {
			continue
		}
		if j < nKeys {
			return t.errorf(i, se.Field, "%v", se.Err)
		}
		return t.errorf(i, "set", "%s: %s: %v", kv, se.Field, se.Err)
	}
	// A check across keys (Check) names the key; the place is the row.
	return t.errorf(i, se.Field, "%v", se.Err)
}

func knownMetric(m Metric) bool {
	for _, k := range metrics {
		if m == k {
			return true
		}
	}
	return false
}

// misspelledKey returns the scenario key that column name h probably meant, or "".
func misspelledKey(h string) string {
	best, bestD := "", 3
	for _, k := range scenarios.Keys() {
		key := k[0]
		last := key[strings.LastIndex(key, ".")+1:]
		if h == last {
			return key
		}
		if d := suggest.Distance(h, key); d < bestD {
			best, bestD = key, d
		}
	}
	if best == "" && strings.Contains(h, ".") {
		return "a key of gpusim run --help"
	}
	return best
}

// formatFloat writes v so that a scenario key reads it back exactly.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
