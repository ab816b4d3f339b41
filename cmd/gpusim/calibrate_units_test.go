package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"testing"
)

// calibrate prints durations the way gpusim run does (units.FormatSeconds: 583.9ms, 1.204s),
// not "%.6g s" or "%.1fs".
func TestCalibrateDurationUnits(t *testing.T) {
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	out := filepath.Join(t.TempDir(), "trace.json")
	_ = runCalibrate(ctx, &stdout, &stderr, []string{"record", "--interval", "1h", "-o", out, "--", "sh", "-c", "exit 0"}, openFake(&fakeGPUs{}))
	if re := regexp.MustCompile(`recorded \d+ samples and \d+ lines in \d+(\.\d+)?(ns|µs|ms|s) to `); !re.MatchString(stderr.String()) {
		t.Errorf("record's stderr = %q, want it to match %s", stderr.String(), re)
	}

	td := "../../calibrate/testdata/"
	stdout.Reset()
	args := []string{"fit", td + "torch-resnet50-b64.json.gz", "--scenario", td + "torch-h200.yaml", "--no-memory", "--max-runs", "10"}
	if err := runCalibrate(ctx, &stdout, &stdout, args, openFake(&fakeGPUs{})); err != nil {
		t.Fatalf("gpusim calibrate fit: %v\n%s", err, stdout.String())
	}
	if re := regexp.MustCompile(`step times \([^)]*\), median \d+(\.\d+)?ms\n`); !re.MatchString(stdout.String()) {
		t.Errorf("fit's text output:\n%s\nwant a line matching %s", stdout.String(), re)
	}
}
