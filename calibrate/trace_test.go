package calibrate

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A truncated, garbled or mistyped trace is one error line naming the file, the line and the
// key (not a bare "unexpected EOF"), and an endless input (/dev/zero) is refused in bounded
// time.
func TestLoadTraceErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "torch-resnet50-b64.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	if _, err := plain.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(b)
		w.Close()
		return buf.Bytes()
	}
	head := plain.Bytes()[:3000]
	tests := []struct {
		name string
		data []byte
		want string // after the file's path
	}{
		{"truncated json", head, ":165: truncated: the JSON ends early"},
		{"truncated json, gzipped", gz(head), ":165: truncated: the JSON ends early"},
		{"truncated gzip", good[:300], ": truncated: the gzip stream ends early"},
		{"truncated gzip header", good[:5], ": truncated: the gzip stream ends early"},
		{"garbage", []byte("garbage"), ":1: invalid character 'g' looking for beginning of value"},
		{"empty", nil, ":1: empty: no JSON value"},
		{"wrong type", bytes.Replace(plain.Bytes(), []byte(`"interval_ns": 50000000`), []byte(`"interval_ns": "abc"`), 1), ":11: interval_ns: want int64, got string"},
		{"no interval", bytes.Replace(plain.Bytes(), []byte(`"interval_ns": 50000000`), []byte(`"interval_ns": -5`), 1), ": interval_ns: -5: want a positive sampling interval"},
		{"samples out of order", swapSamples(t, plain.Bytes()), ": samples[1].t_ns: 534086, before samples[0]'s 51492041: want the samples in time order"},
		{"wrong version", bytes.Replace(plain.Bytes(), []byte(`"version": 1`), []byte(`"version": 7`), 1), ": version: 7, want 1"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		path := filepath.Join(dir, "t.json")
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadTrace(path)
		if want := path + tc.want; err == nil || err.Error() != want {
			t.Errorf("%s: LoadTrace = %v, want %q", tc.name, err, want)
		}
	}
	if _, err := LoadTrace("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero: not a regular file") {
		t.Errorf("LoadTrace(/dev/zero) = %v, want it refused as no regular file", err)
	}
}

// swapSamples is the trace data with its first two samples swapped.
func swapSamples(t *testing.T, data []byte) []byte {
	var tr Trace
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatal(err)
	}
	tr.Samples[0], tr.Samples[1] = tr.Samples[1], tr.Samples[0]
	var buf bytes.Buffer
	if err := tr.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
