package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpusim/gpusim"
	"github.com/gpusim/gpusim/validate"
)

// The copy of the shipped sets built into gpusim holds every measurement the repository's
// testdata holds, under the same refs: a file added there and not to the root package's
// go:embed lines fails here.
func TestValidateEmbeddedSetsMatchTestdata(t *testing.T) {
	embedded, err := validate.ReadShippedFS(gpusim.Testdata, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	disk, err := validate.ReadShipped(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	if len(embedded) != len(disk) {
		t.Fatalf("embedded sets: %d measurements, testdata: %d", len(embedded), len(disk))
	}
	for i := range disk {
		want := strings.TrimPrefix(disk[i].Ref, "../../")
		if embedded[i].Ref != want || embedded[i].Value != disk[i].Value || embedded[i].Set != disk[i].Set {
			t.Errorf("measurement %d: embedded %s %s %v, testdata %s %s %v", i, embedded[i].Set, embedded[i].Ref, embedded[i].Value, disk[i].Set, want, disk[i].Value)
		}
	}
}

// gpusim validate runs from a directory without testdata, and draws no progress on a stderr
// that is not a terminal.
func TestValidateFromAnyDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	var out, errb bytes.Buffer
	if err := run(context.Background(), &out, &errb, []string{"validate", "--set", "h200-jax", "-o", "json"}); err != nil {
		t.Fatalf("gpusim validate --set h200-jax outside the repository: %v\n%s", err, errb.String())
	}
	var v struct {
		Rows []struct {
			Ref string `json:"ref"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out.String())
	}
	if len(v.Rows) == 0 || !strings.HasPrefix(v.Rows[0].Ref, "testdata/h200/jax/steps.csv:") {
		t.Errorf("rows %v: want the embedded h200-jax rows, named by their repository path", v.Rows)
	}
	if errb.Len() != 0 {
		t.Errorf("stderr (not a terminal) = %q, want nothing", errb.String())
	}
}
