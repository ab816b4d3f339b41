package scenarios

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/train"
)

// Every case of issue 16 that crashed, ran without end or blamed another key is now one line
// naming the --set (or file:line) and the key, and saying too large or too small.
func TestLimitsNameKeyAndBound(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"memory.limit_mib=1000000000000000", "--set memory.limit_mib=1000000000000000: memory.limit_mib: too large: 1000000000000000 (at most 16777216 MiB"},
		{"input.map.cost_ms=1e300", "input.map.cost_ms: too large: 1e300 (at most 60000 ms"},
		{"input.map.cost_ms=1e9", "input.map.cost_ms: too large: 1e9"},
		{"input.storage_bandwidth=1e-300", "input.storage_bandwidth: too small: 1e-300 (at least 100000 bytes/s)"},
		{"input.record_bytes=9223372036854775807", "input.record_bytes: too large: 9223372036854775807"},
		{"hardware.count=100000", "hardware.count: too large: 100000 (at most 256"},
		{"batch=100000", ""},
		{"batch=100000000", "batch: too large: 100000000"},
		{"steps=99999999999999999999999", "steps: too large: 99999999999999999999999"},
		{"steps=0", "steps: too small: 0 (at least 1)"},
		{"memory.fraction=1.5", "memory.fraction: too large: 1.5"},
		{"memory.logical_devices_mib=[1024, 0x1000000000]", "memory.logical_devices_mib[1]: too large: 0x1000000000"},
		{"processes=[{gpus: [0], used_mib: 99999999999}]", "processes[0].used_mib: too large: 99999999999"},
		{"processes=[{gpus: [0], memory: {limit_mib: 99999999999}}]", "processes[0].memory.limit_mib: too large"},
		{"tf.visible_devices=[" + strings.Repeat("0,", 300) + "0]", "tf.visible_devices: too long: 301 items"},
		{"optimizer=foo", "--set optimizer=foo: optimizer: unknown optimizer \"foo\""},
	} {
		s, err := Builtin("input-bound")
		if err != nil {
			t.Fatal(err)
		}
		err = s.SetAll([]string{tc.set})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("--set %s: %v, want no error", tc.set, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("--set %s: %v, want %q", tc.set, err, tc.want)
		}
	}
}

func TestLimitsInFileNameLine(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"model: resnet50\nmemory:\n  limit_mib: 1000000000000000\n", "x.yaml:3: memory.limit_mib: too large: 1000000000000000"},
		{"model: resnet50\ninput:\n  map:\n    cost_ms: -1\n", "x.yaml:4: input.map.cost_ms: too small: -1 (at least 0 ms)"},
		{"model: resnet50\noptimizer: foo\n", "x.yaml:2: optimizer: unknown optimizer"},
		{"model: resnet50\nprocesses:\n  - gpus: [0]\n    used_mib: 1\n  - gpus: [0, 300]\n", "x.yaml:5: processes[1].gpus[1]: too large: 300"},
	} {
		_, err := Parse("x.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// A key blamed for a cross-key problem is the one that causes it.
func TestAccumulationBlamesAccumulation(t *testing.T) {
	s, err := Builtin("default")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAll([]string{"accumulation_steps=1000"}); err != nil {
		t.Fatal(err)
	}
	_, err = train.Run(context.Background(), s.Config)
	var fe *train.FieldError
	if !errors.As(err, &fe) || fe.Field != "AccumulationSteps" {
		t.Errorf("accumulation_steps=1000 with batch 64: %v, want a FieldError on accumulation_steps", err)
	}
}

// Every numeric key has a limit: a key added to the schema without one fails here.
func TestEveryNumericKeyHasLimit(t *testing.T) {
	for _, f := range schema {
		switch f.typ {
		case "int", "float", "int|autotune":
			if _, ok := limits[f.path]; !ok {
				t.Errorf("key %s (%s) has no entry in limits", f.path, f.typ)
			}
		}
	}
}
