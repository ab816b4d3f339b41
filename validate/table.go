package validate

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// table is a CSV file read with its header, for errors that name the file, line and column.
type table struct {
	path   string
	header []string
	col    map[string]int
	rows   [][]string
	lines  []int // each row's line in the file
}

func readTable(open files, path string, need ...string) (*table, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseTable(path, f, need...)
}

// maxTableBytes bounds a measurement CSV: the shipped ones are under 100 kB.
const maxTableBytes = 256 << 20

// parseTable parses a measurement CSV. A file cut short is refused on the line where it
// stops, whichever way it was cut: mid-header or mid-row (a row without the header's fields,
// named by the first column it lacks), mid-value (no newline at the end: every recording
// tools/ writes ends its last row with one), or right after the header (no rows: the whole
// set would vanish from the report).
func parseTable(path string, r io.Reader, need ...string) (*table, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t, err := readRecords(path, data)
	if err != nil {
		return nil, err
	}
	for i, h := range t.header {
		h = strings.TrimSpace(h)
		if j, dup := t.col[h]; dup {
			return nil, fmt.Errorf("%s:1: %s: column %d repeats column %d", path, h, i+1, j+1)
		}
		t.col[h] = i
	}
	for _, k := range need {
		if _, ok := t.col[k]; !ok {
			return nil, fmt.Errorf("%s:1: %s: missing column", path, k)
		}
	}
	if last := bytes.Count(data, []byte("\n")) + 1; data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("%s:%d: no newline at the end: the file is cut short", path, last)
	}
	if len(t.rows) == 0 {
		return nil, fmt.Errorf("%s:2: no rows after the header: the file is cut short", path)
	}
	return t, nil
}

// readRecords splits data into the header and the rows, each row with its line, every row
// with the header's fields.
func readRecords(path string, data []byte) (*table, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	t := &table{path: path, col: map[string]int{}}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s:%d: column %d: %w", path, pe.Line, pe.Column, pe.Err)
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if t.header == nil {
			t.header = rec
			continue
		}
		line, _ := cr.FieldPos(0)
		// Every row has the header's fields: a file cut short (a copy that stopped mid-row)
		// would otherwise lose its last row's trailing columns, read as empty, without a word.
		if n := len(t.header); len(rec) < n {
			return nil, fmt.Errorf("%s:%d: %s: truncated row: %d of the header's %d fields", path, line, t.header[len(rec)], len(rec), n)
		} else if len(rec) > n {
			return nil, fmt.Errorf("%s:%d: %d fields, more than the header's %d", path, line, len(rec), n)
		}
		t.rows = append(t.rows, rec)
		t.lines = append(t.lines, line)
	}
	if t.header == nil {
		return nil, fmt.Errorf("%s:1: no header: the file is empty", path)
	}
	return t, nil
}

// get returns row i's value of column k ("" when absent).
func (t *table) get(i int, k string) string {
	j, ok := t.col[k]
	if !ok || j >= len(t.rows[i]) {
		return ""
	}
	return strings.TrimSpace(t.rows[i][j])
}

func (t *table) line(i int) int { return t.lines[i] }

func (t *table) ref(i int) string { return fmt.Sprintf("%s:%d", filepath.ToSlash(t.path), t.line(i)) }

// errorf is an error at row i, column k.
func (t *table) errorf(i int, k, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", t.path, t.line(i), k, fmt.Sprintf(format, args...))
}

func (t *table) float(i int, k string) (float64, error) {
	v, err := strconv.ParseFloat(t.get(i, k), 64)
	if err != nil || !(v > 0) {
		return 0, t.errorf(i, k, "%q is not a positive number", t.get(i, k))
	}
	return v, nil
}

func (t *table) int(i int, k string) (int, error) {
	v, err := strconv.Atoi(t.get(i, k))
	if err != nil || v <= 0 {
		return 0, t.errorf(i, k, "%q is not a positive integer", t.get(i, k))
	}
	return v, nil
}
