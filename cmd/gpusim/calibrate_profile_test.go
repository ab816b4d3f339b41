package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gzipped compresses b.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// A corrupt or truncated profile is one error line naming the file, exit 2, before any
// simulation.
func TestCalibrateFitBadProfile(t *testing.T) {
	dir := t.TempDir()
	// An XSpace whose first plane claims 200 bytes and holds 4; the same gzipped and cut
	// before its trailer; a Chrome trace cut mid-event; a gzip stream of text.
	cut := append([]byte{0x0a, 0xc8, 0x01}, "\x12\x02ab"...)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"host.xplane.pb", cut, "not a valid XSpace (truncated or corrupt)"},
		{"host.xplane.pb.gz", gzipped(bytes.Repeat(cut, 400))[:60], "truncated"},
		{"host.trace.json.gz", gzipped([]byte(`{"traceEvents":[{"ph":"X","pid":1,`)), "not a valid Chrome trace (truncated)"},
		{"notes.xplane.pb.gz", gzipped([]byte("these are not protobuf bytes\n")), "not a valid XSpace"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"calibrate", "fit", path + ":batch=128", "--scenario", "../../calibrate/testdata/keras-h200.yaml"}
		var stderr bytes.Buffer
		err := run(context.Background(), io.Discard, &stderr, args)
		if code := exitCode(err); code != 2 {
			t.Errorf("gpusim %s: exit %d (%v), want 2", strings.Join(args, " "), code, err)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, path+": ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
			t.Errorf("gpusim calibrate fit %s: error %q, want one line naming the file and saying %q", tc.name, msg, tc.want)
		}
	}
}

// calibrate fit --help shows the profile form.
func TestCalibrateFitHelpShowsProfile(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, io.Discard, []string{"calibrate", "fit", "--help"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gpusim calibrate fit PROFILE[:key=value,...]", "HOST.xplane.pb", "HOST.trace.json", "--no-profile-step"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("calibrate fit --help lacks %q", want)
		}
	}
}
