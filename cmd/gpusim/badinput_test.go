package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputOneLine feeds each file input of the CLI a malformed, truncated or out-of-range
// file and checks the project's standard: exit 2, one line naming the file (and line and key
// where the file has them), no output file left behind. Each case guards one way of breaking
// it: a panic's stack trace (a GPU profile's NaN or 1e-300 B/s), a read without end
// (/dev/zero as a host profile or a compare part), a truncated file read as "unexpected EOF"
// or not noticed at all, a step_time=0ms observation accepted.
func TestBadInputOneLine(t *testing.T) {
	gpu, err := os.ReadFile(filepath.Join("..", "..", "hw", "testdata", "v100-16gb.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dle, err := os.ReadFile(filepath.Join("..", "..", "testdata", "dle", "dle_tf.csv"))
	if err != nil {
		t.Fatal(err)
	}
	trace, err := os.ReadFile(filepath.Join("..", "..", "calibrate", "testdata", "torch-resnet50-b64.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	replace := func(b []byte, old, new string) string {
		if !bytes.Contains(b, []byte(old)) {
			t.Fatalf("%q not in the file", old)
		}
		return string(bytes.Replace(b, []byte(old), []byte(new), 1))
	}
	tests := []struct {
		name  string
		files map[string]string // written into DIR
		links map[string]string // DIR/key: a link to the repository's folder value
		args  []string          // DIR/ stands for the test's directory
		want  string            // the error, DIR/ removed, contains it
		out   string            // a file under DIR the command must not leave
	}{
		{"gpu profile NaN bandwidth", map[string]string{"g.yaml": replace(gpu, "mem_bandwidth: 9e+11", "mem_bandwidth: .nan")}, nil,
			[]string{"run", "--set", "steps=2", "--set", "hardware.gpu=@DIR/g.yaml", "--trace", "DIR/t.json"}, "g.yaml:9: mem_bandwidth: NaN: must be in", "t.json"},
		{"gpu profile tiny PCIe", map[string]string{"g.yaml": replace(gpu, "pcie_bandwidth: 1.575e+10", "pcie_bandwidth: 1e-300")}, nil,
			[]string{"run", "--set", "steps=2", "--set", "hardware.gpu=@DIR/g.yaml"}, "g.yaml:17: pcie_bandwidth: 1e-300: must be in", ""},
		{"gpu profile huge step overhead", map[string]string{"g.yaml": replace(gpu, "step_overhead: 0.0045", "step_overhead: 1e300")}, nil,
			[]string{"run", "--set", "steps=2", "--set", "hardware.gpu=@DIR/g.yaml"}, "g.yaml:21: step_overhead: 1e+300: must be in [0, 1] seconds", ""},
		{"gpu profile NaN kernel gap", map[string]string{"g.yaml": replace(gpu, "kernel_gap: 1e-06", "kernel_gap: .nan")}, nil,
			[]string{"run", "--set", "steps=2", "--set", "hardware.gpu=@DIR/g.yaml"}, "efficiency.kernel_gap: NaN: must be in [0, 1] seconds", ""},
		{"gpu profile 1e11 SMs", map[string]string{"g.yaml": replace(gpu, "sms: 80", "sms: 99999999999")}, nil,
			[]string{"run", "--set", "steps=2", "--set", "hardware.gpu=@DIR/g.yaml"}, "g.yaml:8: sms: 99999999999: must be in [1, 1024]", ""},
		{"host profile /dev/zero", nil, nil,
			[]string{"run", "--set", "steps=2", "--set", "hardware.host.profile=@/dev/zero"}, "/dev/zero: not a regular file (a character device)", ""},
		{"host profile 2e9 cores", map[string]string{"h.yaml": "base: dgx-a100\ncores: 2000000000\n"}, nil,
			[]string{"run", "--set", "steps=2", "--set", "hardware.host.profile=@DIR/h.yaml"}, "h.yaml:2: cores: 2000000000: want at most 8192", ""},
		{"scenario of two documents", map[string]string{"s.yaml": "batch: 64\nsteps: 2\n---\nbatch: 32\n"}, nil,
			[]string{"run", "DIR/s.yaml", "--trace", "DIR/t.json"}, "s.yaml:4: a second YAML document", "t.json"},
		{"scenario with two bad keys", map[string]string{"s.yaml": "precision: fp99\nmemory:\n  mode: weird\n"}, nil,
			[]string{"run", "DIR/s.yaml"}, `s.yaml:1: precision: "fp99" is not one of float32, mixed_float16, mixed_bfloat16 (and 1 more: DIR/s.yaml:3: memory.mode)`, ""},
		{"input.cache said twice", nil, nil,
			[]string{"run", "--set", "input.cache=bogus"}, `--set input.cache=bogus: input.cache: "bogus" is not one of none, memory, file`, ""},
		{"compare part truncated", map[string]string{"p.json": "{\"format\":\"gpusim-compare-part/1\",\n\"shard\": 0,"}, nil,
			[]string{"compare", "merge", "DIR/p.json", "--html", "DIR/r.html"}, "p.json:2: not a compare part: truncated: the JSON ends early", "r.html"},
		{"compare part unknown key", map[string]string{"p.json": "{\"format\":\"gpusim-compare-part/1\",\n\"shardd\": 0}\n"}, nil,
			[]string{"compare", "merge", "DIR/p.json"}, "p.json:2: shardd: not a compare part: unknown key", ""},
		{"compare part /dev/zero", nil, nil,
			[]string{"compare", "merge", "/dev/zero"}, "/dev/zero: not a regular file (a character device)", ""},
		{"calibrate trace truncated", map[string]string{"t.json.gz": string(trace[:len(trace)/2])}, nil,
			[]string{"calibrate", "fit", "DIR/t.json.gz", "--scenario", "../../calibrate/testdata/torch-h200.yaml", "--no-memory", "--profile-out", "DIR/p.yaml"},
			"t.json.gz: truncated: the gzip stream ends early", "p.yaml"},
		{"step_time=0ms", nil, nil,
			[]string{"calibrate", "fit", "step_time=0ms", "--scenario", "../../calibrate/testdata/keras-h200.yaml", "--no-memory", "--profile-out", "DIR/p.yaml"},
			"step_time=0ms: step time 0ms: want more than 0", "p.yaml"},
		{"step_time=abc", nil, nil,
			[]string{"calibrate", "fit", "step_time=abc", "--scenario", "../../calibrate/testdata/keras-h200.yaml", "--no-memory"},
			"step_time=abc: want a step time such as 33.7ms", ""},
		{"alloc trace /dev/zero", nil, nil,
			[]string{"alloc", "replay", "/dev/zero", "--mode", "growth", "--limit", "1GiB", "-o", "DIR/r.csv"}, "/dev/zero: not a regular file (a character device)", "r.csv"},
		{"validate data cut mid-row", map[string]string{"data/dle/dle_tf.csv": cutRow(dle, 3, 50)}, map[string]string{"data/h200": "testdata/h200"},
			[]string{"validate", "--data", "DIR/data", "--set", "dle"}, "data/dle/dle_tf.csv:4: commit: truncated row: 1 of the header's 34 fields", ""},
	}
	for _, tc := range tests {
		dir := t.TempDir()
		for name, data := range tc.files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for name, target := range tc.links {
			abs, err := filepath.Abs(filepath.Join("..", "..", target))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(abs, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		args := make([]string, len(tc.args))
		for i, a := range tc.args {
			args[i] = strings.ReplaceAll(a, "DIR/", dir+"/")
		}
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), &stdout, &stderr, args)
		msg := ""
		if err != nil {
			msg = strings.ReplaceAll(err.Error(), dir+"/", "")
		}
		switch {
		case err == nil:
			t.Errorf("%s: gpusim %s succeeded, want exit 2 saying %q", tc.name, strings.Join(tc.args, " "), tc.want)
		case exitCode(err) != 2 || strings.Contains(err.Error(), "\n") || !strings.Contains(msg, strings.ReplaceAll(tc.want, "DIR/", "")):
			t.Errorf("%s: gpusim %s: exit %d, error %q; want exit 2 and one line containing %q", tc.name, strings.Join(tc.args, " "), exitCode(err), msg, tc.want)
		}
		if tc.out != "" {
			if _, err := os.Stat(filepath.Join(dir, tc.out)); err == nil {
				t.Errorf("%s: left %s behind", tc.name, tc.out)
			}
		}
	}
}

// cutRow is data cut n bytes into its line after the first lines lines: a copy that stopped
// mid-row.
func cutRow(data []byte, lines, n int) string {
	off := 0
	for range lines {
		off += bytes.IndexByte(data[off:], '\n') + 1
	}
	return string(data[:off+n])
}
