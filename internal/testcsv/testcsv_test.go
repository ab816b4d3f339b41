package testcsv

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(p, []byte("model,batch\nresnet50,64\n\"bert, base\",8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	col, rows := Read(t, p)
	if want := map[string]int{"model": 0, "batch": 1}; !reflect.DeepEqual(col, want) {
		t.Errorf("col = %v, want %v", col, want)
	}
	if want := [][]string{{"resnet50", "64"}, {"bert, base", "8"}}; !reflect.DeepEqual(rows, want) {
		t.Errorf("rows = %v, want %v", rows, want)
	}
}

// A .gz file is the same table read through gzip.
func TestReadGzip(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte("load,sm_mhz\nresnet50,1980\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "a.csv.gz")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	col, rows := Read(t, p)
	if col["sm_mhz"] != 1 || !reflect.DeepEqual(rows, [][]string{{"resnet50", "1980"}}) {
		t.Errorf("col %v, rows %v: want the gunzipped table", col, rows)
	}
}
