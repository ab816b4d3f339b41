// Package testcsv reads, for tests, the CSV tables under testdata/ (recordings and
// calibration data): a header row naming the columns, then the data rows. A file whose name
// ends in .gz is read through gzip, as the larger recordings are kept.
package testcsv

import (
	"compress/gzip"
	"encoding/csv"
	"io"
	"os"
	"strings"
	"testing"
)

// Read returns the column index of each header name (the last, where a name repeats) and the
// rows after the header. A file that cannot be opened or parsed, or has no header, fails t.
func Read(t testing.TB, path string) (col map[string]int, rows [][]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		r = zr
	}
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(recs) == 0 {
		t.Fatalf("%s: no header row", path)
	}
	col = map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	return col, recs[1:]
}
