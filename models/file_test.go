package models

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Get("@file") builds the model of a Keras JSON file or of a .keras archive's config.json,
// the same model FromKerasJSON builds.
func TestGetFile(t *testing.T) {
	src := filepath.Join("testdata", "cnn.sequential.keras3.json")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	want, err := FromKerasJSON(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "cnn.keras")
	out, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	for name, body := range map[string]string{"metadata.json": `{"keras_version": "3.3.3"}`, "config.json": string(data)} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out.Close()
	for _, p := range []string{src, archive} {
		m, err := Get("@" + p)
		if err != nil {
			t.Fatalf("Get(@%s): %v", p, err)
		}
		if m.Params != want.Params || len(m.Layers) != len(want.Layers) {
			t.Errorf("Get(@%s): %d params, %d layers; want %d, %d", p, m.Params, len(m.Layers), want.Params, len(want.Layers))
		}
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(t.TempDir(), "missing.json"), "no such file"},
		{filepath.Join("testdata", "README.md"), "keras json"},
	} {
		if _, err := Get("@" + tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Get(@%s) = %v, want an error containing %q", tc.path, err, tc.want)
		}
	}
}
