package main

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// list models --file reads what model=@FILE reads: a .keras archive lists as its config.json
// does, and a truncated archive is one error line, exit 2.
func TestListModelsFileKerasArchive(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join("..", "..", "models", "testdata", "cnn.sequential.keras3.json"))
	if err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, err := zw.Create("config.json")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(cfg)
	zw.Close()
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	list := func(path string) (string, error) {
		var out bytes.Buffer
		err := run(context.Background(), &out, &bytes.Buffer{}, []string{"list", "models", "--file", path, "-o", "json"})
		return strings.ReplaceAll(out.String(), path, "FILE"), err
	}
	fromJSON, err := list(write("cnn.json", cfg))
	if err != nil {
		t.Fatal(err)
	}
	fromArchive, err := list(write("cnn.keras", zb.Bytes()))
	if err != nil {
		t.Fatalf("list models --file cnn.keras: %v", err)
	}
	if fromArchive != fromJSON {
		t.Errorf("the archive lists\n%s\nits config.json\n%s", fromArchive, fromJSON)
	}
	_, err = list(write("cut.keras", zb.Bytes()[:zb.Len()/2]))
	if err == nil || exitCode(err) != 2 || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "cut.keras: .keras archive: zip: not a valid zip file") {
		t.Errorf("list models --file of a truncated archive = %v (exit %d), want exit 2 and one line naming the file", err, exitCode(err))
	}
}
