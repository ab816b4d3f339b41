package main

import (
	"context"
	"errors"

	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gpusim/gpusim/scenarios"
)

// fuzzValues are the seeds of FuzzRunSet for each key type: the edges of every range
// (scenarios/limits.go), values past them and values of the wrong type.
var fuzzValues = map[string][]string{
	"int":          {"0", "-1", "2147483648", "9223372036854775807", "99999999999999999999", "1e300", "abc"},
	"int|autotune": {"autotune", "-1", "65536", "9223372036854775807", "1.5"},
	"float":        {"0", "-1e-300", "1e300", "1e-300", ".inf", ".nan", "[1]"},
	"bool":         {"true", "2", "{}"},
	"bool|number":  {"true", "128", "0", "-1", "1e400", ".nan", "{}"},
	"string":       {"", "@/dev/null", "@/nonexistent", strings.Repeat("x", 300), "[]"},
	"list":         {"[]", "[0, 0, 0]", "[-1]", "[9999999999999]", "7"},
	"map":          {"{}", "{TF_FORCE_GPU_ALLOW_GROWTH: 'true', CUDA_VISIBLE_DEVICES: '9'}", "[1]"},
}

// fuzzDeadline is each run's context deadline: the property is that a run ends within it
// (and a second), whatever the values. It stays under the fuzzing engine's 10 s, past which an
// input counts as hung: 6,555,536 input-bound steps are within steps' range and take minutes,
// bounded by the context (and by train.MaxEvents), not by the values.
const fuzzDeadline = 5 * time.Second

// FuzzRunSet runs gpusim run with one random --set value for a scenario key (key chosen by
// index, of the default or the input-bound scenario, on 2 steps unless the key is steps). No
// value may panic, run past its deadline or take more than maxFuzzHeap of memory; every
// error must be a usage error (exit 2, naming the --set) or a runtime one (exit 1).
// `go test` runs the seeds (each key's type's edge values); `go test -fuzz FuzzRunSet
// -fuzztime 5m ./cmd/gpusim` explores further.
func FuzzRunSet(f *testing.F) {
	keys := scenarios.Keys()
	for i, k := range keys {
		// Every seed value of the key's type, on both scenarios (most are rejected at once).
		for _, v := range fuzzValues[k[1]] {
			f.Add(uint8(i), false, v)
			f.Add(uint8(i), true, v)
		}
	}
	// HeapSys only grows: what tests before this one in the binary took (TestDocs runs the whole
	// gpusim validate) is the baseline, and a run may add at most maxFuzzHeap to it.
	runtime.GC()
	var m0 runtime.MemStats
	runtime.ReadMemStats(&m0)
	base := m0.HeapSys
	f.Fuzz(func(t *testing.T, key uint8, inputBound bool, value string) {
		k := keys[int(key)%len(keys)][0]
		args := []string{"run"}
		if inputBound {
			args = append(args, "input-bound")
		}
		args = append(args, "--set", "steps=2", "--set", k+"="+value, "-o", "json")
		ctx, cancel := context.WithTimeout(context.Background(), fuzzDeadline)
		defer cancel()
		t.Logf("gpusim %s", strings.Join(args, " "))
		start := time.Now()
		err := run(ctx, io.Discard, io.Discard, args)
		if d := time.Since(start); d > fuzzDeadline+time.Second {
			t.Errorf("gpusim %s: took %v, past its %v deadline", strings.Join(args, " "), d, fuzzDeadline)
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapSys > base+maxFuzzHeap {
			t.Errorf("gpusim %s: heap grew to %d MiB from %d", strings.Join(args, " "), m.HeapSys>>20, base>>20)
		}
		switch code := exitCode(err); {
		case err == nil:
		case errors.Is(err, context.DeadlineExceeded):
			t.Logf("gpusim %s: stopped at the deadline (bounded by the context)", strings.Join(args, " "))
		case code == 2 && !strings.Contains(err.Error(), k) && !strings.Contains(err.Error(), "--set") && !strings.Contains(err.Error(), "input-bound"):
			t.Errorf("gpusim %s: bad input %q names neither the key nor the --set", strings.Join(args, " "), err)
		case code != 1 && code != 2:
			t.Errorf("gpusim %s: exit %d (%v)", strings.Join(args, " "), code, err)
		}
	})
}

// maxFuzzHeap bounds the heap the fuzzed runs may reach: a 2-step run of the zoo's models on
// up to 256 GPUs takes a few hundred MiB.
const maxFuzzHeap = 2 << 30
