package models

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A truncated or garbled model file is an error on its line (in a .keras archive, its
// config.json's line), not a bare "unexpected EOF".
func TestLoadFileSyntaxErrorsNameTheLine(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "cnn.sequential.keras3.json"))
	if err != nil {
		t.Fatal(err)
	}
	cut := data[:700]
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("config.json")
	w.Write(cut)
	zw.Close()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
		want string // after the path
	}{
		{"cut.json", cut, ":39: keras json: truncated: the JSON ends early"},
		{"bad.json", []byte("{\"class_name\": \"Sequential\",\n \"config\": x}\n"), ":2: keras json: invalid character 'x' looking for beginning of value"},
		{"empty.json", nil, ":1: keras json: empty: no JSON value"},
		{"cut.keras", zb.Bytes(), ":config.json:39: keras json: truncated: the JSON ends early"},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadFile(p); err == nil || err.Error() != p+tc.want {
			t.Errorf("LoadFile(%s) = %v, want %q", tc.name, err, p+tc.want)
		}
	}
}
